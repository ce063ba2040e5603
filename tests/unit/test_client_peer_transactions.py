"""Acknowledgement modes and local transactions, frame by frame against the test peer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Described
from proton import Message as PMessage

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    JMSException,
    Queue,
    Session,
    TransactionRolledBackException,
)
from amqp_jms.client import Connection
from amqp_jms.testing.peer import Attach, Disposition, TestPeer, Transfer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
TXN = b"txn-1"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open()
        p.expect_begin()
        yield p


def _conn(peer: TestPeer, options: str = "") -> Connection:
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _text(body: str) -> PMessage:
    return PMessage(body=body, annotations={"x-opt-jms-msg-type": 5})


def _txn_outcome(d: Disposition) -> int:
    return int(d.state_data[1].descriptor)


def test_transacted_session_declares_and_commit_discharges(peer: TestPeer) -> None:
    seen: list[Attach] = []
    sent: list[Transfer] = []
    peer.expect_attach(seen.append, offer=10)  # coordinator
    peer.expect_declare(TXN)
    peer.expect_attach(offer=10)  # producer
    peer.expect_transfer(sent.append)
    peer.expect_discharge(fail=False)
    peer.expect_declare(b"txn-2")
    with _conn(peer) as conn:
        s = conn.create_session(True)
        assert s.get_transacted() and s.get_acknowledge_mode() == Session.SESSION_TRANSACTED
        s.create_producer(Queue("q")).send(s.create_text_message("in txn"))
        s.commit()
        peer.wait()
    c = seen[0]
    assert c.target_is_coordinator and c.target_capabilities == ("amqp:local-transactions",)
    assert c.name.startswith("qpid-jms:coordinator:")
    assert sent[0].state == 0x34 and sent[0].state_data == [TXN]


def test_rejected_commit_raises_transaction_rolled_back(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    peer.expect_discharge(fail=False, reject=("amqp:transaction:rollback", "conflict"))
    peer.expect_declare(b"txn-2")
    with _conn(peer) as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        with pytest.raises(TransactionRolledBackException, match="conflict"):
            s.commit()
        peer.wait()


def test_transacted_acks_carry_the_transaction_and_rollback_releases_prefetched(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    peer.expect_attach()
    peer.expect_flow(send=[_text("a"), _text("b"), _text("c")])
    peer.expect_disposition(disp.append)  # 'a' accepted in the txn
    with _conn(peer) as conn:
        s = conn.create_session(True)
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_text() == "a"
        peer.wait()
        assert disp[0].state == 0x34 and disp[0].state_data[0] == TXN and _txn_outcome(disp[0]) == 0x24
        peer.expect_disposition(disp.append)  # 'b' released (prefetched, never delivered)
        peer.expect_disposition(disp.append)  # 'c' released
        peer.expect_discharge(fail=True)
        peer.expect_declare(b"txn-2")
        s.rollback()
        peer.wait()
    assert [d.state for d in disp[1:]] == [0x26, 0x26]


def test_commit_on_non_transacted_session_is_illegal(peer: TestPeer) -> None:
    with _conn(peer) as conn:
        s = conn.create_session()
        with pytest.raises(IllegalStateException):
            s.commit()
        with pytest.raises(IllegalStateException):
            s.rollback()
        peer.wait()


def test_client_ack_acknowledges_every_consumed_message(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("1"), _text("2"), _text("3")])
    with _conn(peer) as conn:
        s = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        conn.start()
        m1, m2 = c.receive(2000), c.receive(2000)
        assert m1 is not None and m2 is not None
        peer.wait()
        assert not [x for x in peer.log if isinstance(x, Disposition)]  # nothing acked yet
        peer.expect_disposition(disp.append)
        peer.expect_disposition(disp.append)
        m1.acknowledge()  # acknowledges m1 and m2 (all consumed so far), not the third
        peer.wait()
    assert [d.state for d in disp] == [0x24, 0x24] and [d.tag for d in disp] == ["1", "2"]


def test_individual_ack_acknowledges_one(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("1"), _text("2")])
    with _conn(peer) as conn:
        s = conn.create_session(Session.INDIVIDUAL_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        conn.start()
        m1, m2 = c.receive(2000), c.receive(2000)
        assert m1 is not None and m2 is not None
        peer.expect_disposition(disp.append)
        m2.acknowledge()
        peer.wait()
    assert [d.tag for d in disp] == ["2"]


def test_ack_type_property_chooses_the_outcome(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("1")])
    with _conn(peer) as conn:
        s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None
        m.clear_properties()
        m.set_int_property("JMS_AMQP_ACK_TYPE", 2)  # rejected
        peer.expect_disposition(disp.append)
        m.acknowledge()
        peer.wait()
    assert disp[0].state == 0x25


def test_no_acknowledge_mode_uses_presettled_links(peer: TestPeer) -> None:
    seen: list[Attach] = []
    peer.expect_attach(seen.append)
    peer.expect_flow(send=[_text("1")], settled=True)
    with _conn(peer) as conn:
        s = conn.create_session(Session.NO_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        conn.start()
        assert c.receive(2000) is not None
        peer.wait()
    assert seen[0].snd_settle_mode == 1
    assert not [x for x in peer.log if isinstance(x, Disposition)]


def test_recover_redelivers_unacknowledged_in_order(peer: TestPeer) -> None:
    peer.expect_attach()
    peer.expect_flow(send=[_text("1"), _text("2")])
    with _conn(peer) as conn:
        s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
        c = s.create_consumer(Queue("q"))
        conn.start()
        first = [c.receive(2000), c.receive(2000)]
        assert [m.get_text() for m in first if m] == ["1", "2"]
        assert not any(m.get_jms_redelivered() for m in first if m)
        s.recover()
        again = [c.receive(2000), c.receive(2000)]
        assert [m.get_text() for m in again if m] == ["1", "2"]
        assert all(m.get_jms_redelivered() for m in again if m)
        assert [m.get_int_property("JMSXDeliveryCount") for m in again if m] == [2, 2]
        peer.wait()


def test_redelivery_policy_settles_over_the_limit(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach()
    over = _text("old")
    over.delivery_count = 5
    peer.expect_flow(send=[over, _text("new")])
    peer.expect_disposition(disp.append)  # 'old': over the limit
    peer.expect_disposition(disp.append)  # 'new': accepted on receive
    with _conn(peer, "&jms.redeliveryPolicy.maxRedeliveries=2") as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_text() == "new"
        peer.wait()
    assert disp[0].state == 0x27 and disp[0].failed and disp[0].undeliverable
    assert disp[1].state == 0x24


def test_expired_message_is_not_delivered(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach()
    old = _text("expired")
    old.expiry_time = 1.0  # 1970
    peer.expect_flow(send=[old, _text("fresh")])
    peer.expect_disposition(disp.append)
    peer.expect_disposition(disp.append)
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_text() == "fresh"
        peer.wait()
    assert disp[0].state == 0x27 and disp[0].undeliverable


# -- the coordinator lost, declares and discharges unanswered (Qpid JMS's TransactionsIntegrationTest)
COORDINATOR_GONE = ("amqp:internal-error", "coordinator-breadcrumb")


def _is_declare(t: Transfer) -> bool:
    body: Any = t.message.body
    return isinstance(body, Described) and int(body.descriptor) == 0x31


def _is_discharge(t: Transfer) -> bool:
    body: Any = t.message.body
    return isinstance(body, Described) and int(body.descriptor) == 0x32


def _coordinator_name(peer: TestPeer) -> str:
    return next(a.name for a in peer.log if isinstance(a, Attach) and a.target_is_coordinator)


def _close_coordinator(peer: TestPeer) -> None:
    """The peer closes the coordinator link with an error; wait until the client answered."""
    name = _coordinator_name(peer)
    peer.detach_link(name, COORDINATOR_GONE)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and name not in peer.answered_detaches:
        time.sleep(0.01)
    assert name in peer.answered_detaches


def _expect_new_transaction(peer: TestPeer, txn: bytes = b"txn-2") -> list[Attach]:
    seen: list[Attach] = []
    peer.expect_attach(seen.append, offer=10, label="coordinator again")
    peer.expect_declare(txn)
    return seen


def _the_new_transaction_commits(peer: TestPeer, s: Any) -> None:
    peer.expect_discharge(fail=False)
    peer.expect_declare(b"txn-3")
    s.commit()
    peer.wait()


@pytest.mark.parametrize(("end", "raised"),
                         [("commit", TransactionRolledBackException), ("rollback", JMSException)])
def test_after_the_coordinator_closed_remotely_the_transaction_ends_in_error_and_a_new_one_begins(
    peer: TestPeer, end: str, raised: type[JMSException]
) -> None:
    """Qpid JMS: commit is rolled back (TransactionRolledBackException), rollback could not be
    asked for (JMSException); either way a new coordinator link declares a new transaction."""
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    with _conn(peer) as conn:
        s = conn.create_session(True)
        peer.wait()
        _close_coordinator(peer)
        again = _expect_new_transaction(peer)
        with pytest.raises(raised, match="coordinator-breadcrumb") as e:
            getattr(s, end)()
        assert type(e.value) is raised
        peer.wait()
        assert again[0].target_is_coordinator
        _the_new_transaction_commits(peer, s)


def test_coordinator_closed_on_discharge_fails_the_commit_and_begins_anew(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    peer.expect_transfer(_is_discharge, outcome=None)  # answered by closing the coordinator
    peer.expect_declare(respond=False)  # the next transaction's, sent with the discharge: fails with the link
    with _conn(peer) as conn:
        s = conn.create_session(True)
        result: list[BaseException | None] = []

        def commit() -> None:
            try:
                s.commit()
                result.append(None)
            except BaseException as exc:
                result.append(exc)

        t = threading.Thread(target=commit)
        t.start()
        peer.wait()  # the discharge arrived
        _expect_new_transaction(peer)
        peer.detach_link(_coordinator_name(peer), COORDINATOR_GONE)
        t.join(10)
        assert isinstance(result[0], TransactionRolledBackException)
        assert "coordinator-breadcrumb" in str(result[0])
        peer.wait()


def test_send_after_the_coordinator_closed_is_not_sent_and_the_commit_fails(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    peer.expect_attach(offer=10)  # producer
    with _conn(peer) as conn:
        s = conn.create_session(True)
        p = s.create_producer(Queue("q"))
        peer.wait()
        _close_coordinator(peer)
        p.send(s.create_text_message("in a transaction already lost"))  # does not raise
        _expect_new_transaction(peer)
        with pytest.raises(TransactionRolledBackException):
            s.commit()
        peer.wait()
    # nothing reached the queue outside a transaction
    assert not [t for t in peer.log if isinstance(t, Transfer) and t.link_name.startswith("qpid-jms:sender")]


def test_receive_after_the_coordinator_closed_sends_no_ack_until_the_commit_fails(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    peer.expect_attach()
    peer.expect_flow(send=[_text("a")])
    with _conn(peer) as conn:
        s = conn.create_session(True)
        c = s.create_consumer(Queue("q"))
        peer.wait()
        _close_coordinator(peer)
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_text() == "a"
        time.sleep(0.2)
        assert not [d for d in peer.log if isinstance(d, Disposition)]  # no ack in a lost transaction
        peer.expect_disposition(disp.append)  # given back as a failed delivery: it comes again
        _expect_new_transaction(peer)
        with pytest.raises(TransactionRolledBackException):
            s.commit()
        peer.wait()
    assert disp[0].state == 0x27 and disp[0].failed and not disp[0].undeliverable and disp[0].settled


def _timeout_conn(peer: TestPeer) -> Connection:
    return ConnectionFactory(peer.url + "?jms.closeTimeout=1000&jms.requestTimeout=500").create_connection()


def test_session_create_fails_on_declare_timeout_and_ends_the_session(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)
    peer.expect_transfer(_is_declare, outcome=None)
    peer.expect_end()
    with _timeout_conn(peer) as conn:
        started = time.monotonic()
        with pytest.raises(JMSException, match="timed out"):
            conn.create_session(True)
        assert time.monotonic() - started < 3
        peer.wait()


def test_session_create_fails_on_declare_rejection_and_ends_the_session(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)
    peer.expect_transfer(_is_declare, outcome="rejected",
                         condition=("amqp:internal-error", "declare-breadcrumb"))
    peer.expect_end()
    with _conn(peer) as conn:
        with pytest.raises(JMSException, match="declare-breadcrumb"):
            conn.create_session(True)
        peer.wait()


def test_session_create_fails_on_coordinator_refusal_and_ends_the_session(peer: TestPeer) -> None:
    peer.expect_attach(refuse=("amqp:not-implemented", "CoordinatorLinkRefusal-breadcrumb"))
    peer.expect_end()
    with _conn(peer) as conn:
        with pytest.raises(JMSException, match="CoordinatorLinkRefusal-breadcrumb"):
            conn.create_session(True)
        peer.wait()


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_an_unanswered_discharge_times_out_and_a_new_transaction_begins(peer: TestPeer, end: str) -> None:
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    peer.expect_transfer(_is_discharge, outcome=None)
    peer.expect_declare(b"txn-2")
    with _timeout_conn(peer) as conn:
        s = conn.create_session(True)
        with pytest.raises(JMSException, match="timed out") as e:
            getattr(s, end)()
        assert not isinstance(e.value, TransactionRolledBackException)  # in doubt: it may have committed
        peer.wait()
        _the_new_transaction_commits(peer, s)


def test_session_close_with_an_unanswered_rollback_still_closes(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    peer.expect_transfer(_is_discharge, outcome=None)  # discharge(fail=true) on close
    peer.expect_detach()
    peer.expect_end()
    with _timeout_conn(peer) as conn:
        s = conn.create_session(True)
        started = time.monotonic()
        s.close()  # JMS: close does not fail for the peer's silence; the peer rolls back as the link goes
        assert time.monotonic() - started < 3
        peer.wait()


# -- listeners (Qpid JMS's ConsumerIntegrationTest) -------------------------------------------------
def test_listener_that_raises_gets_the_message_again_before_anything_is_settled(peer: TestPeer) -> None:
    """JMS 2.0 8.7: under AUTO_ACKNOWLEDGE a listener's exception redelivers the message at once,
    marked redelivered. Qpid JMS settles it ``released`` and leaves redelivery to the peer; ours
    gives it again locally, so the wire sees one ``accepted`` once the listener succeeds."""
    disp: list[Disposition] = []
    calls: list[tuple[str, bool]] = []
    done = threading.Event()
    peer.expect_attach()
    peer.expect_flow(send=[_text("1")])
    peer.expect_disposition(disp.append)
    with _conn(peer) as conn:
        s = conn.create_session()

        def flaky(m: Any) -> None:
            calls.append((m.get_text(), m.get_jms_redelivered()))
            if len(calls) == 1:
                raise RuntimeError("boom")
            done.set()

        s.create_consumer(Queue("q")).set_message_listener(flaky)
        conn.start()
        assert done.wait(5)
        peer.wait()
    assert calls == [("1", False), ("1", True)]
    assert [(d.state, d.settled) for d in disp] == [(0x24, True)]


def test_recover_in_a_listener_gives_the_messages_again_in_order(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    calls: list[tuple[str, bool]] = []
    done = threading.Event()
    peer.expect_attach()
    peer.expect_flow(send=[_text("1"), _text("2")])
    peer.expect_disposition(disp.append)
    peer.expect_disposition(disp.append)
    with _conn(peer) as conn:
        s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)

        def listener(m: Any) -> None:
            calls.append((m.get_text(), m.get_jms_redelivered()))
            if len(calls) == 2:
                s.recover()  # neither acknowledged: both come again, in order
            elif len(calls) == 4:
                m.acknowledge()
                done.set()

        s.create_consumer(Queue("q")).set_message_listener(listener)
        conn.start()
        assert done.wait(5)
        peer.wait()
    assert calls == [("1", False), ("2", False), ("1", True), ("2", True)]
    assert [(d.tag, d.state) for d in disp] == [("1", 0x24), ("2", 0x24)]


@pytest.mark.parametrize("mode", [Session.CLIENT_ACKNOWLEDGE, Session.INDIVIDUAL_ACKNOWLEDGE])
def test_a_listener_acknowledging_its_message_settles_that_message(peer: TestPeer, mode: int) -> None:
    """The Java idiom ``onMessage(m) { work(m); m.acknowledge(); }``: the message being handled is
    consumed, so its own acknowledgement settles it (and, CLIENT, everything before it)."""
    disp: list[Disposition] = []
    seen: list[str] = []
    peer.expect_attach()
    peer.expect_flow(send=[_text("1"), _text("2")])
    peer.expect_disposition(disp.append)
    peer.expect_disposition(disp.append)
    with _conn(peer) as conn:
        s = conn.create_session(mode)
        def work_then_acknowledge(m: Any) -> None:
            seen.append(m.get_text())
            m.acknowledge()

        s.create_consumer(Queue("q")).set_message_listener(work_then_acknowledge)
        conn.start()
        peer.wait()
        time.sleep(0.2)
        s.recover()  # nothing left unacknowledged: nothing comes again
        time.sleep(0.2)
    assert [(d.tag, d.state) for d in disp] == [("1", 0x24), ("2", 0x24)]
    assert len([d for d in peer.log if isinstance(d, Disposition)]) == 2
    assert seen == ["1", "2"]  # an acknowledged message is never given again


def test_a_commit_cut_off_by_a_stopped_io_thread_leaves_no_coroutine_unawaited(peer: TestPeer) -> None:
    """A crash can stop the connection's I/O thread between the application's commit and the
    start of its discharge: the commit fails (IllegalStateException naming the stopped thread)
    and Python has nothing to warn about (it printed ``RuntimeWarning: coroutine '_discharge'
    was never awaited``)."""
    import gc
    import warnings

    peer.expect_attach(offer=10)
    peer.expect_declare(TXN)
    conn = _conn(peer)
    try:
        s = conn.create_session(True)
        peer.wait()
        s._provider_session.provider.loop_thread.stop()  # what the crash does to the I/O thread
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(IllegalStateException, match="I/O thread has stopped"):
                s.commit()
            with pytest.raises(IllegalStateException, match="I/O thread has stopped"):
                s.rollback()
            gc.collect()
        assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
    finally:
        conn.close()
