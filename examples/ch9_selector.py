"""JMS 2.0 §9.3.2: only receive technology stocks, with the selector ``StockSector = 'Technology'``.

    python examples/ch9_selector.py [--url amqp://host:5672]
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

from amqp_jms import ConnectionFactory, Queue, TextMessage


@contextlib.contextmanager
def broker_url(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def main(url: str | None = None) -> list[str]:
    sectors = {"IBM": "Technology", "BANK": "Financial", "ORCL": "Technology", "CAT": "Manufacturing"}
    with broker_url(url) as where, ConnectionFactory(where).create_connection() as connection:
        session = connection.create_session()
        stock_queue = Queue("StockSource.sectors")
        producer = session.create_producer(stock_queue)
        for stock, sector in sectors.items():
            message = session.create_text_message()
            message.set_text(f"{stock} quote")
            message.set_string_property("StockSector", sector)
            producer.send(message)
        selector = "(StockSector = 'Technology')"
        receiver = session.create_consumer(stock_queue, selector)
        connection.start()
        got: list[str] = []
        while (m := receiver.receive(500)) is not None:
            assert isinstance(m, TextMessage)
            got.append(m.get_text() or "")
        for text in got:
            print(f"technology quote: {text}")
        return got


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url")
    main(ap.parse_args().url)
