"""A commit or rollback sends the next transaction's declare right behind its discharge, before
the discharge is answered (as Qpid JMS does), so it costs one round trip; frame by frame against
the test peer, with the rules that must survive it: the discharge's outcome is the commit's, the
pre-declared transaction is used or discarded correctly, a closing session rolls it back."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_failover_peer_frames import in_thread

from amqp_jms import ConnectionFactory, JMSException, Queue, Session, TransactionRolledBackException
from amqp_jms.client import Connection
from amqp_jms.testing.peer import Disposition, TestPeer, Transfer

TXN1, TXN2, TXN3 = b"txn-1", b"txn-2", b"txn-3"
ROLLBACK = ("amqp:transaction:rollback", "discharge-breadcrumb")


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open()
        p.expect_begin()
        p.expect_attach(offer=10)  # the coordinator
        p.expect_declare(TXN1)
        yield p


def _conn(peer: TestPeer, timeout_ms: int = 5000) -> Connection:
    options = f"?jms.closeTimeout=2000&jms.requestTimeout={timeout_ms}"
    return ConnectionFactory(peer.url + options).create_connection()


def _sends_in(peer: TestPeer, s: Any, txn: bytes) -> None:
    """A message sent now goes in transaction ``txn``."""
    peer.expect_attach(offer=10)
    peer.expect_transfer(lambda t: t.state_data == [txn] and t.message.body == "next")
    s.create_producer(Queue("q")).send(s.create_text_message("next"))
    peer.wait()


def _not_done_for(out: list[Any], seconds: float = 0.2) -> bool:
    time.sleep(seconds)
    return not out


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_the_next_declare_goes_out_before_the_discharge_is_answered(peer: TestPeer, end: str) -> None:
    """Both requests are on the wire while the peer has answered neither: one round trip. The
    call returns once both answers are in, and the declared transaction is the current one."""
    discharges: list[Any] = []
    declares: list[Any] = []
    peer.expect_discharge(fail=end == "rollback", txn_id=TXN1, respond=False, hold=discharges)
    peer.expect_declare(respond=False, hold=declares)
    with _conn(peer) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        t, out = in_thread(getattr(s, end))
        peer.wait()  # the declare arrived, the discharge still unanswered
        log = [x for x in peer.log if isinstance(x, Transfer)]
        assert [int(x.message.body.descriptor) for x in log[-2:]] == [0x32, 0x31]
        # each control is its amqp-value section alone, as Qpid JMS sends it: the discharge
        # names the transaction (binary) and says whether it fails
        fail = b"\x41" if end == "rollback" else b"\x42"
        assert log[-2].payload == b"\x00\x53\x77\x00\x53\x32\xc0\x09\x02\xa0\x05" + TXN1 + fail
        assert log[-1].payload == b"\x00\x53\x77\x00\x53\x31\x45"
        assert not [x for x in peer.log if isinstance(x, Disposition)]
        assert _not_done_for(out)
        peer.answer_discharge(discharges[0])
        assert _not_done_for(out), "returned before the next transaction was declared"
        peer.answer_declare(declares[0], TXN2)
        t.join(5)
        assert out == [("ok", None)]
        _sends_in(peer, s, TXN2)


def test_answers_in_either_order_complete_the_commit(peer: TestPeer) -> None:
    discharges: list[Any] = []
    declares: list[Any] = []
    peer.expect_discharge(fail=False, respond=False, hold=discharges)
    peer.expect_declare(respond=False, hold=declares)
    with _conn(peer) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        t, out = in_thread(s.commit)
        peer.wait()
        peer.answer_declare(declares[0], TXN2)
        assert _not_done_for(out), "returned before the discharge was answered"
        peer.answer_discharge(discharges[0])
        t.join(5)
        assert out == [("ok", None)]
        _sends_in(peer, s, TXN2)


def test_a_refused_commit_raises_rolled_back_and_the_session_goes_on_in_the_declared_transaction(
        peer: TestPeer) -> None:
    peer.expect_discharge(fail=False, reject=ROLLBACK)
    peer.expect_declare(TXN2)
    with _conn(peer) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        with pytest.raises(TransactionRolledBackException, match="discharge-breadcrumb"):
            s.commit()
        peer.wait()
        _sends_in(peer, s, TXN2)
        peer.expect_discharge(fail=False, txn_id=TXN2)
        peer.expect_declare(TXN3)
        s.commit()
        peer.wait()


def test_a_refused_commit_whose_declare_failed_too_reports_the_rollback_and_then_the_lost_transaction(
        peer: TestPeer) -> None:
    """The discharge's outcome is the commit's (Qpid JMS); the failed declare leaves the session
    with no transaction: its sends go nowhere and the next commit reports it rolled back, after
    declaring again."""
    peer.expect_discharge(fail=False, reject=ROLLBACK)
    peer.expect_transfer(lambda t: int(t.message.body.descriptor) == 0x31, outcome="rejected",
                         condition=("amqp:internal-error", "declare-breadcrumb"))
    peer.expect_attach(offer=10)  # producer
    with _conn(peer) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        with pytest.raises(TransactionRolledBackException, match="discharge-breadcrumb"):
            s.commit()
        s.create_producer(Queue("q")).send(s.create_text_message("in no transaction"))
        peer.wait()
        peer.expect_declare(TXN2)
        with pytest.raises(TransactionRolledBackException, match="did not declare"):
            s.commit()
        peer.wait()
        _sends_in(peer, s, TXN2)
    assert not [t for t in peer.log if isinstance(t, Transfer) and t.message.body == "in no transaction"]


def test_a_good_commit_whose_declare_was_refused_raises_that(peer: TestPeer) -> None:
    peer.expect_discharge(fail=False)
    peer.expect_transfer(lambda t: int(t.message.body.descriptor) == 0x31, outcome="rejected",
                         condition=("amqp:internal-error", "declare-breadcrumb"))
    with _conn(peer) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        with pytest.raises(JMSException, match="declare-breadcrumb") as e:
            s.commit()
        assert not isinstance(e.value, TransactionRolledBackException)
        peer.wait()
        peer.expect_declare(TXN2)  # the next rollback begins a transaction again
        s.rollback()
        peer.wait()
        _sends_in(peer, s, TXN2)


def test_a_commit_whose_discharge_and_declare_both_time_out_leaves_the_session_in_doubt(
        peer: TestPeer) -> None:
    """Qpid JMS's testTransactionCommitTimesOutAndNoNextBeginTimesOut: the commit raises the
    timeout (in doubt: it may have committed); with no transaction declared, the next commit
    is rolled back and begins one again."""
    peer.expect_discharge(fail=False, respond=False)
    peer.expect_declare(respond=False)
    with _conn(peer, timeout_ms=500) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        started = time.monotonic()
        with pytest.raises(JMSException, match="timed out") as e:
            s.commit()
        assert not isinstance(e.value, TransactionRolledBackException)
        assert time.monotonic() - started < 3
        peer.wait()
        peer.expect_declare(TXN2)
        with pytest.raises(TransactionRolledBackException):
            s.commit()
        peer.wait()
        _sends_in(peer, s, TXN2)


def test_closing_the_session_rolls_back_the_pre_declared_transaction_and_declares_none(
        peer: TestPeer) -> None:
    peer.expect_discharge(fail=False, txn_id=TXN1)
    peer.expect_declare(TXN2)
    with _conn(peer) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        s.commit()
        peer.wait()
        peer.expect_discharge(fail=True, txn_id=TXN2)
        peer.expect_detach()  # the coordinator
        peer.expect_end()
        s.close()
        peer.wait()
    declares = [t for t in peer.log if isinstance(t, Transfer) and int(t.message.body.descriptor) == 0x31]
    assert len(declares) == 2
