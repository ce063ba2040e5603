"""Delivery accounting frame by frame, against the scripted peer: the behaviours of Qpid JMS's
AmqpAcknowledgements, PresettledConsumer/Producer, NoAckSession, ZeroPrefetch, IdleTimeout,
JMSContext, JMSConsumer and JMSProducer integration tests that the rest of the peer suites do
not already cover (docs/qpid-jms-parity.md maps each behaviour to its test)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as PMessage
from proton import byte, symbol

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    IllegalStateRuntimeException,
    JMSContext,
    JMSException,
    MessageFormatRuntimeException,
    Queue,
    Session,
    TextMessage,
)
from amqp_jms.client import Connection
from amqp_jms.testing.peer import Attach, Disposition, Flow, Open, TestPeer, Transfer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
ACCEPTED, REJECTED, RELEASED, MODIFIED = 0x24, 0x25, 0x26, 0x27


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def _open(peer: TestPeer) -> None:
    peer.expect_open()
    peer.expect_begin()


def _conn(peer: TestPeer, options: str = "") -> Connection:
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _text(body: str) -> PMessage:
    return PMessage(body=body, annotations={symbol("x-opt-jms-msg-type"): byte(5)})


def _wait_queued(consumer: Any, n: int) -> None:
    deadline = time.monotonic() + 5
    while len(consumer._queue) < n and time.monotonic() < deadline:
        time.sleep(0.01)


# -- poison messages (AmqpConsumer.processDelivery) ------------------------------------------------
def test_poison_transfer_is_settled_modified_undeliverable_and_skipped(peer: TestPeer) -> None:
    _open(peer)
    poison = PMessage(body="?", annotations={symbol("x-opt-jms-msg-type"): byte(9)})
    disp: list[Disposition] = []
    peer.expect_attach()
    peer.expect_flow(send=[poison, _text("ok")])
    peer.expect_disposition(disp.append)
    peer.expect_disposition(disp.append)
    with _conn(peer) as conn:
        c = conn.create_session().create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_body(str) == "ok"
        peer.wait()
    first = disp[0]
    assert (first.state, first.failed, first.undeliverable, first.settled) == (MODIFIED, True, True, True)
    assert disp[1].state == ACCEPTED


# -- messages never seen are released (AmqpConsumer stop-and-release) ------------------------------
def test_consumer_close_drains_then_releases_unseen_prefetched(peer: TestPeer) -> None:
    _open(peer)
    disp: list[Disposition] = []
    flows: list[Flow] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("1"), _text("2"), _text("3")])
    peer.expect_disposition(disp.append)  # "1", accepted as receive returns it
    with _conn(peer) as conn:
        c = conn.create_session().create_consumer(Queue("q"))
        conn.start()
        assert c.receive(2000) is not None
        _wait_queued(c, 2)
        peer.wait()
        peer.expect_flow(lambda f: flows.append(f) or f.drain, drained=True)
        peer.expect_disposition(disp.append)
        peer.expect_disposition(disp.append)
        peer.expect_detach()
        c.close()
        peer.wait()
    assert [d.state for d in disp] == [ACCEPTED, RELEASED, RELEASED] and all(d.settled for d in disp)
    assert flows[0].drain


# -- AmqpAcknowledgements --------------------------------------------------------------------------
@pytest.mark.parametrize(("ack_type", "state"), [(1, ACCEPTED), (2, REJECTED), (3, RELEASED), (4, MODIFIED),
                                                 (5, MODIFIED)])
@pytest.mark.parametrize("listener", [False, True])
def test_ack_type_on_the_acknowledged_message_applies_to_all(peer: TestPeer, ack_type: int, state: int,
                                                             listener: bool) -> None:
    _open(peer)
    disp: list[Disposition] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("1"), _text("2"), _text("3")])
    with _conn(peer) as conn:
        s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        got: list[Any] = []
        three = threading.Event()
        if listener:
            c.set_message_listener(lambda m: (got.append(m), len(got) == 3 and three.set()))
            conn.start()
            assert three.wait(5)
        else:
            conn.start()
            got = [c.receive(2000) for _ in range(3)]
        last = got[-1]
        last.clear_properties()
        last.set_int_property("JMS_AMQP_ACK_TYPE", 99)
        with pytest.raises(JMSException, match="99"):
            last.acknowledge()  # refused, nothing settled
        last.set_int_property("JMS_AMQP_ACK_TYPE", ack_type)
        for _ in range(3):
            peer.expect_disposition(disp.append)
        last.acknowledge()
        peer.wait()
    assert [d.state for d in disp] == [state] * 3
    if ack_type >= 4:
        assert all(d.failed for d in disp) and all(d.undeliverable == (ack_type == 5) for d in disp)


def test_client_acknowledge_of_many_leaves_as_disposition_ranges() -> None:
    """CLIENT_ACKNOWLEDGE ``acknowledge()`` of 40 delivered messages: every one accepted and
    settled, in a handful of disposition frames (ranges), not one frame per message (the Spark
    receiver accepts a 10^4 segment this way)."""
    n = 40
    disp: list[Disposition] = []
    with TestPeer(trace_frames=True) as peer:
        _open(peer)
        peer.expect_attach()
        peer.expect_flow(send=[_text(str(i)) for i in range(n)])
        with _conn(peer) as conn:
            s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
            c = s.create_consumer(Queue("q"))
            conn.start()
            got = [c.receive(2000) for _ in range(n)]
            assert all(m is not None for m in got)
            peer.wait()
            for _ in range(n):
                peer.expect_disposition(disp.append)
            s.acknowledge()
            peer.wait()
        frames = [f for f in peer.frames if "@disposition" in f and "<-" in f]
    assert [d.state for d in disp] == [ACCEPTED] * n and all(d.settled for d in disp)
    assert 1 <= len(frames) <= 3, frames


def test_acknowledge_fails_after_the_session_is_closed(peer: TestPeer) -> None:
    _open(peer)
    peer.expect_attach()
    peer.expect_flow(send=[_text("1")])
    with _conn(peer) as conn:
        s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None
        s.close()
        with pytest.raises(IllegalStateException):
            m.acknowledge()


def test_client_ack_consumer_closed_before_acknowledge_keeps_its_link(peer: TestPeer) -> None:
    _open(peer)
    disp: list[Disposition] = []
    detached: list[Any] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("1")])
    with _conn(peer) as conn:
        s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None
        peer.wait()
        peer.expect_flow(lambda f: f.drain, drained=True)  # no more credit: nothing new comes
        c.close()
        peer.wait()  # no detach yet
        peer.expect_disposition(disp.append)
        peer.expect_detach(detached.append)
        m.acknowledge()
        peer.wait()
    assert disp[0].state == ACCEPTED and detached


# -- PresettledConsumer / PresettledProducer / NoAckSession ----------------------------------------
def _coordinator(peer: TestPeer) -> None:
    peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
    peer.expect_declare()


@pytest.mark.parametrize("transacted", [False, True])
def test_presettle_all_consumer_is_presettled_unless_transacted(peer: TestPeer, transacted: bool) -> None:
    _open(peer)
    seen: list[Attach] = []
    if transacted:
        _coordinator(peer)
    peer.expect_attach(seen.append)
    peer.expect_flow()
    with _conn(peer, "&jms.presettlePolicy.presettleAll=true") as conn:
        conn.create_session(transacted).create_consumer(Queue("q"))
        peer.wait()
    assert seen[0].snd_settle_mode == (0 if transacted else 1)  # 0 unsettled, 1 settled


@pytest.mark.parametrize("transacted", [False, True])
def test_presettle_transacted_producers_applies_only_in_transactions(peer: TestPeer,
                                                                     transacted: bool) -> None:
    _open(peer)
    seen: list[Attach] = []
    sent: list[Transfer] = []
    if transacted:
        _coordinator(peer)
    peer.expect_attach(seen.append, offer=10)
    peer.expect_transfer(sent.append, outcome=None)
    with _conn(peer, "&jms.presettlePolicy.presettleTransactedProducers=true") as conn:
        p = conn.create_session(transacted).create_producer(Queue("q"))
        p.send(TextMessage("x"), delivery_mode=1)
        peer.wait()
    assert seen[0].snd_settle_mode == (1 if transacted else 0)
    assert sent[0].settled == transacted


def test_no_ack_session_presettles_consumers_not_producers(peer: TestPeer) -> None:
    _open(peer)
    seen: list[Attach] = []
    peer.expect_attach(seen.append, offer=10)
    peer.expect_attach(seen.append)
    peer.expect_flow()
    with _conn(peer) as conn:
        s = conn.create_session(Session.NO_ACKNOWLEDGE)
        s.create_producer(Queue("q"))
        s.create_consumer(Queue("q"))
        peer.wait()
    assert [a.snd_settle_mode for a in seen] == [0, 1]


# -- ZeroPrefetch ----------------------------------------------------------------------------------
def test_zero_prefetch_listener_pulls_one_credit_at_a_time(peer: TestPeer) -> None:
    _open(peer)
    disp: list[Disposition] = []
    got: list[str] = []
    seen: list[Attach] = []
    arrived = threading.Semaphore(0)
    peer.expect_attach(seen.append)
    peer.expect_flow(lambda f: f.credit == 1, send=[_text("1")])
    peer.expect_disposition(disp.append)
    with _conn(peer, "&jms.prefetchPolicy.all=0") as conn:
        c = conn.create_session().create_consumer(Queue("q"))
        c.set_message_listener(lambda m: (got.append(m.get_text()), arrived.release()))
        conn.start()
        assert arrived.acquire(timeout=5)
        peer.wait()
        # the listener is ready again: one more credit (its flow may pass the disposition on the
        # wire, so it is read from the peer's record rather than scripted in order)
        peer.expect_disposition(disp.append)
        peer.send(seen[0].name, _text("2"))  # goes out on that credit
        assert arrived.acquire(timeout=5)
        peer.wait()
        deadline = time.monotonic() + 3
        while sum(f.credit == 1 for f in peer.flows) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
    assert got == ["1", "2"] and [d.state for d in disp] == [ACCEPTED, ACCEPTED]
    assert sum(f.credit == 1 for f in peer.flows) >= 3 and max(f.credit for f in peer.flows) == 1


# -- IdleTimeout -----------------------------------------------------------------------------------
def test_connection_fails_when_the_peer_neglects_empty_frames(peer: TestPeer) -> None:
    _open(peer)
    heard: list[tuple[float, JMSException]] = []
    ev = threading.Event()
    with _conn(peer, "&amqp.idleTimeout=600") as conn:
        conn.set_exception_listener(lambda e: (heard.append((time.monotonic(), e)), ev.set()))
        conn.create_session()
        peer.wait()

        def go_silent(c: Any) -> None:
            c.engine.tick = lambda now: 0.0  # the peer stops sending anything, heartbeats too

        peer.run(go_silent)
        silent = time.monotonic()
        assert ev.wait(5)
    took = heard[0][0] - silent
    assert took < 1.0, f"found after {took:.2f} s with amqp.idleTimeout=600 ms"
    assert type(heard[0][1]) is JMSException and "amqp.idleTimeout" in str(heard[0][1])


# -- JMSContext / JMSConsumer / JMSProducer ---------------------------------------------------------
def test_context_set_client_id_names_the_container_and_one_producer_serves_all_sends(peer: TestPeer) -> None:
    opened: list[Open] = []
    attaches: list[Attach] = []
    peer.expect_open(opened.append, offered_capabilities=["ANONYMOUS-RELAY"])
    peer.expect_begin()
    peer.expect_attach(attaches.append, offer=10)
    peer.expect_transfer()
    peer.expect_transfer()
    ctx = ConnectionFactory(peer.url + FAST).create_context()
    with ctx:
        ctx.set_client_id("ctx-client")
        assert ctx.get_session_mode() == JMSContext.AUTO_ACKNOWLEDGE
        ctx.create_producer().send(Queue("a"), "1")
        ctx.create_producer().send(Queue("b"), "2")  # the same (anonymous) producer link
        peer.wait()
    assert opened[0].container_id == "ctx-client"
    assert len(attaches) == 1 and attaches[0].target_address is None


@pytest.mark.parametrize("mode", [JMSContext.AUTO_ACKNOWLEDGE, JMSContext.DUPS_OK_ACKNOWLEDGE,
                                  JMSContext.CLIENT_ACKNOWLEDGE])
def test_receive_body_of_the_wrong_type_does_not_accept(peer: TestPeer, mode: int) -> None:
    _open(peer)
    disp: list[Disposition] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("hello")])
    with ConnectionFactory(peer.url + FAST + "&jms.receiveLocalOnly=true").create_context(mode) as ctx:
        c = ctx.create_consumer(Queue("q"))
        with pytest.raises(MessageFormatRuntimeException):
            c.receive_body(dict, 2000)
        peer.wait()
        assert not [x for x in peer.log if isinstance(x, Disposition)]  # not accepted
        if mode == JMSContext.CLIENT_ACKNOWLEDGE:
            assert c.receive_body(str, 200) is None  # delivered (CLIENT_ACK): not again
        else:
            peer.expect_disposition(disp.append)
            assert c.receive_body(str, 2000) == "hello"  # the same message, now accepted
            peer.wait()
            assert [d.state for d in disp] == [ACCEPTED]


def test_jms_producer_properties_are_sent_and_override_the_message(peer: TestPeer) -> None:
    _open(peer)
    sent: list[Transfer] = []
    peer.expect_attach(offer=10)
    peer.expect_transfer(sent.append)
    with ConnectionFactory(peer.url + FAST).create_context() as ctx:
        m = ctx.create_text_message("x")
        m.set_int_property("a", 1)
        ctx.create_producer().set_property("a", 2).set_string_property("b", "s").send(Queue("q"), m)
        peer.wait()
    props = sent[0].message.properties
    assert props["a"] == 2 and props["b"] == "s"


def test_sync_receive_fails_when_a_listener_is_set(peer: TestPeer) -> None:
    _open(peer)
    peer.expect_attach()
    peer.expect_flow()
    with ConnectionFactory(peer.url + FAST).create_context() as ctx:
        c = ctx.create_consumer(Queue("q"))
        c.set_message_listener(lambda m: None)
        with pytest.raises(IllegalStateRuntimeException):
            c.receive(100)
        peer.wait()
