"""Which sends wait for the peer's outcome, frame by frame (Qpid JMS's rule, as in its
PresettledProducer/Producer/Transactions integration tests): a send waits only when it is
PERSISTENT outside a transaction, or with ``jms.forceSyncSend=true``. NON_PERSISTENT sends and
sends in a transacted session return once handed over; a refusal of one reaches the
ExceptionListener, or fails the commit (rolled back)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import (
    ConnectionFactory,
    DeliveryMode,
    JMSException,
    Queue,
    TextMessage,
    TransactionRolledBackException,
)
from amqp_jms.testing.peer import TestPeer, Transfer

FAST = "?jms.closeTimeout=1000&jms.requestTimeout=5000&jms.sendTimeout=1500"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def _session_and_producer(peer: TestPeer, options: str = "",
                          transacted: bool = False) -> tuple[Any, Any, Any]:
    peer.expect_open()
    peer.expect_begin()
    if transacted:
        peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
        peer.expect_declare()
    peer.expect_attach(lambda a: a.role == "sender", offer=10)
    conn = ConnectionFactory(peer.url + FAST + options).create_connection()
    session = conn.create_session(transacted)
    return conn, session, session.create_producer(Queue("q"))


def _timed(fn: Any) -> float:
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


def test_non_persistent_send_does_not_wait_persistent_does(peer: TestPeer) -> None:
    conn, _s, producer = _session_and_producer(peer)
    peer.expect_transfer(lambda t: t.message.body == "np", outcome=None)  # never answered
    peer.expect_transfer(lambda t: t.message.body == "p", outcome=None)
    with conn:
        np = DeliveryMode.NON_PERSISTENT
        assert _timed(lambda: producer.send(TextMessage("np"), delivery_mode=np)) < 1.0
        with pytest.raises(JMSException, match="send"):
            producer.send(TextMessage("p"))  # PERSISTENT: waits for the outcome, times out
        peer.wait()


def test_force_sync_send_makes_non_persistent_wait(peer: TestPeer) -> None:
    conn, _s, producer = _session_and_producer(peer, "&jms.forceSyncSend=true")
    peer.expect_transfer(outcome=None)
    with conn:
        with pytest.raises(JMSException):
            producer.send(TextMessage("np"), delivery_mode=DeliveryMode.NON_PERSISTENT)
        peer.wait()


def test_refused_non_persistent_send_reaches_the_exception_listener(peer: TestPeer) -> None:
    conn, _s, producer = _session_and_producer(peer)
    peer.expect_transfer(outcome="rejected", condition=("amqp:precondition-failed", "no room"))
    heard: list[JMSException] = []
    got = threading.Event()
    with conn:
        conn.set_exception_listener(lambda e: (heard.append(e), got.set()))
        producer.send(TextMessage("np"), delivery_mode=DeliveryMode.NON_PERSISTENT)
        assert got.wait(5)
        assert "no room" in str(heard[0])
        peer.wait()


def test_transacted_send_does_not_wait_and_commit_discharges(peer: TestPeer) -> None:
    conn, session, producer = _session_and_producer(peer, transacted=True)
    order: list[str] = []
    peer.expect_transfer(lambda t: order.append(t.message.body) or True, outcome=None)
    peer.expect_discharge(fail=False)
    peer.expect_declare(b"txn-2")
    with conn:
        assert _timed(lambda: producer.send(TextMessage("tx"))) < 1.0  # PERSISTENT, transacted
        session.commit()
        peer.wait()
    assert order == ["tx"]


def test_refused_transacted_send_fails_the_commit(peer: TestPeer) -> None:
    conn, session, producer = _session_and_producer(peer, transacted=True)
    peer.expect_transfer(outcome="rejected", condition=("amqp:precondition-failed", "no room"))
    peer.expect_discharge(fail=True)  # rolled back, not committed
    peer.expect_declare(b"txn-2")
    with conn:
        producer.send(TextMessage("tx"))
        time.sleep(0.3)  # the refusal arrives before the commit
        with pytest.raises(TransactionRolledBackException, match="no room"):
            session.commit()
        peer.wait()


def test_transacted_send_check(peer: TestPeer) -> None:
    """The transfer of a transacted send carries the transaction id (not waited for)."""
    conn, session, producer = _session_and_producer(peer, transacted=True)
    seen: list[Transfer] = []
    peer.expect_transfer(seen.append, outcome=None)
    peer.expect_discharge(fail=False)
    peer.expect_declare(b"txn-2")
    with conn:
        producer.send(TextMessage("x"))
        session.commit()
        peer.wait()
    assert seen[0].state == 0x34 and bytes(seen[0].state_data[0]) == b"txn-1"  # transactional-state
