"""The embedded broker in prefix mode (``address_prefixes=("queue://", "topic://")``, the CLI's
``--address-prefixes queue://,topic://``), addressing nodes as ActiveMQ and Artemis do, and the
client against it end to end: what a Python team pointing amqp-jms at such an estate relies on.

The broker advertises ``queue-prefix``/``topic-prefix`` in its Open and decides a node's type by
the address prefix alone (a bare name is a queue, capabilities are ignored); the client prefixes
every address it writes and strips what it reads."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from proton import Message as PMessage
from proton.utils import BlockingConnection
from test_client_subscriptions import _publish, _texts  # the same helpers, one copy

from amqp_jms import (
    ConnectionFactory,
    InvalidDestinationException,
    Queue,
    Session,
    TemporaryQueue,
    Topic,
)
from amqp_jms.client.requestor import QueueRequestor
from amqp_jms.testing.peer import TestPeer

PREFIXES = ("queue://", "topic://")
NO_PREFIX = "?jms.queuePrefix=&jms.topicPrefix="  # a client that ignores what the broker offers


@pytest.fixture
def broker(broker_factory: Callable[..., Any]) -> Any:
    return broker_factory(address_prefixes=PREFIXES)


# -- the broker itself -----------------------------------------------------------------------------
def test_prefix_mode_is_advertised_and_default_mode_is_unchanged(broker_factory: Callable[..., Any]) -> None:
    with_prefixes = broker_factory(address_prefixes=PREFIXES)
    plain = broker_factory()
    for b, expected in ((with_prefixes, "queue://"), (plain, None)):
        with ConnectionFactory(b.url).create_connection() as c:
            c.create_session()  # the connection opens on first use
            props = c._provider.remote_properties
            assert props.get("queue-prefix") == expected
            assert props.get("topic-prefix") == (None if expected is None else "topic://")


def test_node_type_comes_from_the_prefix_not_the_capabilities(broker: Any) -> None:
    """A client that does not prefix (as before this issue, against ActiveMQ) gets a queue for
    its topic consumer: two subscribers compete instead of each getting a copy."""
    with ConnectionFactory(broker.url + NO_PREFIX).create_connection() as c:
        c.start()
        s = c.create_session()
        a, b = s.create_consumer(Topic("t")), s.create_consumer(Topic("t"))
        s.create_producer(Topic("t")).send(s.create_text_message("once"))
        assert sorted(_texts(a) + _texts(b)) == ["once"]
    assert broker.core.router.node_kind("t").value == "queue"


def test_raw_amqp_client_sees_activemq_addressing(broker: Any) -> None:
    """proton's own client, no JMS: ``topic://x`` fans out, the Open carries the prefixes."""
    conn = BlockingConnection(broker.url, timeout=10)
    try:
        r1 = conn.create_receiver("topic://raw", name="r1")
        r2 = conn.create_receiver("topic://raw", name="r2")
        conn.create_sender("topic://raw").send(PMessage(body="fan"))
        assert r1.receive(5).body == "fan" and r2.receive(5).body == "fan"
        r1.accept()
        r2.accept()
    finally:
        conn.close()


def test_dead_letter_queue_is_a_prefixed_queue(broker: Any) -> None:


    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        s.create_producer(Queue("work")).send(s.create_text_message("poison"))
        m = s.create_consumer(Queue("work")).receive(3000)
        assert m is not None
        m.clear_properties()
        m.set_int_property("JMS_AMQP_ACK_TYPE", 2)  # rejected: dead-lettered
        m.acknowledge()
        dead = s.create_consumer(Queue("DLQ")).receive(3000)
        assert dead is not None and dead.get_text() == "poison"
    assert broker.core.router.node_kind("queue://DLQ").value == "queue"


def test_cli_option_parses_and_refuses_nonsense() -> None:
    from amqp_jms.broker.operations.cli import build_parser

    assert build_parser().parse_args(["--address-prefixes", "queue://,topic://"]).address_prefixes == PREFIXES
    assert build_parser().parse_args([]).address_prefixes is None
    for bad in ("queue://", "a,a", ",topic://", "q,t,u"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["--address-prefixes", bad])


# -- the client against it, end to end -------------------------------------------------------------
def test_topics_fan_out_and_destinations_read_unprefixed(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        subs = [s.create_consumer(Topic("prices")) for _ in range(3)]
        q = s.create_consumer(Queue("orders"))
        p = s.create_producer(Topic("prices"))
        m = s.create_text_message("42")
        m.set_jms_reply_to(Queue("orders"))
        p.send(m)
        got = [sub.receive(3000) for sub in subs]
        assert [g.get_text() for g in got] == ["42"] * 3
        assert all(g.get_jms_destination() == Topic("prices") for g in got)
        assert all(g.get_jms_reply_to() == Queue("orders") for g in got)
        s.create_producer(Queue("orders")).send(s.create_text_message("q"))
        r = q.receive(3000)
        assert r.get_jms_destination() == Queue("orders") and str(r.get_jms_destination()) == "queue://orders"
    assert broker.core.router.node_kind("topic://prices").value == "topic"
    assert broker.core.router.node_kind("queue://orders").value == "queue"


def test_anonymous_producer_routes_by_prefixed_to(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        t1, t2 = s.create_consumer(Topic("news")), s.create_consumer(Topic("news"))
        q = s.create_consumer(Queue("inbox"))
        p = s.create_producer(None)
        p.send(Topic("news"), s.create_text_message("n"))
        p.send(Queue("inbox"), s.create_text_message("i"))
        assert _texts(t1) == ["n"] and _texts(t2) == ["n"] and _texts(q) == ["i"]


def test_durable_subscription_survives_reconnect_and_unsubscribes(broker: Any) -> None:
    topic = Topic("events")
    f = ConnectionFactory(broker.url + "?jms.clientID=svc")
    with f.create_connection() as c:
        s = c.create_session()
        s.create_durable_subscriber(topic, "audit").close()
    _publish(broker.url, topic, "a", "b")
    with f.create_connection() as c:
        c.start()
        s = c.create_session()
        sub = s.create_durable_subscriber(topic, "audit")
        assert _texts(sub) == ["a", "b"]
        sub.close()
        s.unsubscribe("audit")
        with pytest.raises(InvalidDestinationException):
            s.unsubscribe("audit")


def test_shared_durable_subscription_survives_reconnect(broker: Any) -> None:
    topic = Topic("jobs")
    f = ConnectionFactory(broker.url + "?jms.clientID=workers")
    with f.create_connection() as c:
        s = c.create_session()
        s.create_shared_durable_consumer(topic, "pool").close()
    _publish(broker.url, topic, "j1")
    with f.create_connection() as c:
        c.start()
        s = c.create_session()
        a = s.create_shared_durable_consumer(topic, "pool")
        b = s.create_shared_durable_consumer(topic, "pool")
        assert sorted(_texts(a) + _texts(b)) == ["j1"]
        a.close()
        b.close()
        s.unsubscribe("pool")


def test_delayed_message_is_held_and_its_properties_reach_broker_selectors(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        red = s.create_consumer(Queue("delayed"), "color = 'red'")
        p = s.create_producer(Queue("delayed"))
        p.set_delivery_delay(600)
        m = s.create_text_message("later")
        m.set_string_property("color", "red")
        sent_at = time.time()
        p.send(m)
        blue = s.create_text_message("never")
        blue.set_string_property("color", "blue")
        p.send(blue)
        assert red.receive(200) is None  # held
        got = red.receive(5000)
        assert got is not None and got.get_text() == "later"
        assert time.time() - sent_at >= 0.55
        assert got.get_jms_delivery_time() == m.get_jms_delivery_time()
        assert red.receive(300) is None  # the blue one stays for another consumer


def test_temporary_queue_and_request_reply(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as server_conn, \
            ConnectionFactory(broker.url).create_connection() as client_conn:
        server_conn.start()
        client_conn.start()
        ss = server_conn.create_session()
        requests = ss.create_consumer(Queue("svc"))

        def answer(msg: Any) -> None:
            reply_to = msg.get_jms_reply_to()
            assert isinstance(reply_to, TemporaryQueue)
            assert reply_to.name.startswith("temp-queue://") and str(reply_to) == reply_to.name
            r = ss.create_text_message("re:" + msg.get_text())
            r.set_jms_correlation_id(msg.get_jms_message_id())
            ss.create_producer(reply_to).send(r)

        requests.set_message_listener(answer)
        cs = client_conn.create_session()
        requestor = QueueRequestor(cs, Queue("svc"))
        reply = requestor.request(cs.create_text_message("ping"), 5000)
        assert reply is not None and reply.get_text() == "re:ping"
        assert isinstance(reply.get_jms_destination(), TemporaryQueue)
        assert reply.get_jms_destination().name.startswith("temp-queue://")
        tq = cs.create_temporary_queue()
        assert tq.name.startswith("temp-queue://") and str(tq) == tq.name
        tq.delete()


def test_prefixed_peer_seen_frame_by_frame_matches_the_broker() -> None:
    """The scripted peer offering the broker's Open properties gets the same addresses the
    broker routes by (the two halves of the tests above agree on the wire)."""
    seen: list[Any] = []
    with TestPeer() as peer:
        peer.expect_open(properties={"queue-prefix": "queue://", "topic-prefix": "topic://"})
        peer.expect_begin()
        peer.expect_attach(seen.append)
        with ConnectionFactory(peer.url + "?jms.closeTimeout=2000").create_connection() as c:
            c.create_session().create_producer(Topic("t"))
            peer.wait()
    assert seen[0].target_address == "topic://t"
