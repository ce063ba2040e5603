"""JMS 2.0 11.4.6: receiving a message synchronously from a durable subscription.

An unshared durable subscription needs a client ID (here ``jms.clientID`` on the URL); the
subscription keeps messages published while no consumer is attached.
"""

from __future__ import annotations

import sys

from ch11_common import run

from amqp_jms import ConnectionFactory, Topic


def receive_message_old(connection_factory: ConnectionFactory, inbound_topic: Topic) -> str | None:
    with connection_factory.create_connection() as connection:
        session = connection.create_session()
        subscriber = session.create_durable_subscriber(inbound_topic, "mysub")
        connection.start()
        text_message = subscriber.receive(1000)
        return None if text_message is None else text_message.get_body(str)


def receive_message_new(connection_factory: ConnectionFactory, inbound_topic: Topic) -> str | None:
    with connection_factory.create_context() as context:
        consumer = context.create_durable_consumer(inbound_topic, "mysub")
        return consumer.receive_body(str, 1000)


def demo(url: str) -> list[str | None]:
    """Subscribe, publish while detached, receive with the standard then the simplified API."""
    cf = ConnectionFactory(url + ("&" if "?" in url else "?") + "jms.clientID=ch11-durable")
    topic = Topic("jms/inboundTopic")
    with cf.create_context() as ctx:
        ctx.create_durable_consumer(topic, "mysub").close()  # the subscription exists from now
    publisher = ConnectionFactory(url)
    with publisher.create_context() as ctx:
        ctx.create_producer().send(topic, "first").send(topic, "second")
    got = [receive_message_old(cf, topic), receive_message_new(cf, topic)]
    with cf.create_context() as ctx:
        ctx.unsubscribe("mysub")
    return got


if __name__ == "__main__":
    sys.exit(run(demo))
