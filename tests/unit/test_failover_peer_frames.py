"""What a failover connection sends after a reconnect, frame by frame against the scripted peer
(Qpid JMS's FailoverIntegrationTest, FailoverWithAmqpOpenProvidedServerListIntegrationTest):
the same container id, the sessions, producers and consumers again in creation order with the
same link names, filters and subscription names, a new transaction declared, credit restored.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from proton import Condition, symbol
from proton import Message as PMessage

from amqp_jms import (
    Connection,
    ConnectionFactory,
    JMSException,
    Queue,
    SendFailedException,
    Session,
    Topic,
    TransactionRolledBackException,
)
from amqp_jms.provider.failover.provider import FailoverProvider
from amqp_jms.testing.peer import Attach, Open, TestPeer

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=20&failover.maxReconnectDelay=100" \
       "&jms.requestTimeout=5000&jms.closeTimeout=1000"


def url(*peers: TestPeer, options: str = "") -> str:
    return f"failover:({','.join(p.url for p in peers)})?{FAST}{options}"


def failover_of(conn: Connection) -> FailoverProvider:
    """The failover provider under ``conn``, read through the connection's internal seam (what
    it reports: online, the generation lost, the server list, where it is connected)."""
    provider = conn.internal.opened_provider()
    assert isinstance(provider, FailoverProvider)
    return provider


def wait_for(cond: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not cond():
        time.sleep(0.01)
    return cond()


def expect_transacted_connection(peer: TestPeer, txn_id: bytes) -> None:
    """Script a (re)connection holding one transacted session: Open, Begin, the coordinator's
    attach (granted credit) and a Declare answered with ``txn_id``."""
    peer.expect_open()
    peer.expect_begin()
    peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
    peer.expect_declare(txn_id)


def in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Run ``call`` on a thread (one that blocks until the peer answers, or the connection
    drops); the list gets ``("ok", result)`` or ``("raised", exception)``."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(("ok", call()))
        except Exception as e:
            out.append(("raised", e))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_reconnect_recreates_session_producer_and_consumer_in_order_with_the_same_links() -> None:
    """testCreateProducerAfterConnectionDrops / testCreateConsumerAfterConnectionDrops: after the
    drop the client opens with the same container id, begins, attaches the session's producers
    then its consumers (Qpid JMS's order, whatever the creation order) under the same link names,
    with the same addresses and selector, and grants the consumer credit again."""
    opens: list[Open] = []
    first: list[Attach] = []
    second: list[Attach] = []
    with TestPeer() as peer:
        peer.expect_open(opens.append)
        peer.expect_begin()
        peer.expect_attach(first.append)  # consumer (created first)
        peer.expect_attach(first.append, offer=10)  # a producer closed again: its name is not reused
        peer.expect_detach()
        peer.expect_attach(first.append, offer=10)  # producer
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            s.create_consumer(Queue("in"), "colour = 'red'")
            s.create_producer(Queue("gone")).close()
            s.create_producer(Queue("out"))
            peer.wait()
            peer.expect_open(opens.append)
            peer.expect_begin()
            peer.expect_attach(second.append, offer=10)
            peer.expect_attach(second.append)
            peer.expect_flow(lambda f: f.credit > 0)
            peer.drop()
            peer.wait()
    assert opens[0].container_id == opens[1].container_id
    assert [(a.role, a.source_address, a.target_address) for a in second] == [
        ("sender", None, "out"), ("receiver", "in", None)]
    assert [a.name for a in second] == [first[2].name, first[0].name]
    assert second[1].filter is not None and "jms-selector" in str(second[1].filter)


def test_transacted_session_declares_a_new_transaction_after_reconnect() -> None:
    """testTxRecreatedAfterConnectionFailsOver: Begin, coordinator attach and a new Declare;
    the transaction that had work fails its commit; the next one commits."""
    with TestPeer() as peer:
        expect_transacted_connection(peer, b"txn-1")
        peer.expect_attach(offer=10)
        peer.expect_transfer()
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session(Session.SESSION_TRANSACTED)
            p = s.create_producer(Queue("q"))
            p.send(s.create_text_message("lost with the connection"))
            peer.wait()
            expect_transacted_connection(peer, b"txn-2")
            peer.expect_attach(lambda a: a.target_address == "q", offer=10)
            peer.drop()
            peer.wait()  # reconnected, everything re-created
            peer.expect_discharge(fail=True)  # the in-doubt transaction is rolled back
            peer.expect_declare(b"txn-3")
            peer.expect_transfer()
            peer.expect_discharge(fail=False)
            peer.expect_declare(b"txn-4")
            with pytest.raises(TransactionRolledBackException):  # it spanned a failover
                s.commit()
            p.send(s.create_text_message("kept"))
            s.commit()
            peer.wait()


def test_durable_subscriber_reattaches_under_its_subscription_name() -> None:
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open(lambda o: o.container_id == "fo-client")
        peer.expect_begin()
        peer.expect_attach(lambda a: names.append(a.name) or a.durable)
        with ConnectionFactory(url(peer, options="&jms.clientID=fo-client")).create_connection() as conn:
            s = conn.create_session()
            s.create_durable_subscriber(Topic("news"), "my-sub")
            peer.wait()
            peer.expect_open(lambda o: o.container_id == "fo-client")
            peer.expect_begin()
            peer.expect_attach(lambda a: names.append(a.name) or a.durable)
            peer.drop()
            peer.wait()
    assert names == ["my-sub", "my-sub"]


def test_server_list_in_open_ignored() -> None:
    with TestPeer() as first:
        first.expect_open(properties={"failover-server-list": [{"network-host": "10.9.9.9", "port": 5672}]})
        first.expect_begin()
        u = url(first, options="&failover.amqpOpenServerListAction=IGNORE")
        with ConnectionFactory(u).create_connection() as conn:
            conn.create_session()
            first.wait()
            assert [s.port for s in failover_of(conn).servers] == [first.port]


def _redirect_info(peer: TestPeer) -> dict[Any, Any]:
    return {symbol("network-host"): "127.0.0.1", symbol("port"): peer.port}


def test_connection_redirect_is_followed() -> None:
    """FailoverRedirectTest testFailoverHandlesRedirection: a Close with
    amqp:connection:redirect moves the connection to the server it names (not in the URL),
    with the session and consumer re-created there."""
    with TestPeer() as first, TestPeer() as second:
        first.expect_open()
        first.expect_begin()
        first.expect_attach()
        second.expect_open()
        second.expect_begin()
        second.expect_attach(lambda a: a.source_address == "q")
        with ConnectionFactory(url(first)).create_connection() as conn:
            conn.create_session().create_consumer(Queue("q"))
            first.wait()

            def redirect(c: Any) -> None:
                c.engine.connection.condition = Condition("amqp:connection:redirect", "moved",
                                                          _redirect_info(second))
                c.engine.connection.close()

            first.run(redirect)
            second.wait()


def test_link_redirect_moves_the_connection() -> None:
    """A consumer's link detached by the peer with amqp:link:redirect: the connection moves to
    the named server and the consumer is attached there; it is not closed on the application."""
    with TestPeer() as first, TestPeer() as second:
        names: list[str] = []
        first.expect_open()
        first.expect_begin()
        first.expect_attach(lambda a: names.append(a.name) or True)
        second.expect_open()
        second.expect_begin()
        second.expect_attach(lambda a: a.source_address == "q")
        second.expect_flow()
        with ConnectionFactory(url(first)).create_connection() as conn:
            conn.start()
            c = conn.create_session().create_consumer(Queue("q"))
            first.wait()

            def redirect(conn_: Any) -> None:
                link = conn_.links[names[0]]
                link.condition = Condition("amqp:link:redirect", "moved", _redirect_info(second))
                link.close()

            first.run(redirect)
            second.wait()
            second.send(names[0], PMessage(body="there", annotations={"x-opt-jms-msg-type": 5}))
            m = c.receive(5000)
            assert m is not None and m.get_text() == "there"


def test_server_list_in_open_add_appends() -> None:
    """testFailoverHandlesServerProvidedFailoverListAdd: ADD appends the peer's servers to the
    URL's (REPLACE would keep only the connected one and the peer's)."""
    with TestPeer() as first, TestPeer() as other:
        first.expect_open(properties={"failover-server-list": [
            {"network-host": "127.0.0.1", "port": 1}, {"network-host": "localhost", "port": 2}]})
        first.expect_begin()
        u = url(first, other, options="&failover.amqpOpenServerListAction=ADD")
        with ConnectionFactory(u).create_connection() as conn:
            conn.create_session()
            first.wait()
            assert sorted(s.port for s in failover_of(conn).servers) == sorted([first.port, other.port, 1, 2])


def test_send_without_an_outcome_is_resent_with_the_same_message_id() -> None:
    """testFailoverHandlesTransportDropBeforeDispositionRecieived: a persistent send whose
    outcome the lost connection never gave is sent again on the new connection, with the same
    JMSMessageID, and returns once that one is accepted."""
    ids: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(lambda t: ids.append(t.message.id) or True, outcome=None)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))
            done: list[float] = []
            t = threading.Thread(target=lambda: (p.send(s.create_text_message("x")), done.append(1.0)))
            t.start()
            peer.wait()
            assert not done
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(offer=10)
            peer.expect_transfer(lambda t: ids.append(t.message.id) or True)
            peer.drop()
            t.join(5)
            peer.wait()
            assert done
    assert len(ids) == 2 and ids[0] == ids[1]


def test_a_refused_send_passes_through_and_is_not_resent() -> None:
    """testFailoverPassthroughOfRejectedSyncSend: a refusal on a live connection is the send's
    exception, not a reason to reconnect or re-send."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(outcome="rejected", condition=("amqp:not-allowed", "no"))
        with ConnectionFactory(url(peer)).create_connection() as conn:
            s = conn.create_session()
            with pytest.raises(SendFailedException, match="not-allowed"):
                s.create_producer(Queue("q")).send(s.create_text_message("x"))
            peer.wait()
            assert conn.metrics().reconnects == 0


def test_durable_subscription_still_held_by_the_broker_is_retried() -> None:
    """After a drop the broker may still hold the subscription's old link and refuse the new
    attach (amqp:resource-locked): the re-attach is retried until it lets go, and the
    application hears nothing of it."""
    errors: list[Exception] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: a.name == "held-sub")
        with ConnectionFactory(url(peer, options="&jms.clientID=fo-held")).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            s = conn.create_session()
            s.create_durable_subscriber(Topic("news"), "held-sub")
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(lambda a: a.name == "held-sub",
                               refuse=("amqp:resource-locked", "subscription held-sub is in use"))
            peer.expect_attach(lambda a: a.name == "held-sub")
            peer.drop()
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)  # the replay ends after the answer
            assert errors == []


@pytest.mark.parametrize("refusal", [("amqp:unauthorized-access", "not now"), ("", "")],
                         ids=["error", "no-error-condition"])
def test_consumer_the_new_server_refuses_fails_that_reconnect_and_the_next_try_recreates_it(
    refusal: tuple[str, str],
) -> None:
    """testFailoverCannotRecreateConsumerFailsConnectionAndRetries: a consumer the application
    holds that the server refuses to re-attach fails that reconnect; the next attempt re-creates
    it, and the application hears nothing."""
    errors: list[Exception] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach()
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.create_session().create_consumer(Queue("q"))
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(refuse=refusal)
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(lambda a: a.source_address == "q")
            peer.drop()
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)
    assert errors == []


@pytest.mark.parametrize("refusal", [("amqp:unauthorized-access", "not now"), ("", "")],
                         ids=["error", "no-error-condition"])
def test_close_links_that_fail_on_reconnect_closes_the_refused_consumer(refusal: tuple[str, str]) -> None:
    """testFailoverCannotRecreateConsumerWithCloseFailedLinksEnabled: with
    jms.closeLinksThatFailOnReconnect the refused consumer is closed (its receive ends) and the
    connection carries on with the rest."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach()
        peer.expect_attach(offer=10)
        u = url(peer, options="&jms.closeLinksThatFailOnReconnect=true")
        with ConnectionFactory(u).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            c = s.create_consumer(Queue("q"))
            p = s.create_producer(Queue("out"))
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(offer=10)  # the producer comes back
            peer.expect_attach(refuse=refusal)
            peer.expect_transfer()
            peer.drop()
            assert c.receive(5000) is None  # closed under it
            p.send(s.create_text_message("still here"))
            peer.wait()


def test_session_ended_by_the_peer_reconnects_and_keeps_the_consumer() -> None:
    """A broker shutting down may end sessions before it closes the connection (RabbitMQ:
    amqp:internal-error "shutdown"): failover reconnects and re-creates the consumer instead of
    closing it on the application."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach()
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            c = conn.create_session().create_consumer(Queue("q"))
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            again: list[str] = []
            peer.expect_attach(lambda a: again.append(a.name) or a.source_address == "q")
            peer.expect_flow()

            def end_session(conn_: Any) -> None:
                ssn = conn_.engine.connection.session_head(0)
                ssn.condition = Condition("amqp:internal-error", "shutdown")
                ssn.close()

            peer.run(end_session)
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)
            peer.send(again[0], PMessage(body="still there", annotations={"x-opt-jms-msg-type": 5}))
            m = c.receive(5000)
            assert m is not None and m.get_text() == "still there"


def test_consumer_link_detached_by_the_peer_is_closed_not_recreated() -> None:
    """testRemotelyCloseConsumerWithMessageListenerFiresJMSExceptionListener: a consumer the peer
    detaches on a live connection ends (a blocked receive returns None); the connection stays."""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: names.append(a.name) or True)
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            c = conn.create_session().create_consumer(Queue("q"))
            peer.wait()
            peer.detach_link(names[0], ("amqp:resource-deleted", "queue deleted"))
            assert c.receive(3000) is None
            assert conn.metrics().reconnects == 0


def test_temporary_queue_is_recreated_before_the_sessions_under_a_new_name() -> None:
    """testTempDestinationRecreatedAfterConnectionFailsOver: after the reconnect the temporary
    queue's dynamic attach comes first (on the connection's own session), then the application's
    session, whose consumer on the temporary queue attaches to the new address."""
    second: list[Attach] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_begin()
        peer.expect_dynamic_attach("TempQueue-1")
        peer.expect_attach(lambda a: a.source_address == "TempQueue-1")
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            tq = s.create_temporary_queue()
            s.create_consumer(tq)
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_dynamic_attach("TempQueue-2", second.append)
            peer.expect_begin()
            peer.expect_attach(second.append)
            peer.expect_flow()
            peer.drop()
            peer.wait()
            assert tq.name == "TempQueue-1"  # the application's value; it follows (aliases)
    assert second[0].dynamic and second[0].target_capabilities == ("temporary-queue",)
    assert second[1].source_address == "TempQueue-2"


def test_session_producer_and_consumer_created_after_a_drop_are_made_on_the_new_connection() -> None:
    """testCreateSessionAfterConnectionDrops, testCreateProducerAfterConnectionDrops,
    testCreateConsumerAfterConnectionDrops: what the application creates once the connection has
    dropped (offline or just restored) is created on the new connection, and works there."""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        with ConnectionFactory(url(peer)).create_connection() as conn:
            conn.start()
            failover_of(conn).wait_online(5, "connect")
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(lambda a: a.target_address == "out", offer=10)
            peer.expect_attach(lambda a: names.append(a.name) or a.source_address == "in")
            peer.expect_flow()
            peer.drop()
            assert wait_for(lambda: failover_of(conn).lost_gen == 1)  # the client saw the drop
            s = conn.create_session()
            p = s.create_producer(Queue("out"))
            c = s.create_consumer(Queue("in"))
            peer.wait()
            peer.expect_transfer(lambda t: t.message.body == "sent")
            p.send(s.create_text_message("sent"))
            peer.wait()
            peer.send(names[0], PMessage(body="got", annotations={"x-opt-jms-msg-type": 5}))
            m = c.receive(5000)
            assert m is not None and m.get_text() == "got"


def test_a_server_that_drops_the_socket_at_once_is_skipped() -> None:
    """testFailoverHandlesImmediateTransportDropAfterConnect: a server that accepts the TCP
    connection and closes it before any AMQP is skipped; the next server is used."""
    import socket

    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(4)
    stop = threading.Event()

    def drop_all() -> None:
        lsock.settimeout(0.1)
        while not stop.is_set():
            try:
                s, _ = lsock.accept()
            except OSError:
                continue
            s.close()

    t = threading.Thread(target=drop_all, daemon=True)
    t.start()
    try:
        with TestPeer() as final:
            final.expect_open()
            final.expect_begin()
            dropping = f"amqp://127.0.0.1:{lsock.getsockname()[1]}"
            u = f"failover:({dropping},{final.url})?{FAST}"
            with ConnectionFactory(u).create_connection() as conn:
                conn.create_session()
                final.wait()
                assert failover_of(conn).remote_uri == final.url
    finally:
        stop.set()
        t.join(2)
        lsock.close()


def test_creates_waiting_for_the_reconnect_time_out_at_the_request_timeout() -> None:
    """testFailoverEnforcesRequestTimeoutSessionWhenBeginSent,
    testFailoverEnforcesRequestTimeoutCreateTenpDestination: a session whose Begin went with the
    connection, and a temporary queue asked for while offline, fail after jms.requestTimeout when
    no reconnect comes in time."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_begin(respond=False)
        u = url(peer, options="&jms.requestTimeout=500&failover.initialReconnectDelay=5000")
        with ConnectionFactory(u).create_connection() as conn:
            s = conn.create_session()
            t0 = time.monotonic()
            th, box = in_thread(conn.create_session)
            peer.wait()
            peer.drop()
            th.join(5)
            assert box and box[0][0] == "raised" and isinstance(box[0][1], JMSException)
            assert "timed out" in str(box[0][1])
            assert time.monotonic() - t0 < 3
            t0 = time.monotonic()
            with pytest.raises(JMSException, match="timed out"):
                s.create_temporary_queue()
            assert 0.4 < time.monotonic() - t0 < 3


def test_zero_prefetch_receive_waiting_at_a_drop_gets_its_credit_again() -> None:
    """testFailoverHandlesDropZeroPrefetchPullConsumerReceive(WithTimeout, NoWait): a prefetch-0
    receive that granted one credit before the drop grants it again on the new link and gets the
    message sent there; a receive_no_wait during the drop returns None at once."""
    names: list[str] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach()
        peer.expect_flow(lambda f: f.credit == 1)
        u = url(peer, options="&jms.prefetchPolicy.all=0")
        with ConnectionFactory(u).create_connection() as conn:
            conn.start()
            c = conn.create_session().create_consumer(Queue("q"))
            got: list[Any] = []
            th = threading.Thread(target=lambda: got.append(c.receive(5000)), daemon=True)
            th.start()
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(lambda a: names.append(a.name) or True)
            peer.expect_flow(lambda f: f.credit == 1,
                             send=[PMessage(body="pulled", annotations={"x-opt-jms-msg-type": 5})])
            peer.expect_disposition(lambda d: d.state == 0x24)  # accepted
            peer.drop()
            th.join(5)
            peer.wait()
            assert got and got[0] is not None and got[0].get_text() == "pulled"
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach()
            t0 = time.monotonic()
            peer.drop()
            assert c.receive_no_wait() is None
            assert time.monotonic() - t0 < 2
            peer.wait()
