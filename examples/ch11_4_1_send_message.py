"""JMS 2.0 11.4.1 (Java EE) and 11.4.2 (Java SE): sending a message.

The standard API needs a connection, a session and a producer, and every call may raise the
checked ``JMSException``; the simplified API is one ``JMSContext`` and a fluent producer, and
raises only ``JMSRuntimeException``s. The injected form receives a ready ``JMSContext``.
"""

from __future__ import annotations

import sys

from ch11_common import run

from amqp_jms import ConnectionFactory, JMSContext, Queue


def send_message_old(connection_factory: ConnectionFactory, inbound_queue: Queue, body: str) -> None:
    with connection_factory.create_connection() as connection:
        session = connection.create_session()
        message_producer = session.create_producer(inbound_queue)
        text_message = session.create_text_message(body)
        message_producer.send(text_message)


def send_message_new(connection_factory: ConnectionFactory, inbound_queue: Queue, body: str) -> None:
    with connection_factory.create_context() as context:
        context.create_producer().send(inbound_queue, body)


def send_message_injected(context: JMSContext, inbound_queue: Queue, body: str) -> None:
    """11.4.1.3: the container injected ``context``; it also closes it."""
    context.create_producer().send(inbound_queue, body)


def demo(url: str) -> list[str]:
    """Send one message each way, then read the three back."""
    cf = ConnectionFactory(url)
    q = Queue("jms/inboundQueue")
    send_message_old(cf, q, "standard")
    send_message_new(cf, q, "simplified")
    with cf.create_context() as injected:
        send_message_injected(injected, q, "injected")
    with cf.create_context() as ctx:
        consumer = ctx.create_consumer(q)
        return [str(consumer.receive_body(str, 2000)) for _ in range(3)]


if __name__ == "__main__":
    sys.exit(run(demo))
