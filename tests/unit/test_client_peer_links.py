"""Producer and consumer links, sending outcomes, credit: frame by frame against the test peer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Condition
from proton import Message as PMessage

from amqp_jms import (
    ConnectionFactory,
    DeliveryMode,
    IllegalStateException,
    InvalidDestinationException,
    InvalidSelectorException,
    JMSSecurityException,
    Queue,
    SendFailedException,
    Topic,
)
from amqp_jms.client import Connection
from amqp_jms.testing.peer import Attach, Flow, TestPeer, Transfer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
OUTCOMES = ("amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list")


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open(offered_capabilities=["ANONYMOUS-RELAY"])
        p.expect_begin()
        yield p


def _conn(peer: TestPeer, options: str = "") -> Connection:
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _text(body: str, **props: object) -> PMessage:
    return PMessage(body=body, properties=dict(props),
                    annotations={"x-opt-jms-msg-type": 5, "x-opt-jms-dest": 0})


def test_producer_link_follows_qpid_jms_conventions(peer: TestPeer) -> None:
    seen: list[Attach] = []
    peer.expect_attach(seen.append)
    peer.expect_attach(seen.append)
    with _conn(peer) as conn:
        s = conn.create_session()
        s.create_producer(Queue("orders"))
        s.create_producer(Topic("prices"))
        peer.wait()
    q, t = seen
    assert q.role == "sender" and q.name.startswith("qpid-jms:sender:ID:") and q.name.endswith(":orders")
    assert q.name != t.name
    assert q.target_address == "orders" and q.target_capabilities == ("queue",)
    assert t.target_capabilities == ("topic",)
    assert q.outcomes == OUTCOMES
    assert q.default_outcome is None and t.default_outcome is None  # senders name none
    assert q.snd_settle_mode == 0  # unsettled: the outcome is awaited


def test_consumer_link_source_filters_and_outcomes(peer: TestPeer) -> None:
    seen: list[Attach] = []
    peer.expect_attach(seen.append)
    peer.expect_flow()
    with _conn(peer) as conn:
        s = conn.create_session()
        s.create_consumer(Topic("news"), "color = 'red'", no_local=True)
        peer.wait()
    a = seen[0]
    assert a.role == "receiver" and a.name.startswith("qpid-jms:receiver:")
    assert a.source_address == "news" and a.source_capabilities == ("topic",)
    assert a.outcomes == OUTCOMES
    assert a.default_outcome == (0x27, [True])  # modified{delivery-failed=true}, as Qpid JMS
    assert a.filter is not None
    assert a.filter["jms-selector"] == (0x0000468C00000004, "color = 'red'")
    assert a.filter["no-local"][0] == 0x0000468C00000003


def test_invalid_selector_raises_before_any_frame(peer: TestPeer) -> None:
    with _conn(peer) as conn:
        s = conn.create_session()
        with pytest.raises(InvalidSelectorException):
            s.create_consumer(Queue("q"), "color = ")
        peer.wait()
    assert not any(isinstance(x, Attach) for x in peer.log)


@pytest.mark.parametrize(
    "condition, exc",
    [
        ("amqp:not-found", InvalidDestinationException),
        ("amqp:unauthorized-access", JMSSecurityException),
    ],
)
def test_refused_attach_raises_from_the_condition(peer: TestPeer, condition: str, exc: type) -> None:
    peer.expect_attach(refuse=(condition, "no way"))
    peer.expect_attach(refuse=(condition, "no way"))
    with _conn(peer) as conn:
        s = conn.create_session()
        with pytest.raises(exc, match="no way") as info:
            s.create_consumer(Queue("missing"))
        assert info.value.error_code == condition
        with pytest.raises(exc):
            s.create_producer(Queue("missing"))
        peer.wait()


def test_sync_send_waits_for_accepted_and_sets_headers(peer: TestPeer) -> None:
    got: list[Transfer] = []
    peer.expect_attach(offer=10)
    peer.expect_transfer(got.append)
    with _conn(peer) as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("q"))
        p.set_priority(7)
        p.set_time_to_live(60000)
        m = s.create_text_message("hello")
        before = int(time.time() * 1000)
        p.send(m)
        peer.wait()
        assert m.get_jms_message_id() is not None and m.get_jms_message_id().startswith("ID:")
        assert before <= m.get_jms_timestamp() <= int(time.time() * 1000)
        assert m.get_jms_expiration() == m.get_jms_timestamp() + 60000
        assert m.get_jms_destination() == Queue("q")
        assert m.get_jms_priority() == 7
    t = got[0]
    assert not t.settled
    assert t.message.durable and t.message.priority == 7 and t.message.ttl == 60.0
    assert t.message.id == m.get_jms_message_id() and t.message.body == "hello"


def test_disabled_message_id_and_timestamp(peer: TestPeer) -> None:
    got: list[Transfer] = []
    peer.expect_attach(offer=10)
    peer.expect_transfer(got.append)
    with _conn(peer) as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("q"))
        p.set_disable_message_id(True)
        p.set_disable_message_timestamp(True)
        m = s.create_message()
        p.send(m, DeliveryMode.NON_PERSISTENT, 4, 0)
        peer.wait()
        assert m.get_jms_message_id() is None and m.get_jms_timestamp() == 0
    assert got[0].message.id is None and not got[0].message.durable


@pytest.mark.parametrize("outcome", ["rejected", "released", "modified"])
def test_refused_send_raises_send_failed_naming_the_error(peer: TestPeer, outcome: str) -> None:
    peer.expect_attach(offer=10)
    peer.expect_transfer(outcome=outcome, condition=("amqp:resource-limit-exceeded", "queue full"))
    with _conn(peer) as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("q"))
        with pytest.raises(SendFailedException, match=outcome) as info:
            p.send(s.create_text_message("x"))
        if outcome == "rejected":
            assert info.value.error_code == "amqp:resource-limit-exceeded"
            assert "queue full" in str(info.value)
        peer.wait()


def test_presettled_producer_sends_settled_without_waiting(peer: TestPeer) -> None:
    got: list[Transfer] = []
    seen: list[Attach] = []
    peer.expect_attach(seen.append, offer=10)
    peer.expect_transfer(got.append, outcome=None)
    peer.expect_transfer(got.append, outcome=None)
    with _conn(peer, "&jms.presettlePolicy.presettleProducers=true") as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("q"))
        p.send(s.create_text_message("1"))
        p.send(s.create_text_message("2"))
        peer.wait()
    assert seen[0].snd_settle_mode == 1
    assert [t.message.body for t in got] == ["1", "2"] and all(t.settled for t in got)


def test_messages_are_sent_in_order_and_credit_is_respected(peer: TestPeer) -> None:
    got: list[Transfer] = []
    peer.expect_attach(offer=0)
    with _conn(peer, "&jms.forceAsyncSend=true") as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("q"))
        peer.wait()
        for i in range(5):
            p.send(s.create_text_message(str(i)))
        time.sleep(0.1)
        assert not [x for x in peer.log if isinstance(x, Transfer)]  # no credit yet
        for _ in range(5):
            peer.expect_transfer(got.append)
        peer.run(lambda c: next(iter(c.links.values())).flow(5))
        peer.wait()
    assert [t.message.body for t in got] == ["0", "1", "2", "3", "4"]


def test_credit_is_prefetch_and_refilled_at_half(peer: TestPeer) -> None:
    flows: list[Flow] = []
    peer.expect_attach()
    peer.expect_flow(flows.append, send=[_text(str(i)) for i in range(4)])
    with _conn(peer, "&jms.prefetchPolicy.all=4") as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        peer.wait()
        assert flows[0].credit == 4
        for _ in range(2):
            peer.expect_disposition()
        assert c.receive(2000) is not None
        time.sleep(0.1)
        assert all(f.credit <= 0 for f in peer.flows[1:])  # 3 still queued: no refill yet
        assert c.receive(2000) is not None
        peer.wait()
        deadline = time.monotonic() + 2
        while peer.flows[-1].credit != 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert peer.flows[-1].credit == 2  # back to 4 with the 2 still queued locally


def test_pull_consumer_receive_no_wait_drains(peer: TestPeer) -> None:
    flows: list[Flow] = []
    peer.expect_attach()
    peer.expect_flow(flows.append, drained=True)
    with _conn(peer, "&jms.prefetchPolicy.all=0") as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        assert c.receive_no_wait() is None
        peer.wait()
    assert (flows[0].credit, flows[0].drain) == (1, True)


def test_pull_consumer_receive_grants_one_and_drains_at_timeout(peer: TestPeer) -> None:
    flows: list[Flow] = []
    peer.expect_attach()
    peer.expect_flow(flows.append)  # credit 1
    peer.expect_flow(flows.append, drained=True)  # the drain at the timeout
    with _conn(peer, "&jms.prefetchPolicy.all=0") as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        assert c.receive(200) is None
        peer.wait()
    assert (flows[0].credit, flows[0].drain) == (1, False)
    assert flows[1].drain


def test_pull_consumer_gets_message_sent_for_its_credit(peer: TestPeer) -> None:
    peer.expect_attach()
    peer.expect_flow(lambda f: f.credit == 1, send=[_text("one")])
    peer.expect_disposition(lambda d: d.state == 0x24 and d.settled)
    with _conn(peer, "&jms.prefetchPolicy.all=0") as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_text() == "one"
        peer.wait()


def test_received_message_headers_from_the_transfer(peer: TestPeer) -> None:
    peer.expect_attach()
    pm = _text("hi", color="red")
    pm.delivery_count = 2
    pm.id = "ID:abc"
    peer.expect_flow(send=[pm])
    peer.expect_disposition()
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None
        assert m.get_string_property("color") == "red"
        assert m.get_jms_redelivered() is True
        assert m.get_int_property("JMSXDeliveryCount") == 3
        assert m.get_jms_message_id() == "ID:abc"
        peer.wait()


def test_stopped_connection_delivers_nothing_until_start(peer: TestPeer) -> None:
    peer.expect_attach()
    peer.expect_flow(send=[_text("x")])
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        peer.wait()
        assert c.receive(200) is None
        peer.expect_disposition()
        conn.start()
        assert c.receive(2000) is not None
        peer.wait()


def test_closing_consumer_wakes_blocked_receive_with_none(peer: TestPeer) -> None:
    peer.expect_attach()
    peer.expect_flow()
    peer.expect_detach()
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        out: list[object] = []
        t = threading.Thread(target=lambda: out.append(c.receive()))
        t.start()
        time.sleep(0.1)
        c.close()
        t.join(5)
        assert out == [None]
        c.close()  # idempotent
        with pytest.raises(IllegalStateException):
            c.receive_no_wait()
        peer.wait()


def test_peer_detaching_consumer_ends_receive(peer: TestPeer) -> None:
    seen: list[Attach] = []
    peer.expect_attach(seen.append)
    peer.expect_flow()
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        peer.wait()
        peer.detach_link(seen[0].name, ("amqp:resource-deleted", "queue deleted"))
        assert c.receive(3000) is None


def test_anonymous_producer_uses_null_target_when_relay_offered(peer: TestPeer) -> None:
    seen: list[Attach] = []
    got: list[Transfer] = []
    peer.expect_attach(seen.append, offer=10)
    peer.expect_transfer(got.append)
    with _conn(peer) as conn:
        s = conn.create_session()
        p = s.create_producer(None)
        p.send(Queue("dest"), s.create_text_message("x"))
        peer.wait()
    assert seen[0].target_address is None
    assert got[0].message.address == "dest"


def test_selector_not_echoed_topic_filters_locally(peer: TestPeer) -> None:
    peer.expect_attach(echo_filter=False)
    red = _text("red", color="red")
    blue = _text("blue", color="blue")
    peer.expect_flow(send=[blue, red])
    peer.expect_disposition(lambda d: d.state == 0x24)  # 'blue' settled without delivery
    peer.expect_disposition(lambda d: d.state == 0x24)  # 'red' delivered and acknowledged
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Topic("t"), "color = 'red'")
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_text() == "red"
        peer.wait()


def test_selector_not_echoed_on_a_queue_is_refused(peer: TestPeer) -> None:
    from amqp_jms import JMSException

    peer.expect_attach(echo_filter=False)
    peer.expect_flow()
    peer.expect_detach()
    with _conn(peer) as conn:
        s = conn.create_session()
        with pytest.raises(JMSException, match="does not apply message selectors"):
            s.create_consumer(Queue("q"), "color = 'red'")
        peer.wait()


def test_peer_ending_the_session_on_attach_fails_fast(peer: TestPeer) -> None:
    """RabbitMQ answers an unsupported attach (coordinator, dynamic node) by ending the session."""
    from amqp_jms import JMSException

    def end_session(c: Any) -> None:
        for link in c.links.values():
            link.session.condition = Condition("amqp:not-implemented", "coordinator not supported")
            link.session.close()

    peer.expect_attach(lambda a: a.target_is_coordinator, respond=False)
    with _conn(peer) as conn:
        t = threading.Timer(0.1, lambda: peer.run(end_session))
        t.start()
        t0 = time.monotonic()
        with pytest.raises(JMSException, match="not-implemented"):
            conn.create_session(True)
        assert time.monotonic() - t0 < 3
        t.join()


def test_send_blocks_when_the_window_waits_for_credit(peer: TestPeer) -> None:
    from amqp_jms import JMSException
    from amqp_jms.provider.amqp.producer import SEND_WINDOW

    peer.expect_attach(offer=0)
    with _conn(peer, "&jms.forceAsyncSend=true&jms.sendTimeout=300") as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("q"))
        m = s.create_text_message("x")
        for _ in range(SEND_WINDOW):
            p.send(m)
        t0 = time.monotonic()
        with pytest.raises(JMSException, match="waiting for credit"):
            p.send(m)
        assert 0.25 < time.monotonic() - t0 < 3
        peer.wait()
        for _ in range(SEND_WINDOW):
            peer.expect_transfer()
        peer.run(lambda c: next(iter(c.links.values())).flow(SEND_WINDOW + 1))
        peer.wait()
        p.send(m)  # room again
