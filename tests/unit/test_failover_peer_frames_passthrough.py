"""What a failover connection passes through to the application instead of reconnecting, frame by
frame against the scripted peer (Qpid JMS's FailoverIntegrationTest "passthrough" tests): send
outcomes, refused creates and logins, links the peer closes on a live connection, timeouts. Each
test also checks that no reconnect happened and nothing was sent twice.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from proton import Message as PMessage
from test_failover_peer_frames import in_thread, url, wait_for

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    InvalidClientIDException,
    JMSException,
    JMSSecurityException,
    Queue,
    SendFailedException,
    Session,
    TransactionRolledBackException,
)
from amqp_jms.testing.peer import Attach, TestPeer


@pytest.mark.parametrize("outcome", ["accepted", "released", "modified"])
def test_sync_send_outcome_passes_through_without_a_reconnect(outcome: str) -> None:
    """testFailoverPassthroughOfCompletedSyncSend, ...ReleasedSyncSend, ...ModifiedFailedSyncSend:
    the outcome the live connection gave is the send's: accepted returns, released and modified
    raise SendFailedException naming it; nothing is re-sent and failover does not reconnect."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(outcome=outcome)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            if outcome == "accepted":
                p.send(s.create_text_message("x"))
            else:
                with pytest.raises(SendFailedException, match=outcome):
                    p.send(s.create_text_message("x"))
            peer.wait()
            assert conn.metrics().reconnects == 0


@pytest.mark.parametrize("outcome", ["accepted", "rejected"])
def test_async_send_outcome_passes_through_to_the_completion_listener(outcome: str) -> None:
    """testFailoverPassthroughOfCompletedAsyncSend, testFailoverPassthroughOfRejectedAsyncCompletionSend:
    one callback, on_completion for accepted, on_exception naming the error for rejected."""
    calls: list[tuple[str, Any]] = []
    got = threading.Event()

    class Listener:
        def on_completion(self, message: Any) -> None:
            calls.append(("completed", message))
            got.set()

        def on_exception(self, message: Any, exc: Exception) -> None:
            calls.append(("failed", exc))
            got.set()

    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(outcome=outcome, condition=("amqp:not-allowed", "no"))
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            s.create_producer(Queue("q")).send(s.create_text_message("x"), completion_listener=Listener())
            assert got.wait(5)
            peer.wait()
            assert not wait_for(lambda: len(calls) > 1, timeout=0.3)
            assert conn.metrics().reconnects == 0
    assert calls[0][0] == ("completed" if outcome == "accepted" else "failed")
    if outcome == "rejected":
        assert isinstance(calls[0][1], JMSException) and "not-allowed" in str(calls[0][1])


def test_send_timing_out_without_an_outcome_raises_and_is_not_resent_after_a_later_drop() -> None:
    """testPassthroughOfSendTimesOutWhenNoDispostionArrives: no disposition within
    jms.sendTimeout fails the send (the connection stays); the application was told, so a
    later reconnect does not send that message again."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(lambda t: t.message.body == "timed out", outcome=None)
        with ConnectionFactory(url(peer, options="&jms.sendTimeout=300")).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            with pytest.raises(JMSException, match="timed out"):
                p.send(s.create_text_message("timed out"))
            peer.wait()
            assert conn.metrics().reconnects == 0
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(offer=10)
            peer.expect_transfer(lambda t: t.message.body == "next")
            peer.drop()
            p.send(s.create_text_message("next"))
            peer.wait()


def test_coordinator_detached_on_commit_fails_the_commit_rolled_back_without_a_reconnect() -> None:
    """testPassthroughOfRollbackErrorCoordinatorClosedOnCommit: the peer detaches the coordinator
    link (with an error) instead of answering the discharge: on the live connection the commit
    raises TransactionRolledBackException naming the error, the session attaches a new
    coordinator and declares a new transaction, which commits; failover does not reconnect."""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: names.append(a.name) or a.target_is_coordinator, offer=10)
        peer.expect_declare(b"txn-1")
        peer.expect_discharge(fail=False, respond=False)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session(Session.SESSION_TRANSACTED)
            t, out = in_thread(s.commit)
            peer.wait()
            peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
            peer.expect_declare(b"txn-2")
            peer.detach_link(names[0], ("amqp:internal-error", "coordinator gone"))
            t.join(5)
            assert out and out[0][0] == "raised", out
            assert isinstance(out[0][1], TransactionRolledBackException)
            assert "coordinator gone" in str(out[0][1])
            peer.wait()
            peer.expect_discharge(fail=False)
            peer.expect_declare(b"txn-3")
            s.commit()
            peer.wait()
            assert conn.metrics().reconnects == 0


def test_open_refused_as_unauthorized_is_a_security_exception_and_not_retried() -> None:
    """testConnectThrowsSecurityViolationOnFailureFromOpen: an Open answered with a Close
    carrying amqp:unauthorized-access fails the connect with JMSSecurityException at once; the
    other server in the list is never tried."""
    with TestPeer() as peer, TestPeer() as other:
        peer.expect_open(refuse=("amqp:unauthorized-access", "Anonymous connections not allowed"))
        with pytest.raises(JMSSecurityException, match="Anonymous connections not allowed"):
            ConnectionFactory(url(peer, other)).create_connection().start()
        peer.wait()
        assert other.log == []


@pytest.mark.parametrize("refusal", [
    ("amqp:not-found", "Resource could not be located", None),
    ("amqp:invalid-field", "Client ID already in use", None),
    ("amqp:invalid-field", "Client ID already in use", {"invalid-field": "container-id"}),
], ids=["not-found", "invalid-field", "container-id-hint"])
def test_open_refused_by_a_server_moves_to_the_next_one(refusal: tuple[str, str, Any]) -> None:
    """testFailoverHandlesConnectErrorNotFound, testFailoverHandlesDropThenRejectionCloseAfterConnect,
    testFailoverHandlesConnectErrorInvalidField(WithContainerIdHint): a server refusing the Open
    (not found; or the container id, when it is a generated one and not the application's
    client id: the server's trouble) is skipped; the connection is made to the next one and works
    there, with no exception for the application."""
    names: list[Attach] = []
    errors: list[JMSException] = []
    with TestPeer() as refusing, TestPeer() as final:
        refusing.expect_open(refuse=(refusal[0], refusal[1]), refuse_info=refusal[2])
        final.expect_open()
        final.expect_begin()
        final.expect_attach(names.append)
        final.expect_flow()
        with ConnectionFactory(url(refusing, final)).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.start()
            c = conn.create_session().create_consumer(Queue("myQueue"))
            final.wait()
            refusing.wait()
            final.send(names[0].name, PMessage(body=None))
            assert c.receive(5000) is not None
    assert errors == []


def test_client_id_refused_at_the_first_connect_is_reported_not_retried() -> None:
    """Different by design from testFailoverHandlesConnectErrorInvalidField(WithContainerIdHint)
    when the application set the client id: one another connection holds at the first connect is
    a clash it must hear (with Qpid JMS's default of unlimited attempts it would wait forever);
    after a connection was made it is retried (a broker still holding our old connection)."""
    with TestPeer() as refusing, TestPeer() as other:
        refusing.expect_open(refuse=("amqp:invalid-field", "Client ID already in use"),
                             refuse_info={"invalid-field": "container-id"})
        with pytest.raises(InvalidClientIDException, match="already in use"):
            ConnectionFactory(url(refusing, other, options="&jms.clientID=taken")).create_connection()
        refusing.wait()
        assert other.log == []


def test_client_id_refused_on_a_reconnect_is_retried() -> None:
    """testFailoverHandlesConnectErrorInvalidFieldOnReconnect(WithContainerIdHint): after a drop the
    broker may still hold the old connection and refuse the client id: that is retried, and the
    next attempt restores the connection; the application hears nothing."""
    errors: list[JMSException] = []
    with TestPeer() as peer:
        peer.expect_open(lambda o: o.container_id == "mine")
        peer.expect_begin()
        with ConnectionFactory(url(peer, options="&jms.clientID=mine")).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.create_session()
            peer.wait()
            peer.expect_open(refuse=("amqp:invalid-field", "Client ID already in use"),
                             refuse_info={"invalid-field": "container-id"})
            peer.expect_open(lambda o: o.container_id == "mine")
            peer.expect_begin()
            peer.drop()
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)
    assert errors == []


@pytest.mark.parametrize("refusal", [("amqp:unauthorized-access", "not now"), ("", "")],
                         ids=["error", "no-error-condition"])
def test_producer_the_new_server_refuses_fails_that_reconnect_and_the_next_try_recreates_it(
    refusal: tuple[str, str],
) -> None:
    """testFailoverCannotRecreateProducerFailsConnectionAndRetries (and ...NoErrorConditionGiven):
    a producer the server refuses to re-attach fails that reconnect; the next attempt re-creates
    it and the producer sends there; the application hears nothing."""
    errors: list[JMSException] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(refuse=refusal)
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(lambda a: a.target_address == "q", offer=10)
            peer.expect_transfer(lambda t: t.message.body == "there")
            peer.drop()
            p.send(s.create_text_message("there"))
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)
    assert errors == []


@pytest.mark.parametrize("refusal", [("amqp:unauthorized-access", "not now"), ("", "")],
                         ids=["error", "no-error-condition"])
def test_close_links_that_fail_on_reconnect_closes_the_refused_producer(refusal: tuple[str, str]) -> None:
    """testFailoverCannotRecreateProducerWithCloseFailedLinksEnabled (and ...NoErrorConditionGiven):
    with jms.closeLinksThatFailOnReconnect the refused producer is closed (its send raises
    IllegalStateException) and the consumer of the same session carries on."""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_attach()
        u = url(peer, options="&jms.closeLinksThatFailOnReconnect=true")
        with ConnectionFactory(u).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            p = s.create_producer(Queue("out"))
            c = s.create_consumer(Queue("in"))
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(refuse=refusal)
            peer.expect_attach(lambda a: names.append(a.name) or a.source_address == "in")
            peer.expect_flow()
            peer.drop()
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)
            with pytest.raises(IllegalStateException):
                p.send(s.create_text_message("x"))
            peer.send(names[0], PMessage(body="still", annotations={"x-opt-jms-msg-type": 5}))
            m = c.receive(5000)
            assert m is not None and m.get_text() == "still"


def test_producer_link_detached_by_the_peer_is_not_recreated() -> None:
    """testPassthroughRemotelyCloseProducer: a producer the peer detaches (amqp:resource-deleted)
    on a live connection is not re-attached: its sends raise JMSException naming the peer's
    error; no reconnect, and the connection carries on. (Qpid JMS also marks the producer
    closed, IllegalStateException: see docs/qpid-jms-parity.md.)"""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: names.append(a.name) or True, offer=10)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            peer.wait()
            peer.detach_link(names[0], ("amqp:resource-deleted", "ErrorMessageBreadCrumb"))
            link = p._provider_producer.inner  # (the wrapped link: to send only once it is gone)
            assert wait_for(lambda: link.failure is not None)
            with pytest.raises(JMSException, match="ErrorMessageBreadCrumb") as info:
                p.send(s.create_text_message("x"))
            assert info.value.error_code == "amqp:resource-deleted"
            assert conn.metrics().reconnects == 0
            peer.expect_attach(lambda a: a.target_address == "q2", offer=10)
            peer.expect_transfer()
            s.create_producer(Queue("q2")).send(s.create_text_message("y"))
            peer.wait()


@pytest.mark.parametrize("what", ["consumer", "producer", "temporary queue", "temporary topic"])
def test_a_refused_create_passes_through_and_the_connection_stays(what: str) -> None:
    """testCreateConsumerFailsWhenLinkRefused..., testCreateProducerFailsWhenLinkRefused...,
    testPassthroughCreateTemporaryQueue/TopicFailsWhenLinkRefused...: a create the live
    connection refuses raises from the peer's condition; failover does not reconnect."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        if what.startswith("temporary"):
            peer.expect_begin()  # the connection's own session, for temporary destinations
        peer.expect_attach(refuse=("amqp:unauthorized-access", "not for you"))
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            create = {
                "consumer": lambda: s.create_consumer(Queue("q")),
                "producer": lambda: s.create_producer(Queue("q")),
                "temporary queue": s.create_temporary_queue,
                "temporary topic": s.create_temporary_topic,
            }[what]
            with pytest.raises(JMSSecurityException, match="not for you"):
                create()
            peer.wait()
            assert conn.metrics().reconnects == 0


def test_delivery_delay_without_peer_support_passes_through() -> None:
    """testPassthroughOfSendFailsWhenDelayedDeliveryIsNotSupported: a delayed send to a peer that
    does not offer DELAYED_DELIVERY fails (naming it) on the live connection; nothing is sent."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            p.set_delivery_delay(100)
            with pytest.raises(JMSException, match="DELAYED_DELIVERY"):
                p.send(s.create_text_message("x"))
            peer.wait()
            assert conn.metrics().reconnects == 0


def test_transacted_session_whose_declare_is_not_answered_fails_to_create() -> None:
    """testPassthroughOfSessionCreateFailsOnDeclareTimeout: a transacted session whose first
    Declare gets no answer within jms.requestTimeout fails its create; no reconnect."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
        peer.expect_declare(respond=False)
        u = url(peer, options="&jms.requestTimeout=500")
        with ConnectionFactory(u).create_connection() as conn:
            with pytest.raises(JMSException, match="timed out"):
                conn.create_session(Session.SESSION_TRANSACTED)
            peer.wait()
            assert conn.metrics().reconnects == 0


def test_session_close_waiting_for_its_end_completes_when_the_connection_drops() -> None:
    """testFailoverHandlesDropAfterSessionCloseRequested: a session close waiting for the peer's
    End returns normally when the connection drops meanwhile."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_end(respond=False)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            t, out = in_thread(s.close)
            peer.wait()
            assert not out
            peer.expect_open()
            peer.drop()
            t.join(5)
            assert out == [("ok", None)]
            peer.wait()
