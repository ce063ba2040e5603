"""JMS 2.0 §9.1–9.2: prepare, send a TextMessage, receive it synchronously, unpack it.

    python examples/ch9_send_receive.py [--url amqp://host:5672]

Without ``--url`` an embedded broker is started for the run.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

from amqp_jms import ConnectionFactory, Queue, Session, TextMessage


@contextlib.contextmanager
def broker_url(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def main(url: str | None = None) -> str:
    with broker_url(url) as where:
        # 9.1.1 getting a ConnectionFactory (no JNDI: built from a URL)
        connection_factory = ConnectionFactory(where)
        # 9.1.2 getting a Destination
        stock_queue = Queue("StockSource")
        # 9.1.3 creating a Connection
        with connection_factory.create_connection() as connection:
            # 9.1.4 creating a Session
            session = connection.create_session(False, Session.AUTO_ACKNOWLEDGE)
            # 9.1.5 creating a MessageProducer
            sender = session.create_producer(stock_queue)
            # 9.1.6 creating a MessageConsumer
            receiver = session.create_consumer(stock_queue)
            # 9.1.7 starting message delivery
            connection.start()
            # 9.1.8 using a TextMessage
            stock_data = "IBM 143.25"
            message = session.create_text_message()
            message.set_text(stock_data)
            # 9.2.1 sending a message
            sender.send(message)
            # 9.2.2 receiving a message synchronously
            stock_message = receiver.receive()
            # 9.2.3 unpacking a TextMessage
            assert isinstance(stock_message, TextMessage)
            new_stock_data = stock_message.get_text() or ""
            print(f"received: {new_stock_data}")
            return new_stock_data


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url")
    main(ap.parse_args().url)
