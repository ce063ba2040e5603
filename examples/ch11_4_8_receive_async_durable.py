"""JMS 2.0 11.4.8: receiving asynchronously from a durable subscription (Java SE)."""

from __future__ import annotations

import sys

from ch11_common import MyListener, run

from amqp_jms import ConnectionFactory, Session, Topic


def receive_messages_old(connection_factory: ConnectionFactory, inbound_topic: Topic) -> list[str]:
    with connection_factory.create_connection() as connection:
        session = connection.create_session(Session.AUTO_ACKNOWLEDGE)
        topic_subscriber = session.create_durable_subscriber(inbound_topic, "mysub")
        message_listener = MyListener()
        topic_subscriber.set_message_listener(message_listener)
        connection.start()
        message_listener.done.wait(10)
        return message_listener.texts


def receive_messages_new(connection_factory: ConnectionFactory, inbound_topic: Topic) -> list[str]:
    with connection_factory.create_context(Session.AUTO_ACKNOWLEDGE) as context:
        consumer = context.create_durable_consumer(inbound_topic, "mysub")
        message_listener = MyListener()
        consumer.set_message_listener(message_listener)
        message_listener.done.wait(10)
        return message_listener.texts


def demo(url: str) -> list[list[str]]:
    """Publish while the subscription is detached; each form picks up its message."""
    cf = ConnectionFactory(url + ("&" if "?" in url else "?") + "jms.clientID=ch11-async-durable")
    topic = Topic("jms/inboundTopic")
    with cf.create_context() as ctx:
        ctx.create_durable_consumer(topic, "mysub").close()
    publisher = ConnectionFactory(url).create_context()
    with publisher:
        publisher.create_producer().send(topic, "for old")
        old = receive_messages_old(cf, topic)
        publisher.create_producer().send(topic, "for new")
        new = receive_messages_new(cf, topic)
    with cf.create_context() as ctx:
        ctx.unsubscribe("mysub")
    return [old, new]


if __name__ == "__main__":
    sys.exit(run(demo))
