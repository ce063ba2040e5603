"""JMS 2.0 11.4.3: sending a message with a property, NON_PERSISTENT, without a timestamp.

The simplified API sets all three on the ``JMSProducer`` with chained calls.
"""

from __future__ import annotations

import sys

from ch11_common import run

from amqp_jms import ConnectionFactory, DeliveryMode, Queue


def send_message_old(connection_factory: ConnectionFactory, inbound_queue: Queue, body: str) -> None:
    with connection_factory.create_connection() as connection:
        session = connection.create_session()
        message_producer = session.create_producer(inbound_queue)
        text_message = session.create_text_message(body)
        text_message.set_string_property("foo", "bar")
        message_producer.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
        message_producer.set_disable_message_timestamp(True)
        message_producer.send(text_message)


def send_message_new(connection_factory: ConnectionFactory, inbound_queue: Queue, body: str) -> None:
    with connection_factory.create_context() as context:
        (context.create_producer()
         .set_property("foo", "bar")
         .set_delivery_mode(DeliveryMode.NON_PERSISTENT)
         .set_disable_message_timestamp(True)
         .send(inbound_queue, body))


def demo(url: str) -> list[tuple[str, str | None, int, int]]:
    """Send both ways; report (body, foo, delivery mode, timestamp) of what arrived."""
    cf = ConnectionFactory(url)
    q = Queue("jms/inboundQueue")
    send_message_old(cf, q, "standard")
    send_message_new(cf, q, "simplified")
    out = []
    with cf.create_context() as ctx:
        consumer = ctx.create_consumer(q)
        for _ in range(2):
            m = consumer.receive(2000)
            assert m is not None
            out.append((str(m.get_body(str)), m.get_string_property("foo"), m.get_jms_delivery_mode(),
                        m.get_jms_timestamp()))
    return out


if __name__ == "__main__":
    sys.exit(run(demo))
