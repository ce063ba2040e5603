"""JMS 2.0 11.4.4 (Java EE) and 11.4.5 (Java SE): receiving a message synchronously.

The simplified API starts the connection by itself when the consumer is created and returns
the body directly with ``receive_body``.
"""

from __future__ import annotations

import sys

from ch11_common import run

from amqp_jms import ConnectionFactory, JMSContext, Queue


def receive_message_old(connection_factory: ConnectionFactory, inbound_queue: Queue) -> str | None:
    with connection_factory.create_connection() as connection:
        session = connection.create_session()
        message_consumer = session.create_consumer(inbound_queue)
        connection.start()
        text_message = message_consumer.receive(1000)
        return None if text_message is None else text_message.get_body(str)


def receive_message_new(connection_factory: ConnectionFactory, inbound_queue: Queue) -> str | None:
    with connection_factory.create_context() as context:
        consumer = context.create_consumer(inbound_queue)
        return consumer.receive_body(str, 1000)


def receive_message_injected(context: JMSContext, inbound_queue: Queue) -> str | None:
    """11.4.4.3: the injected context."""
    return context.create_consumer(inbound_queue).receive_body(str, 1000)


def demo(url: str) -> list[str | None]:
    """Queue three messages, receive one each way."""
    cf = ConnectionFactory(url)
    q = Queue("jms/inboundQueue")
    with cf.create_context() as ctx:
        p = ctx.create_producer()
        for body in ("one", "two", "three"):
            p.send(q, body)
    got = [receive_message_old(cf, q), receive_message_new(cf, q)]
    with cf.create_context() as injected:
        got.append(receive_message_injected(injected, q))
    return got


if __name__ == "__main__":
    sys.exit(run(demo))
