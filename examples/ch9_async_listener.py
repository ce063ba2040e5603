"""JMS 2.0 §9.3.1: receive messages asynchronously with a MessageListener.

    python examples/ch9_async_listener.py [--url amqp://host:5672]
"""

from __future__ import annotations

import argparse
import contextlib
import threading
from collections.abc import Iterator

from amqp_jms import ConnectionFactory, Message, Queue, Session, TextMessage


@contextlib.contextmanager
def broker_url(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


class StockListener:
    """The MessageListener of §9.3.1: unpacks each quote as it arrives (on the session thread)."""

    def __init__(self, expected: int) -> None:
        self.quotes: list[str] = []
        self.done = threading.Event()
        self.expected = expected

    def on_message(self, message: Message) -> None:
        assert isinstance(message, TextMessage)
        new_stock_data = message.get_text() or ""
        if new_stock_data:
            self.quotes.append(new_stock_data)
        if len(self.quotes) == self.expected:
            self.done.set()


def main(url: str | None = None) -> list[str]:
    quotes = ["IBM 143.25", "ACME 12.50", "INIT 1.01"]
    with broker_url(url) as where, ConnectionFactory(where).create_connection() as connection:
        session = connection.create_session(False, Session.AUTO_ACKNOWLEDGE)
        stock_queue = Queue("StockSource.async")
        receiver = session.create_consumer(stock_queue)
        my_listener = StockListener(len(quotes))
        receiver.set_message_listener(my_listener)
        connection.start()  # delivery to the listener begins
        sender = connection.create_session().create_producer(stock_queue)
        for q in quotes:
            sender.send(session.create_text_message(q))
        if not my_listener.done.wait(10):
            raise SystemExit("the listener did not get every quote")
        for q in my_listener.quotes:
            print(f"listener got: {q}")
        return my_listener.quotes


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url")
    main(ap.parse_args().url)
