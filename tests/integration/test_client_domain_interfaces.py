"""The domain-specific interfaces (JMS 2.0 section 4.11) on the embedded broker."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import IllegalStateException, InvalidDestinationException, Queue, Topic
from amqp_jms.client.domain import QueueConnectionFactory, TopicConnectionFactory


def test_queue_domain_round_trip_and_forbidden_methods(broker: Any) -> None:
    with QueueConnectionFactory(broker.url).create_queue_connection() as conn:
        qs = conn.create_queue_session(False)
        sender = qs.create_sender(Queue("dq"))
        assert sender.get_queue() == Queue("dq")
        sender.send(qs.create_text_message("via sender"))
        conn.start()
        receiver = qs.create_receiver(Queue("dq"))
        assert receiver.get_queue() == Queue("dq")
        m = receiver.receive(2000)
        assert m is not None and m.get_body(str) == "via sender"
        assert [m.get_body(str) for m in qs.create_browser(Queue("dq"))] == []
        for call in (lambda: qs.create_topic("t"), qs.create_temporary_topic,
                     lambda: qs.create_durable_subscriber(Topic("t"), "s"),
                     lambda: qs.create_durable_consumer(Topic("t"), "s"),
                     lambda: qs.create_shared_consumer(Topic("t"), "s"),
                     lambda: qs.create_shared_durable_consumer(Topic("t"), "s"),
                     lambda: qs.unsubscribe("s")):
            with pytest.raises(IllegalStateException, match=r"4\.11"):
                call()
        with pytest.raises(InvalidDestinationException):
            qs.create_sender(Topic("t"))  # type: ignore[arg-type]


def test_topic_domain_round_trip_and_forbidden_methods(broker: Any) -> None:
    f = TopicConnectionFactory(broker.url + "?jms.clientID=topic-domain")
    with f.create_topic_connection() as conn:
        ts = conn.create_topic_session(False)
        conn.start()
        sub = ts.create_subscriber(Topic("dt"))
        durable = ts.create_durable_subscriber(Topic("dt"), "dsub")
        pub = ts.create_publisher(Topic("dt"))
        assert pub.get_topic() == Topic("dt") and sub.get_topic() == Topic("dt")
        pub.publish(ts.create_text_message("news"))
        for c in (sub, durable):
            m = c.receive(2000)
            assert m is not None and m.get_body(str) == "news"
        durable.close()
        ts.unsubscribe("dsub")
        for call in (lambda: ts.create_queue("q"), ts.create_temporary_queue,
                     lambda: ts.create_browser(Queue("q"))):
            with pytest.raises(IllegalStateException, match=r"4\.11"):
                call()
        with pytest.raises(InvalidDestinationException):
            ts.create_subscriber(Queue("q"))  # type: ignore[arg-type]
