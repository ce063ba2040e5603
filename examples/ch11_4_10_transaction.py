"""JMS 2.0 11.4.10: receive synchronously and forward in the same local transaction (Java SE)."""

from __future__ import annotations

import sys

from ch11_common import run

from amqp_jms import ConnectionFactory, JMSContext, Queue, Session


def receive_and_send_old(connection_factory: ConnectionFactory, inbound: Queue, outbound: Queue) -> int:
    forwarded = 0
    with connection_factory.create_connection() as connection:
        session = connection.create_session(Session.SESSION_TRANSACTED)
        message_consumer = session.create_consumer(inbound)
        message_producer = session.create_producer(outbound)
        connection.start()
        while (text_message := message_consumer.receive(1000)) is not None:
            message_producer.send(text_message)
            session.commit()
            forwarded += 1
    return forwarded


def receive_and_send_new(connection_factory: ConnectionFactory, inbound: Queue, outbound: Queue) -> int:
    forwarded = 0
    with connection_factory.create_context(JMSContext.SESSION_TRANSACTED) as context:
        consumer = context.create_consumer(inbound)
        while (text_message := consumer.receive(1000)) is not None:
            context.create_producer().send(outbound, text_message)
            context.commit()
            forwarded += 1
    return forwarded


def demo(url: str) -> tuple[int, int, list[str]]:
    """Forward 2 messages each way; report the counts and what reached the outbound queue."""
    cf = ConnectionFactory(url)
    inbound, outbound = Queue("jms/inboundQueue"), Queue("jms/outboundQueue")
    with cf.create_context() as ctx:
        p = ctx.create_producer()
        p.send(inbound, "1").send(inbound, "2")
        old = receive_and_send_old(cf, inbound, outbound)
        p.send(inbound, "3").send(inbound, "4")
        new = receive_and_send_new(cf, inbound, outbound)
        out = ctx.create_consumer(outbound)
        texts = []
        while (body := out.receive_body(str, 500)) is not None:
            texts.append(body)
    return old, new, texts


if __name__ == "__main__":
    sys.exit(run(demo))
