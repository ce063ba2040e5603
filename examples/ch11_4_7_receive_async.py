"""JMS 2.0 11.4.7: receiving messages asynchronously with a MessageListener (Java SE).

The listener runs on the session's dispatcher thread; the simplified API needs no ``start()``.
"""

from __future__ import annotations

import sys

from ch11_common import MyListener, run

from amqp_jms import ConnectionFactory, Queue, Session


def receive_messages_old(connection_factory: ConnectionFactory, inbound_queue: Queue, n: int) -> list[str]:
    with connection_factory.create_connection() as connection:
        session = connection.create_session(Session.AUTO_ACKNOWLEDGE)
        consumer = session.create_consumer(inbound_queue)
        message_listener = MyListener(expect=n)
        consumer.set_message_listener(message_listener)
        connection.start()
        message_listener.done.wait(10)  # wait for messages to be received
        return message_listener.texts


def receive_messages_new(connection_factory: ConnectionFactory, inbound_queue: Queue, n: int) -> list[str]:
    with connection_factory.create_context() as context:
        consumer = context.create_consumer(inbound_queue)
        message_listener = MyListener(expect=n)
        consumer.set_message_listener(message_listener)
        message_listener.done.wait(10)
        return message_listener.texts


def demo(url: str) -> list[list[str]]:
    """Two messages for each form."""
    cf = ConnectionFactory(url)
    q = Queue("jms/inboundQueue")
    with cf.create_context() as ctx:
        p = ctx.create_producer()
        for body in ("a", "b"):
            p.send(q, body)
        old = receive_messages_old(cf, q, 2)
        for body in ("c", "d"):
            p.send(q, body)
    return [old, receive_messages_new(cf, q, 2)]


if __name__ == "__main__":
    sys.exit(run(demo))
