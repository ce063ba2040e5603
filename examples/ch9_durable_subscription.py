"""JMS 2.0 §9.3.3: a durable subscription keeps news published while its consumer is away.

    python examples/ch9_durable_subscription.py [--url amqp://host:5672]
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

from amqp_jms import ConnectionFactory, Session, TextMessage, Topic


@contextlib.contextmanager
def broker_url(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def main(url: str | None = None) -> list[str]:
    news_feed_topic = Topic("BreakingNews")
    with broker_url(url) as where:
        connection_factory = ConnectionFactory(where, client_id="news-reader")
        # 9.3.3.1 creating a durable subscription
        with connection_factory.create_connection() as connection:
            session = connection.create_session(Session.AUTO_ACKNOWLEDGE)
            subscriber = session.create_durable_subscriber(news_feed_topic, "mySubscription")
            subscriber.close()  # the subscription lives on
        # news published while nobody is connected
        with ConnectionFactory(where).create_connection() as publisher_conn:
            s = publisher_conn.create_session()
            publisher = s.create_producer(news_feed_topic)
            for headline in ("markets open", "rain expected"):
                publisher.send(s.create_text_message(headline))
        # 9.3.3.2 creating a consumer on the existing durable subscription
        with connection_factory.create_connection() as connection:
            session = connection.create_session(Session.AUTO_ACKNOWLEDGE)
            consumer = session.create_durable_consumer(news_feed_topic, "mySubscription")
            connection.start()
            got: list[str] = []
            while (m := consumer.receive(1000)) is not None:
                assert isinstance(m, TextMessage)
                got.append(m.get_text() or "")
            consumer.close()
            session.unsubscribe("mySubscription")
        for headline in got:
            print(f"caught up on: {headline}")
        return got


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url")
    main(ap.parse_args().url)
