"""Failover through network faults (issue 17): the fault-injecting proxy between the client and
the embedded broker drops connections (RST), black-holes them (no FIN: the idle timeout must
notice) or refuses new ones; a second broker takes over. Each case is bounded to seconds.

The behaviours follow Qpid JMS's FailoverIntegrationTest and FailoverProviderOfflineBehaviorTest
(the rows in docs/qpid-jms-parity.md name the test of theirs each one ports).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from amqp_jms import (
    ConnectionFactory,
    JMSException,
    Queue,
    Session,
    Topic,
    TransactionRolledBackException,
)
from amqp_jms.testing import FaultProxy

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=200"


@pytest.fixture
def proxy(broker: Any) -> Iterator[FaultProxy]:
    with FaultProxy(broker.port) as p:
        yield p


def failover_url(*servers: str, options: str = FAST) -> str:
    return f"failover:({','.join(servers)})?{options}"


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def _text(s: Any, text: str) -> Any:
    return s.create_text_message(text)


def test_drop_mid_stream_producer_and_consumer_carry_on(proxy: FaultProxy) -> None:
    """FailoverIntegrationTest testFailoverHandlesDropThenRejectionCloseAfterConnect (the drop):
    a producer and a consumer on one connection ride through a dropped connection; the
    ExceptionListener is never called."""
    errors: list[JMSException] = []
    with ConnectionFactory(failover_url(proxy.url)).create_connection() as conn:
        conn.set_exception_listener(errors.append)
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-drop"))
        c = s.create_consumer(Queue("fo-drop"))
        for i in range(5):
            p.send(_text(s, f"a{i}"))
        assert [c.receive(2000).get_text() for _ in range(5)] == [f"a{i}" for i in range(5)]
        assert proxy.drop() == 1
        for i in range(5):
            p.send(_text(s, f"b{i}"))  # waits for the reconnect, then completes
        got = []
        while len([t for t, _ in got if t.startswith("b")]) < 5:
            m = c.receive(5000)
            assert m is not None, got
            got.append((m.get_text(), m.get_jms_redelivered()))
        # AUTO_ACKNOWLEDGE acks still on their way when the connection dropped went with it:
        # those messages come again, flagged
        assert all(redelivered for t, redelivered in got if t.startswith("a"))
        assert [t for t, _ in got if t.startswith("b")] == [f"b{i}" for i in range(5)]
        assert proxy.accepted == 2
    assert errors == []


@pytest.mark.parametrize("prefetch", ["", "&jms.prefetchPolicy.all=0"], ids=["prefetching", "pull"])
def test_blocked_receive_keeps_waiting_through_a_drop(proxy: FaultProxy, prefetch: str) -> None:
    """testFailoverHandlesDropZeroPrefetchPullConsumerReceive, for a prefetching and a pull
    (prefetch 0) consumer: a receive() blocked when the connection drops returns the message
    sent after the reconnect, not None."""
    url = failover_url(proxy.url, options=FAST + prefetch)
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        c = s.create_consumer(Queue("fo-wait"))
        got: list[Any] = []
        t = threading.Thread(target=lambda: got.append(c.receive(10000)))
        t.start()
        time.sleep(0.3)
        proxy.drop()
        with ConnectionFactory(proxy.url).create_connection() as other:
            o = other.create_session()
            o.create_producer(Queue("fo-wait")).send(_text(o, "late"))
        t.join(10)
        assert got and got[0] is not None and got[0].get_text() == "late"


def test_listener_resumes_after_a_drop(proxy: FaultProxy) -> None:
    with ConnectionFactory(failover_url(proxy.url)).create_connection() as conn:
        s = conn.create_session()
        seen: list[str] = []
        s.create_consumer(Queue("fo-listen")).set_message_listener(lambda m: seen.append(m.get_text()))
        conn.start()
        p = s.create_producer(Queue("fo-listen"))
        p.send(_text(s, "one"))
        assert wait_for(lambda: seen == ["one"])
        proxy.drop()
        p.send(_text(s, "two"))
        assert wait_for(lambda: "two" in seen)


def test_blackhole_is_noticed_by_the_idle_timeout_and_reconnects(proxy: FaultProxy) -> None:
    """No FIN, no bytes: amqp.idleTimeout (nested on every server) declares the connection dead
    and failover reconnects; the consumer and producer carry on."""
    url = failover_url(proxy.url, options=FAST + "&failover.nested.amqp.idleTimeout=600")
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-hole"))
        c = s.create_consumer(Queue("fo-hole"))
        p.send(_text(s, "before"))
        assert c.receive(2000).get_text() == "before"
        assert proxy.blackhole() == 1
        t0 = time.monotonic()
        p.send(_text(s, "after"))
        m = c.receive(5000)
        if m is not None and m.get_text() == "before":  # its ack went into the black hole
            assert m.get_jms_redelivered()
            m = c.receive(5000)
        assert m is not None and m.get_text() == "after"
        assert time.monotonic() - t0 < 5
        assert proxy.accepted == 2


def test_refused_reconnects_give_up_after_max_attempts_then_exception_listener(proxy: FaultProxy) -> None:
    """testDropAndRejectAfterwardsHonorsMax: with every reconnect refused, failover gives up after
    maxReconnectAttempts passes; only then the ExceptionListener hears of it, once."""
    url = failover_url(proxy.url, options=FAST + "&failover.maxReconnectAttempts=3")
    errors: list[JMSException] = []
    conn = ConnectionFactory(url).create_connection()
    conn.set_exception_listener(errors.append)
    conn.start()
    s = conn.create_session()
    c = s.create_consumer(Queue("fo-giveup"))
    proxy.refuse()
    proxy.drop()
    assert wait_for(lambda: len(errors) == 1)
    assert "gave up after 3 attempt" in str(errors[0])
    with pytest.raises(JMSException, match="gave up"):  # as any dead connection: says why
        c.receive(1000)
    with pytest.raises(JMSException):
        s.create_producer(Queue("fo-giveup")).send(_text(s, "x"))
    conn.close()
    time.sleep(0.1)
    assert len(errors) == 1


class Recorder:
    """A connection listener recording ``(event, argument)`` in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_connection_established(self, uri: str) -> None:
        self.events.append(("established", uri))

    def on_connection_interrupted(self, uri: str) -> None:
        self.events.append(("interrupted", uri))

    def on_connection_restored(self, uri: str) -> None:
        self.events.append(("restored", uri))

    def on_connection_failure(self, exc: Exception) -> None:
        self.events.append(("failure", exc))

    def names(self) -> list[str]:
        return [name for name, _ in self.events]


def test_connection_listener_hears_failure_exactly_once_when_failover_gives_up(proxy: FaultProxy) -> None:
    """The connection listener's on_connection_failure is failover's last word: once, after the
    interruption, when maxReconnectAttempts are spent (never for a drop it rides through);
    closing the dead connection adds nothing."""
    rec = Recorder()
    url = failover_url(proxy.url, options=FAST + "&failover.maxReconnectAttempts=2")
    conn = ConnectionFactory(url).create_connection()
    conn.add_connection_listener(rec)
    conn.start()
    s = conn.create_session()
    s.create_consumer(Queue("fo-fail-once"))
    proxy.refuse()
    proxy.drop()
    assert wait_for(lambda: "failure" in rec.names())
    time.sleep(0.3)  # a second report would come now
    conn.close()
    time.sleep(0.1)
    assert rec.names() == ["established", "interrupted", "failure"]
    exc = rec.events[-1][1]
    assert isinstance(exc, JMSException) and "gave up after 2 attempt" in str(exc)


def test_a_slow_network_is_not_a_failure(proxy: FaultProxy) -> None:
    """Every frame forwarded 0.3 s late, under an idle timeout of 1.5 s: the connection is slow,
    not dead; failover does not reconnect, sends complete and arrive in order."""
    rec = Recorder()
    url = failover_url(proxy.url, options=FAST + "&failover.nested.amqp.idleTimeout=1500")
    with ConnectionFactory(url).create_connection() as conn:
        conn.add_connection_listener(rec)
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-slow"))
        c = s.create_consumer(Queue("fo-slow"))
        proxy.delay(0.3)  # (test_fault_proxy.py checks that every round trip then takes 0.6 s)
        got = []
        for i in range(3):  # a send and a receive per round: 3 s of slow traffic in all
            p.send(_text(s, f"s{i}"))
            got.append(c.receive(5000).get_text())
        time.sleep(2.0)  # no traffic, longer than the idle timeout: the late heartbeats suffice
        assert got == ["s0", "s1", "s2"]
        proxy.delay(0)
        p.send(_text(s, "fast again"))
        assert c.receive(2000).get_text() == "fast again"
    assert proxy.accepted == 1
    assert rec.names() == ["established"]


def test_reconnects_once_the_server_accepts_again(proxy: FaultProxy) -> None:
    with ConnectionFactory(failover_url(proxy.url)).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-refuse"))
        c = s.create_consumer(Queue("fo-refuse"))
        proxy.refuse()
        proxy.drop()
        time.sleep(0.5)  # several refused attempts
        threading.Timer(0.3, proxy.accept).start()
        p.send(_text(s, "back"))
        assert c.receive(5000).get_text() == "back"


def test_moves_to_the_second_broker(proxy: FaultProxy, broker_factory: Any) -> None:
    """The first server goes away for good: the connection moves to the next one in the list,
    re-creating the consumer there."""
    second = broker_factory(data_dir=None)
    url = failover_url(proxy.url, f"amqp://127.0.0.1:{second.port}")
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-move"))
        c = s.create_consumer(Queue("fo-move"))
        p.send(_text(s, "on-first"))
        assert c.receive(2000).get_text() == "on-first"
        proxy.refuse()
        proxy.drop()
        p.send(_text(s, "on-second"))
        assert c.receive(5000).get_text() == "on-second"
    with ConnectionFactory(f"amqp://127.0.0.1:{second.port}").create_connection() as direct:
        direct.start()
        d = direct.create_session()
        assert d.create_consumer(Queue("fo-move")).receive_no_wait() is None  # consumed there


def test_offline_closes_do_not_block_and_send_times_out(proxy: FaultProxy) -> None:
    """FailoverProviderOfflineBehaviorTest: while reconnecting, closing a consumer, a producer, a
    session and the connection returns at once; a send waits jms.sendTimeout, then fails."""
    url = failover_url(proxy.url, options=FAST + "&jms.sendTimeout=500")
    conn = ConnectionFactory(url).create_connection()
    conn.start()
    s = conn.create_session()
    s2 = conn.create_session()
    p = s.create_producer(Queue("fo-off"))
    c = s.create_consumer(Queue("fo-off"))
    proxy.refuse()
    proxy.drop()
    time.sleep(0.2)
    t0 = time.monotonic()
    with pytest.raises(JMSException, match="timed out"):
        p.send(_text(s, "nowhere"))
    assert 0.4 < time.monotonic() - t0 < 3
    t0 = time.monotonic()
    c.close()
    p.close()
    s.close()
    s2.recover()
    s2.close()
    conn.close()
    assert time.monotonic() - t0 < 1


def test_offline_rollback_succeeds_and_commit_of_prior_work_fails(proxy: FaultProxy) -> None:
    """testTransactionRollbackSucceeds, testSendAndConnectionDropsRecoveredAsInDoubtTransaction:
    a transaction with work on the lost connection cannot commit (TransactionRolledBackException);
    the session carries on with a new transaction that commits."""
    with ConnectionFactory(failover_url(proxy.url)).create_connection() as conn:
        conn.start()
        s = conn.create_session(Session.SESSION_TRANSACTED)
        p = s.create_producer(Queue("fo-tx"))
        p.send(_text(s, "lost"))
        time.sleep(0.1)
        proxy.drop()
        p.send(_text(s, "in-doubt"))  # sent in the recovered (doomed) transaction
        with pytest.raises(TransactionRolledBackException):
            s.commit()
        p.send(_text(s, "kept"))
        s.commit()
        r = conn.create_session()
        c = r.create_consumer(Queue("fo-tx"))
        m = c.receive(2000)
        assert m is not None and m.get_text() == "kept"
        assert c.receive(300) is None
        proxy.drop()
        s.rollback()  # offline or not: succeeds


def test_acks_of_messages_delivered_before_the_drop_are_dropped_and_redelivered(proxy: FaultProxy) -> None:
    """CLIENT_ACKNOWLEDGE: a message received before the drop and acknowledged after it is
    redelivered, flagged JMSRedelivered (its acknowledgement went with the connection)."""
    with ConnectionFactory(failover_url(proxy.url)).create_connection() as conn:
        conn.start()
        s = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        s.create_producer(Queue("fo-ack")).send(_text(s, "once"))
        c = s.create_consumer(Queue("fo-ack"))
        m = c.receive(2000)
        assert m is not None and not m.get_jms_redelivered()
        proxy.drop()
        assert wait_for(lambda: proxy.accepted == 2 and proxy.active == 1)
        m.acknowledge()
        again = c.receive(5000)
        assert again is not None and again.get_text() == "once" and again.get_jms_redelivered()
        again.acknowledge()
        assert c.receive(300) is None


def test_durable_subscriber_with_client_id_survives_a_blackhole(broker_factory: Any) -> None:
    """The broker still holds the old connection (and its durable subscription's link) after a
    black-hole: the reconnect's client id clash and the subscription in use are retried until
    the broker lets go (its idle timeout), not reported to the application."""
    b = broker_factory(data_dir=None, idle_timeout_s=1.0)
    with FaultProxy(b.port) as proxy:
        options = FAST + "&failover.nested.amqp.idleTimeout=600&jms.clientID=fo-dur"
        url = failover_url(proxy.url, options=options)
        errors: list[JMSException] = []
        with ConnectionFactory(url).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.start()
            s = conn.create_session()
            sub = s.create_durable_subscriber(Topic("fo-news"), "fo-sub")
            p = s.create_producer(Topic("fo-news"))
            p.send(_text(s, "first"))
            assert sub.receive(2000).get_text() == "first"
            proxy.blackhole()
            p.send(_text(s, "second"))
            m = sub.receive(10000)
            if m is not None and m.get_text() == "first":  # its ack went into the black hole
                assert m.get_jms_redelivered()
                m = sub.receive(10000)
            assert m is not None and m.get_text() == "second"
        assert errors == []


def test_startup_max_reconnect_attempts_when_no_server_answers(proxy: FaultProxy) -> None:
    """testStartMaxReconnectAttemptsTriggeredWhenRemotesAreRejecting: the first connect gives up
    after failover.startupMaxReconnectAttempts passes and raises (there is no connection yet
    for an ExceptionListener)."""
    proxy.refuse()
    url = failover_url(proxy.url, options=FAST + "&failover.startupMaxReconnectAttempts=3")
    conn = ConnectionFactory(url).create_connection()
    t0 = time.monotonic()
    with pytest.raises(JMSException, match="gave up after 3 attempt"):
        conn.start()
    assert time.monotonic() - t0 < 5
    conn.close()


def test_create_session_while_offline_waits_request_timeout(proxy: FaultProxy) -> None:
    """testFailoverEnforcesRequestTimeoutSession: a create while reconnecting waits up to
    jms.requestTimeout, then fails; once back, creates work again."""
    url = failover_url(proxy.url, options=FAST + "&jms.requestTimeout=500")
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        proxy.refuse()
        proxy.drop()
        time.sleep(0.2)
        t0 = time.monotonic()
        with pytest.raises(JMSException, match="timed out"):
            conn.create_session()
        assert 0.4 < time.monotonic() - t0 < 3
        proxy.accept()
        s = conn.create_session()
        s.create_producer(Queue("fo-req")).send(_text(s, "back"))


def test_close_does_not_wait_for_a_hanging_reconnect(proxy: FaultProxy) -> None:
    """The next server accepts TCP but never answers the AMQP Open: closing the connection during
    that attempt returns at once, not after jms.connectTimeout."""
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # never accepted: the kernel completes the handshake, nobody speaks AMQP
    try:
        url = failover_url(proxy.url, f"amqp://127.0.0.1:{silent.getsockname()[1]}")
        conn = ConnectionFactory(url).create_connection()
        conn.start()
        proxy.refuse()
        proxy.drop()
        time.sleep(0.5)  # now connecting to the silent server (15 s connect timeout)
        t0 = time.monotonic()
        conn.close()
        assert time.monotonic() - t0 < 2
    finally:
        silent.close()


def test_browser_enumeration_survives_a_drop(proxy: FaultProxy) -> None:
    """testFailoverHandlesDropAfterQueueBrowserDrain: a browse interrupted by a drop goes on after
    the reconnect (from the queue's head again: what was seen may come again) instead of
    ending early; the messages stay on the queue."""
    with ConnectionFactory(failover_url(proxy.url)).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-browse"))
        for i in range(5):
            p.send(_text(s, f"b{i}"))
        seen = []
        for i, m in enumerate(s.create_browser(Queue("fo-browse"))):
            seen.append(m.get_text())
            if i == 1:
                proxy.drop()
        assert {f"b{i}" for i in range(5)} <= set(seen)
        c = s.create_consumer(Queue("fo-browse"))
        assert [c.receive(2000).get_text() for _ in range(5)] == [f"b{i}" for i in range(5)]


def test_completion_listener_gets_exactly_one_callback_across_a_drop(proxy: FaultProxy) -> None:
    """Async sends (CompletionListener) in flight when the connection drops: each listener is
    called once, with success (those without an outcome are re-sent with the same message id),
    and every message arrives."""
    calls: dict[int, list[str]] = {}
    lock = threading.Lock()

    class Listener:
        def __init__(self, n: int) -> None:
            self.n = n

        def on_completion(self, message: Any) -> None:
            with lock:
                calls.setdefault(self.n, []).append("completed")

        def on_exception(self, message: Any, exc: Exception) -> None:
            with lock:
                calls.setdefault(self.n, []).append(f"failed: {exc}")

    with ConnectionFactory(failover_url(proxy.url)).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("fo-async"))
        proxy.delay(0.2)  # outcomes come late: the sends before the drop are still unanswered
        for n in range(200):
            m = s.create_text_message(f"m{n}")
            m.set_int_property("n", n)
            p.send(m, completion_listener=Listener(n))
            if n == 100:
                proxy.drop()
                proxy.delay(0)
        assert wait_for(lambda: len(calls) == 200, 15)
        time.sleep(0.2)
        assert {n: v for n, v in calls.items() if v != ["completed"]} == {}
        metrics = conn.metrics()
        assert metrics.sends_accepted == 200 and metrics.reconnects == 1
        assert metrics.messages_sent > 200, "nothing was re-sent: the drop found no send in flight"
        c = s.create_consumer(Queue("fo-async"))
        seen = set()
        while len(seen) < 200:
            m = c.receive(5000)
            assert m is not None, sorted(set(range(200)) - seen)[:10]
            seen.add(m.get_int_property("n"))


@pytest.mark.parametrize("how", ["NO_ACKNOWLEDGE", "jms.presettlePolicy.presettleConsumers"])
def test_presettled_consumer_keeps_its_prefetched_messages_across_a_drop(proxy: FaultProxy, how: str) -> None:
    """A presettled consumer's prefetched messages were settled by the broker as it sent them:
    it will never send them again, so a drop must not void them (Qpid JMS clears them: lost).
    They are delivered after the drop, once each, in order, and the consumer goes on."""
    presettle_policy = how.startswith("jms.")
    url = failover_url(proxy.url, options=FAST + ("&" + how + "=true" if presettle_policy else ""))
    mode = Session.AUTO_ACKNOWLEDGE if presettle_policy else Session.NO_ACKNOWLEDGE
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        s = conn.create_session(False, mode)
        c = s.create_consumer(Queue("fo-presettled"))
        p = s.create_producer(Queue("fo-presettled"))
        for i in range(20):
            p.send(_text(s, f"m{i}"))
        assert wait_for(lambda: len(c.internal.local_queue) == 20)  # all prefetched, settled by the broker
        first = c.receive(2000)
        assert first is not None and first.get_text() == "m0"
        assert proxy.drop() == 1
        assert wait_for(lambda: proxy.accepted == 2 and proxy.active == 1)  # reconnected
        got = [first]
        while (m := c.receive(1000)) is not None:
            got.append(m)
        assert [m.get_text() for m in got] == [f"m{i}" for i in range(20)]
        assert not any(m.get_jms_redelivered() for m in got)
        p.send(_text(s, "after"))
        m = c.receive(5000)
        assert m is not None and m.get_text() == "after"
        assert c.receive(300) is None

