"""Durable and shared subscriptions, unsubscribe, end to end on the embedded broker (JMS 6.3)."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    InvalidDestinationException,
    JMSException,
    Queue,
    Topic,
)


def _texts(consumer: Any, timeout_ms: int = 300) -> list[str]:
    out = []
    while (m := consumer.receive(timeout_ms)) is not None:
        out.append(m.get_body(str))
    return out


def _publish(url: str, topic: Topic, *texts: str) -> None:
    with ConnectionFactory(url).create_connection() as c:
        s = c.create_session()
        p = s.create_producer(topic)
        for t in texts:
            p.send(s.create_text_message(t))


def test_durable_subscription_keeps_messages_while_no_consumer(broker: Any) -> None:
    topic = Topic("news")
    f = ConnectionFactory(broker.url + "?jms.clientID=reader")
    with f.create_connection() as c:
        c.start()
        s = c.create_session()
        sub = s.create_durable_subscriber(topic, "daily")
        _publish(broker.url, topic, "one")
        assert _texts(sub) == ["one"]
        sub.close()  # detaches without closing: the subscription stays
    _publish(broker.url, topic, "two", "three")  # sent while nobody is attached
    with f.create_connection() as c:
        c.start()
        s = c.create_session()
        sub = s.create_durable_consumer(topic, "daily")
        assert _texts(sub) == ["two", "three"]
        sub.close()
        s.unsubscribe("daily")
    _publish(broker.url, topic, "four")
    with f.create_connection() as c:
        c.start()
        s = c.create_session()
        sub = s.create_durable_consumer(topic, "daily")  # a new, empty subscription
        assert _texts(sub) == []


def test_durable_subscription_survives_session_close(broker: Any) -> None:
    topic = Topic("t-sess")
    f = ConnectionFactory(broker.url + "?jms.clientID=c1")
    with f.create_connection() as c:
        s = c.create_session()
        s.create_durable_subscriber(topic, "keep")
        s.close()  # the session's links detach; the durable one must not end its subscription
        _publish(broker.url, topic, "kept")
        c.start()
        s2 = c.create_session()
        assert _texts(s2.create_durable_subscriber(topic, "keep")) == ["kept"]


def test_durable_subscriber_needs_client_id_and_a_topic(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as c:
        s = c.create_session()
        with pytest.raises(IllegalStateException, match="client ID"):
            s.create_durable_subscriber(Topic("t"), "sub")
        c2 = ConnectionFactory(broker.url + "?jms.clientID=x").create_connection()
        with c2:
            s2 = c2.create_session()
            with pytest.raises(InvalidDestinationException):
                s2.create_durable_subscriber(Queue("q"), "sub")  # type: ignore[arg-type]
            with pytest.raises(JMSException, match=r"'\|'"):
                s2.create_durable_subscriber(Topic("t"), "a|b")


def test_unsubscribe_unknown_or_active_subscription(broker: Any) -> None:
    with ConnectionFactory(broker.url + "?jms.clientID=u1").create_connection() as c:
        s = c.create_session()
        with pytest.raises(InvalidDestinationException, match="nosuch"):
            s.unsubscribe("nosuch")
        sub = s.create_durable_subscriber(Topic("t"), "active")
        with pytest.raises(IllegalStateException, match="active consumer"):
            s.unsubscribe("active")
        with pytest.raises(IllegalStateException):
            s.create_durable_subscriber(Topic("t"), "active")  # unshared: one consumer at a time
        sub.close()
        s.unsubscribe("active")
        with pytest.raises(InvalidDestinationException):
            s.unsubscribe("active")


def test_shared_consumers_split_the_messages(broker: Any) -> None:
    topic = Topic("shared-t")
    with ConnectionFactory(broker.url).create_connection() as c:  # no client ID: global
        c.start()
        s = c.create_session()
        a = s.create_shared_consumer(topic, "workers")
        b = s.create_shared_consumer(topic, "workers")
        _publish(broker.url, topic, *[f"m{i}" for i in range(10)])
        got_a, got_b = _texts(a), _texts(b)
        assert sorted(got_a + got_b) == sorted(f"m{i}" for i in range(10))
        assert got_a and got_b  # shared out, not copied
        with pytest.raises(JMSException, match="selector"):
            s.create_shared_consumer(topic, "workers", "x = 1")
        with pytest.raises(JMSException, match="topic"):
            s.create_shared_consumer(Topic("other"), "workers")


def test_shared_durable_subscription_across_connections(broker: Any) -> None:
    topic = Topic("sd-t")
    f = ConnectionFactory(broker.url)
    with f.create_connection() as c1, f.create_connection() as c2:
        c1.start()
        c2.start()
        a = c1.create_session().create_shared_durable_consumer(topic, "audit")
        b = c2.create_session().create_shared_durable_consumer(topic, "audit")
        _publish(broker.url, topic, *[str(i) for i in range(6)])
        assert sorted(_texts(a) + _texts(b)) == [str(i) for i in range(6)]
        a.close()
        b.close()
    _publish(broker.url, topic, "later")
    with f.create_connection() as c:
        c.start()
        s = c.create_session()
        sub = s.create_shared_durable_consumer(topic, "audit")
        assert _texts(sub) == ["later"]
        sub.close()
        s.unsubscribe("audit")


def test_unsubscribe_unknown_without_a_client_id_names_the_subscription_not_the_link(broker: Any) -> None:
    """Without a client ID the lookup link is ``name|global``; the application named ``name``,
    and the error says that name (as Qpid JMS's does), with the peer's condition kept."""
    with ConnectionFactory(broker.url).create_connection() as c:
        with pytest.raises(InvalidDestinationException) as err:
            c.create_session().unsubscribe("nosuch")
        assert "'nosuch'" in str(err.value) and "|global" not in str(err.value)
        assert err.value.error_code == "amqp:not-found"
