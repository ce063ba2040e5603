"""What a failover connection does with work in flight when the connection goes, frame by frame
against the scripted peer (Qpid JMS's FailoverIntegrationTest): a commit whose discharge was never
answered, a session or link whose create was never answered, a send whose outcome never came, a
remote Close with ``amqp:connection:forced``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from proton import Endpoint
from proton import Message as PMessage
from test_failover_peer_frames import expect_transacted_connection, failover_of, in_thread, url, wait_for

from amqp_jms import (
    ConnectionFactory,
    JMSException,
    Queue,
    Session,
    TransactionRolledBackException,
)
from amqp_jms.testing.peer import Attach, TestPeer


def _text(body: str) -> PMessage:
    return PMessage(body=body, annotations={"x-opt-jms-msg-type": 5})


@pytest.mark.parametrize("commit", [True, False], ids=["commit", "rollback"])
def test_discharge_whose_answer_was_lost_fails_a_commit_and_the_session_carries_on(commit: bool) -> None:
    """testTxCommitThrowsWhenNoDischargeResponseSentAndConnectionDrops (with a reconnect),
    testTransactionCommit/RollbackWithNoResponseRecoveredAsInDoubtAndPerformsNoWork: the
    discharge went out and its answer went with the connection, so the outcome is unknown: a
    commit raises TransactionRolledBackException (Qpid JMS's rule), a rollback returns (the work
    is undone either way); the session declares a new transaction on the new connection and its
    next commit works."""
    with TestPeer() as peer:
        expect_transacted_connection(peer, b"txn-1")
        peer.expect_attach(offer=10)
        peer.expect_transfer()
        peer.expect_discharge(fail=not commit, respond=False)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session(Session.SESSION_TRANSACTED)
            p = s.create_producer(Queue("q"))
            p.send(s.create_text_message("in the lost transaction"))
            t, out = in_thread(s.commit if commit else s.rollback)
            peer.wait()
            assert not out, "returned before the discharge was answered"
            expect_transacted_connection(peer, b"txn-2")
            peer.expect_attach(lambda a: a.target_address == "q", offer=10)
            peer.drop()
            t.join(5)
            if commit:
                assert out and out[0][0] == "raised" and isinstance(out[0][1], TransactionRolledBackException)
            else:
                assert out == [("ok", None)]
            peer.wait()
            peer.expect_transfer(lambda tr: tr.message.body == "kept" and tr.state_data == [b"txn-2"])
            peer.expect_discharge(fail=False)
            peer.expect_declare(b"txn-3")
            p.send(s.create_text_message("kept"))
            s.commit()
            peer.wait()


def test_commit_whose_discharge_was_not_answered_fails_when_failover_gives_up() -> None:
    """testTxCommitThrowsWhenNoDischargeResponseSentAndConnectionDrops as Qpid JMS runs it: the
    peer closes the connection (amqp:connection:forced) instead of answering the discharge and
    no reconnect succeeds: the commit raises, and the ExceptionListener and the connection
    listener's on_connection_failure each hear it once."""
    errors: list[JMSException] = []
    failures: list[BaseException] = []

    class Listener:
        def on_connection_failure(self, exc: BaseException) -> None:
            failures.append(exc)

    with TestPeer() as peer:
        expect_transacted_connection(peer, b"txn-1")
        peer.expect_discharge(fail=False, respond=False)
        u = url(peer, options="&failover.maxReconnectAttempts=1")
        with ConnectionFactory(u).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.add_connection_listener(Listener())
            s = conn.create_session(Session.SESSION_TRANSACTED)
            t, out = in_thread(s.commit)
            peer.wait()
            peer.expect_open(refuse=("amqp:unauthorized-access", "not any more"))
            peer.close_connection(("amqp:connection:forced", "Server is going away"))
            t.join(5)
            assert out and out[0][0] == "raised" and isinstance(out[0][1], JMSException)
            assert wait_for(lambda: len(errors) == 1 and len(failures) == 1)
            peer.wait()
    assert len(errors) == 1 and len(failures) == 1


def test_session_whose_begin_was_not_answered_is_created_on_the_next_connection() -> None:
    """testSessionCreationRecoversAfterDropWithNoBeginResponse (and the multiple-session one):
    a create_session waiting for its Begin when the connection drops returns once the session is
    begun on the next connection, after the sessions created before it; its consumer works."""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_begin(respond=False)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            conn.create_session()
            t, out = in_thread(conn.create_session)
            peer.wait()
            assert not out, "create_session returned before its Begin was answered"
            peer.expect_open()
            peer.expect_begin()
            peer.expect_begin()
            peer.drop()
            t.join(5)
            assert out and out[0][0] == "ok", out
            peer.wait()
            s2: Session = out[0][1]
            peer.expect_attach(lambda a: names.append(a.name) or a.source_address == "myQueue")
            peer.expect_flow()
            c = s2.create_consumer(Queue("myQueue"))
            peer.wait()
            peer.send(names[0], _text("myContent"))
            m = c.receive(5000)
            assert m is not None and m.get_text() == "myContent"


def test_sender_and_receiver_whose_attach_was_not_answered_survive_a_failed_recovery_attempt() -> None:
    """testSenderAndReceiverCreationRecoversAfterDropWithNoAttachResponseAndFailedRecoveryAttempt
    (and testMultipleSenderCreationRecovers...): a consumer create waiting for its Attach at the
    drop; the next connection drops too while the producer's re-attach is unanswered; the third
    re-creates both, producer first, and the waiting create returns the consumer."""
    first: list[Attach] = []
    last: list[Attach] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(first.append, offer=10)
        peer.expect_attach(first.append, respond=False)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            p = s.create_producer(Queue("myQueue"))
            t, out = in_thread(lambda: s.create_consumer(Queue("myQueue")))
            peer.wait()
            assert not out, "create_consumer returned before its Attach was answered"
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(lambda a: a.role == "sender", respond=False)
            peer.drop()
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(last.append, offer=10)
            peer.expect_attach(last.append)
            peer.expect_flow()
            peer.drop()
            t.join(5)
            assert out and out[0][0] == "ok", out
            peer.wait()
            assert [(a.role, a.name) for a in last] == [(a.role, a.name) for a in first]
            peer.expect_transfer(lambda tr: tr.message.body == "after")
            p.send(s.create_text_message("after"))
            peer.wait()
            peer.send(last[1].name, _text("back"))
            m = out[0][1].receive(5000)
            assert m is not None and m.get_text() == "back"


def test_remote_close_with_connection_forced_fails_over_to_the_backup() -> None:
    """testFailoverHandlesRemotelyEndConnectionForced: a Close with amqp:connection:forced is a
    loss, not an end: the connection moves to the next server (on_connection_restored names it),
    the session is begun there and the ExceptionListener hears nothing."""
    errors: list[JMSException] = []
    restored: list[str] = []

    class Listener:
        def on_connection_restored(self, uri: str) -> None:
            restored.append(uri)

    with TestPeer() as forcing, TestPeer() as backup:
        forcing.expect_open()
        forcing.expect_begin()
        backup.expect_open()
        backup.expect_begin()
        with ConnectionFactory(url(forcing, backup)).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.add_connection_listener(Listener())
            conn.create_session()
            forcing.wait()
            forcing.close_connection(("amqp:connection:forced", "Server is going away"))
            backup.wait()
            assert wait_for(lambda: restored == [f"amqp://127.0.0.1:{backup.port}"]), restored
    assert errors == []


def test_send_whose_outcome_a_forced_close_lost_is_resent_on_the_next_server() -> None:
    """testFailoverHandlesRemoteCloseBeforeDispositionRecieived: a persistent send on the wire
    when the peer closes the connection (forced) is sent again on the next server, with the same
    message id and a durable header, and the send returns once that one is accepted."""
    ids: list[Any] = []
    with TestPeer() as original, TestPeer() as final:
        original.expect_open()
        original.expect_begin()
        original.expect_attach(offer=10)
        original.expect_transfer(lambda t: ids.append(t.message.id) or t.message.durable, outcome=None)
        with ConnectionFactory(url(original, final)).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("myQueue"))
            t, out = in_thread(lambda: p.send(s.create_text_message("x")))
            original.wait()
            assert not out
            final.expect_open()
            final.expect_begin()
            final.expect_attach(offer=10)
            final.expect_transfer(lambda t: ids.append(t.message.id) or t.message.durable)
            original.close_connection(("amqp:connection:forced", "Server is going away"))
            t.join(5)
            assert out == [("ok", None)]
            final.wait()
    assert len(ids) == 2 and ids[0] == ids[1]



def test_transacted_acks_before_a_drop_are_void_the_commit_fails_and_the_message_comes_back() -> None:
    """testTransactionalAcknowledgeAfterRecoveredWhileSendBlocked, for a consumer: a message
    received (and acknowledged in txn-1) before the drop; after the reconnect the broker
    redelivers it and the client acknowledges it in txn-2, never sending the old delivery's ack
    on the new connection; the commit fails with TransactionRolledBackException (txn-2 is
    discharged as failed) and the session goes on with txn-3."""
    names: list[str] = []
    disp: list[tuple[int, bytes]] = []

    def ack(d: Any) -> None:  # (the state's bytes are proton's, valid only during the check)
        disp.append((d.state, bytes(d.state_data[0])))

    with TestPeer() as peer:
        expect_transacted_connection(peer, b"txn-1")
        peer.expect_attach()
        peer.expect_flow(send=[_text("a")])
        peer.expect_disposition(ack)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            s = conn.create_session(Session.SESSION_TRANSACTED)
            c = s.create_consumer(Queue("q"))
            m = c.receive(5000)
            assert m is not None and m.get_text() == "a" and not m.get_jms_redelivered()
            peer.wait()
            again = PMessage(body="a", annotations={"x-opt-jms-msg-type": 5}, delivery_count=1)
            expect_transacted_connection(peer, b"txn-2")
            peer.expect_attach(lambda a: names.append(a.name) or a.source_address == "q")
            peer.expect_flow(send=[again])
            peer.expect_disposition(ack)
            peer.drop()
            m = c.receive(5000)
            assert m is not None and m.get_text() == "a" and m.get_jms_redelivered()
            peer.wait()
            peer.expect_discharge(fail=True)
            peer.expect_declare(b"txn-3")
            with pytest.raises(TransactionRolledBackException):  # it spanned a failover
                s.commit()
            peer.wait()
    assert disp == [(0x34, b"txn-1"), (0x34, b"txn-2")]


class _Completions:
    """A CompletionListener that records every callback, to count them per message."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Exception | None]] = []
        self.lock = threading.Lock()

    def on_completion(self, message: Any) -> None:
        with self.lock:
            self.calls.append(("completed", message.get_text(), None))

    def on_exception(self, message: Any, exc: Exception) -> None:
        with self.lock:
            self.calls.append(("failed", message.get_text(), exc))

    def of(self, text: str) -> list[str]:
        with self.lock:
            return [kind for kind, t, _ in self.calls if t == text]


def test_async_sends_in_an_in_doubt_transaction_complete_once_and_the_commit_fails() -> None:
    """testInDoubtTransactionFromFailoverCompletesAsyncCompletions: a CompletionListener send in
    a transaction answered before the drop completes; one still unanswered at the drop is sent
    again (same message id) on the new connection, in the new transaction, and completes once; a
    send after the reconnect completes; the commit fails (in doubt), discharging txn-2 as failed."""
    ids: list[Any] = []
    done = _Completions()
    with TestPeer() as peer:
        expect_transacted_connection(peer, b"txn-1")
        peer.expect_attach(offer=10)
        peer.expect_transfer(lambda t: t.message.body == "one")
        peer.expect_transfer(lambda t: ids.append(t.message.id) or t.message.body == "two", outcome=None)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session(Session.SESSION_TRANSACTED)
            p = s.create_producer(Queue("q"))
            p.send(s.create_text_message("one"), completion_listener=done)
            p.send(s.create_text_message("two"), completion_listener=done)
            peer.wait()
            assert wait_for(lambda: done.of("one") == ["completed"])
            assert done.of("two") == []
            expect_transacted_connection(peer, b"txn-2")
            peer.expect_attach(offer=10)
            peer.expect_transfer(lambda t: ids.append(t.message.id) or t.state_data == [b"txn-2"])
            peer.drop()
            peer.wait()
            assert wait_for(lambda: done.of("two") == ["completed"])
            peer.expect_transfer(lambda t: t.message.body == "three")
            p.send(s.create_text_message("three"), completion_listener=done)
            assert wait_for(lambda: done.of("three") == ["completed"])
            peer.wait()
            peer.expect_discharge(fail=True)
            peer.expect_declare(b"txn-3")
            with pytest.raises(TransactionRolledBackException):  # it spanned a failover
                s.commit()
            peer.wait()
    assert len(ids) == 2 and ids[0] == ids[1]
    assert [(k, t) for k, t, _ in done.calls] == [
        ("completed", "one"), ("completed", "two"), ("completed", "three")]


def test_each_async_send_waiting_when_failover_gives_up_gets_exactly_one_exception() -> None:
    """testFailoverConnectionLossFailsWaitingAsyncCompletionSends, once failover gives up: every
    CompletionListener send still without an outcome gets exactly one on_exception, the one
    answered before gets its on_completion only, and the ExceptionListener is called once."""
    done = _Completions()
    errors: list[JMSException] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        for i in range(3):
            peer.expect_transfer(lambda t, i=i: t.message.body == f"m{i}", outcome=None)
        peer.expect_transfer(lambda t: t.message.body == "m3")
        u = url(peer, options="&failover.maxReconnectAttempts=1")
        with ConnectionFactory(u).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            for i in range(4):
                p.send(s.create_text_message(f"m{i}"), completion_listener=done)
            peer.wait()  # (callbacks come in send order: m3's waits for the first three)
            assert done.calls == []
            peer.expect_open(refuse=("amqp:internal-error", "not ready"))
            peer.drop()
            assert wait_for(lambda: len(done.calls) == 4 and len(errors) == 1)
            peer.wait()
            time_for_strays = wait_for(lambda: len(done.calls) > 4, timeout=0.5)
            assert not time_for_strays, done.calls
    for i in range(3):
        assert done.of(f"m{i}") == ["failed"]
    assert done.of("m3") == ["completed"]
    assert all(isinstance(e, JMSException) for k, _, e in done.calls if k == "failed")


def test_a_message_received_before_the_replay_ends_is_acknowledged_on_the_new_connection() -> None:
    """A consumer re-created early in the replay gets a message while a later session's Begin is
    still unanswered: the application's acknowledgement of it is sent on the new connection (it
    was dropped as 'offline' once, leaving the delivery unsettled and the message to come twice)."""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: names.append(a.name) or True)
        peer.expect_begin()
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            c = conn.create_session().create_consumer(Queue("q"))
            conn.create_session()
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(lambda a: a.name == names[0])
            peer.expect_flow(send=[_text("b")])
            peer.expect_begin(respond=False)  # the replay waits here
            peer.drop()
            peer.wait()
            peer.expect_disposition(lambda d: d.state == 0x24 and d.settled)  # accepted
            m = c.receive(5000)
            assert m is not None and m.get_text() == "b"
            peer.wait()
            assert not failover_of(conn).online

            def answer_begin(c_: Any) -> None:
                ssn = c_.engine.connection.session_head(Endpoint.LOCAL_UNINIT)
                ssn.open()

            peer.run(answer_begin)
            assert wait_for(lambda: failover_of(conn).online)


def test_async_send_waiting_for_credit_at_a_drop_completes_on_the_next_connection() -> None:
    """testFailoverDoesNotFailPendingAsyncCompletionSend: a CompletionListener send still waiting
    for credit when the connection drops is sent on the next one and completes, once."""
    done = _Completions()
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach()  # no credit
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            p.send(s.create_text_message("waiting"), completion_listener=done)
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(offer=10)
            peer.expect_transfer(lambda t: t.message.body == "waiting")
            peer.drop()
            peer.wait()
            assert wait_for(lambda: done.of("waiting") == ["completed"])
            assert not wait_for(lambda: len(done.calls) > 1, timeout=0.3)


def test_transacted_session_whose_declare_was_not_answered_is_created_on_the_next_connection() -> None:
    """testTxRecreatedAfterConnectionFailsOverDropsAfterCoordinatorAttach (and
    testTransactionDeclareWithNoResponseRecoveredAsInDoubtAndCommitFails, different by design):
    a transacted session create waiting for its first Declare at the drop returns once the session
    is begun and its transaction declared on the next connection; having done no work, its first
    commit succeeds."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
        peer.expect_declare(respond=False)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            t, out = in_thread(lambda: conn.create_session(Session.SESSION_TRANSACTED))
            peer.wait()
            assert not out
            expect_transacted_connection(peer, b"txn-2")
            peer.drop()
            t.join(5)
            assert out and out[0][0] == "ok", out
            peer.wait()
            s = out[0][1]
            peer.expect_attach(offer=10)
            peer.expect_transfer(lambda tr: tr.state_data == [b"txn-2"])
            peer.expect_discharge(fail=False)
            peer.expect_declare(b"txn-3")
            s.create_producer(Queue("q")).send(s.create_text_message("x"))
            s.commit()
            peer.wait()


def test_sends_resent_after_a_drop_keep_the_producers_order() -> None:
    """Sends still without an outcome at the drop and one made while the client notices it go out
    on the new connection in the order the application made them, each completing once, in order
    (JMS orders a producer's messages; the re-send must not reorder them)."""
    done = _Completions()
    bodies: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(outcome=None)
        peer.expect_transfer(outcome=None)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            for i in range(2):
                p.send(s.create_text_message(f"m{i}"), completion_listener=done)
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(offer=10)
            for _ in range(3):
                peer.expect_transfer(lambda t: bodies.append(t.message.body) or True)
            peer.drop()
            p.send(s.create_text_message("m2"), completion_listener=done)
            peer.wait()
            assert wait_for(lambda: len(done.calls) == 3)
    assert bodies == ["m0", "m1", "m2"]
    assert [(k, t) for k, t, _ in done.calls] == [("completed", f"m{i}") for i in range(3)]
