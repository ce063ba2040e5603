"""A waiting send's fast path, against the scripted peer, on both faces.

A synchronous send writes its transfer on the caller's thread when the connection's I/O thread
sleeps (``LoopThread.run_if_idle``), and the I/O thread completes the wait when the outcome
comes. What that path must keep: the outcome is the same when it lands before the caller waits;
a caller that gives up (timeout, KeyboardInterrupt) leaves the connection usable for the next
send; a connection lost mid-wait fails the send at once, not at the send timeout.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from send_paths import send_path  # noqa: F401  (autouse: every test on both paths)

from amqp_jms import ConnectionFactory, JMSException, Queue, TextMessage
from amqp_jms.aio import AsyncConnectionFactory
from amqp_jms.provider.amqp.connection import AmqpProvider
from amqp_jms.provider.amqp.producer import AmqpProducer
from amqp_jms.testing.peer import TestPeer

OPTIONS = "?jms.closeTimeout=1000&jms.requestTimeout=5000&jms.sendTimeout=3000&amqp.drainTimeout=1000"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open()
        p.expect_begin()
        p.expect_attach(lambda a: a.role == "sender", offer=100)
        yield p


@pytest.fixture
def transfer_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread each transfer was handed to proton on."""
    names: list[str] = []
    transfer = AmqpProducer._transfer

    def recorded(self: AmqpProducer, data: bytes, fut: Any, here: bool = False) -> None:
        names.append(threading.current_thread().name)
        transfer(self, data, fut, here)

    monkeypatch.setattr(AmqpProducer, "_transfer", recorded)
    return names


def test_waiting_sends_are_written_by_the_caller(peer: TestPeer, transfer_threads: list[str]) -> None:
    for _ in range(20):
        peer.expect_transfer()
    with ConnectionFactory(peer.url + OPTIONS).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue("q"))
        for i in range(20):
            producer.send(TextMessage(f"m{i}"))
        peer.wait()
    me = threading.current_thread().name
    # the I/O thread sleeps between two waiting sends: nearly all go the direct way
    assert transfer_threads.count(me) >= 10, transfer_threads


@pytest.mark.parametrize("outcome", ["accepted", "rejected"])
def test_an_outcome_that_lands_before_the_caller_waits(
    peer: TestPeer, monkeypatch: pytest.MonkeyPatch, outcome: str
) -> None:
    wait = AmqpProvider.wait

    def late(self: AmqpProvider, fut: Any, timeout: float | None, what: str) -> Any:
        time.sleep(0.3)  # the peer answers meanwhile
        assert fut.done()
        return wait(self, fut, timeout, what)

    monkeypatch.setattr(AmqpProvider, "wait", late)
    peer.expect_transfer(outcome=outcome, condition=("amqp:precondition-failed", "no room"))
    with ConnectionFactory(peer.url + OPTIONS).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue("q"))
        if outcome == "accepted":
            producer.send(TextMessage("m"))
        else:
            with pytest.raises(JMSException, match="no room"):
                producer.send(TextMessage("m"))
        peer.wait()


def test_an_outcome_that_lands_before_the_async_caller_waits(peer: TestPeer) -> None:
    peer.expect_transfer()
    peer.expect_transfer(outcome="rejected", condition=("amqp:precondition-failed", "no room"))

    async def main() -> None:
        async with await AsyncConnectionFactory(peer.url + OPTIONS).create_connection() as conn:
            session = await conn.create_session()
            producer = await session.create_producer(Queue("q"))
            accepted = producer.send_nowait(session.create_text_message("a"))
            refused = producer.send_nowait(session.create_text_message("r"))
            await asyncio.sleep(0.3)  # both outcomes land before anyone awaits them
            await accepted
            with pytest.raises(JMSException, match="no room"):
                await refused

    asyncio.run(main())
    peer.wait()


def test_a_timed_out_send_leaves_the_connection_usable(peer: TestPeer) -> None:
    peer.expect_transfer(outcome=None)  # never answered
    peer.expect_transfer()
    with ConnectionFactory(peer.url + OPTIONS.replace("3000", "300")).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue("q"))
        with pytest.raises(JMSException, match=r"send timed out after 0\.3 s"):
            producer.send(TextMessage("lost"))
        t0 = time.monotonic()
        producer.send(TextMessage("next"))
        assert time.monotonic() - t0 < 2.0
        peer.wait()


def test_a_send_interrupted_by_keyboard_interrupt_leaves_the_connection_usable(
    peer: TestPeer,
) -> None:
    assert threading.current_thread() is threading.main_thread()
    peer.expect_transfer(outcome=None)  # never answered
    peer.expect_transfer()
    with ConnectionFactory(peer.url + OPTIONS).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue("q"))
        main = threading.main_thread().ident
        assert main is not None
        timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))  # Ctrl-C
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            producer.send(TextMessage("interrupted"))
        assert time.monotonic() - t0 < 2.5  # interrupted, not timed out (3 s)
        timer.join()
        producer.send(TextMessage("next"))
        peer.wait()


def test_a_connection_lost_mid_wait_fails_the_send_at_once(peer: TestPeer) -> None:
    peer.expect_transfer(lambda t: threading.Timer(0.2, peer.drop).start() or True, outcome=None)
    with ConnectionFactory(peer.url + OPTIONS).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue("q"))
        t0 = time.monotonic()
        with pytest.raises(JMSException, match="lost"):
            producer.send(TextMessage("m"))
        assert time.monotonic() - t0 < 2.5  # not the 3 s send timeout


def test_a_connection_lost_mid_wait_fails_the_async_send_at_once(peer: TestPeer) -> None:
    peer.expect_transfer(lambda t: threading.Timer(0.2, peer.drop).start() or True, outcome=None)

    async def main() -> float:
        async with await AsyncConnectionFactory(peer.url + OPTIONS).create_connection() as conn:
            session = await conn.create_session()
            producer = await session.create_producer(Queue("q"))
            t0 = time.monotonic()
            with pytest.raises(JMSException, match="lost"):
                await producer.send(session.create_text_message("m"))
            return time.monotonic() - t0

    assert asyncio.run(main()) < 2.5


# -- a pull consumer's receive (prefetch 0) takes the same path --------------------------------------
@pytest.fixture
def pull_peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open()
        p.expect_begin()
        p.expect_attach(lambda a: a.role == "receiver")
        yield p


def test_a_pull_receive_credits_and_acknowledges_from_the_caller(
    pull_peer: TestPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    peer = pull_peer
    from proton import Message as PMessage
    from proton import byte, symbol

    from amqp_jms.provider.amqp.consumer import AmqpConsumer

    threads: list[str] = []
    pull = AmqpConsumer.pull

    def recorded(self: AmqpConsumer, drain: bool) -> Any:
        fut = pull(self, drain)
        threads.append("done at once" if fut.done() else "handed over")
        return fut

    monkeypatch.setattr(AmqpConsumer, "pull", recorded)
    text = [PMessage(body=f"m{i}", annotations={symbol("x-opt-jms-msg-type"): byte(5)}) for i in range(3)]
    acks: list[Any] = []
    for m in text:
        peer.expect_flow(lambda f: f.credit == 1, send=[m])
        peer.expect_disposition(acks.append)
    with ConnectionFactory(peer.url + OPTIONS + "&jms.prefetchPolicy.all=0").create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("q"))
        got = []
        for _ in range(3):
            msg = consumer.receive(3000)
            assert msg is not None
            got.append(msg.get_body(str))
        peer.wait()
    assert got == ["m0", "m1", "m2"]
    assert len(acks) == 3
    assert threads.count("done at once") >= 2, threads  # the credit given without the I/O thread


@pytest.mark.parametrize("reading_here", [False, True], ids=["io-thread", "reading-here"])
def test_a_connection_lost_mid_pull_receive_ends_it_at_once(
    pull_peer: TestPeer, monkeypatch: pytest.MonkeyPatch, reading_here: bool,
) -> None:
    """``reading_here``: the loss comes while the receiving thread reads the socket itself
    (``read_here``, its budget stretched so that it surely does): the socket's end gives the
    connection back to the I/O thread, which ends the consumer. Otherwise the I/O thread reads
    it (the caller gave up reading after ``READ_HERE_SECONDS``)."""
    from amqp_jms.provider.amqp import connection as amqp_connection

    if reading_here:
        monkeypatch.setattr(amqp_connection, "READ_HERE_SECONDS", 5.0)
    peer = pull_peer
    peer.expect_flow(lambda f: threading.Timer(0.2, peer.drop).start() or True)  # never answered
    with ConnectionFactory(peer.url + OPTIONS + "&jms.prefetchPolicy.all=0").create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("q"))
        t0 = time.monotonic()
        # no timeout: only the loss ends it, as a close does (JMS: null when the consumer closes)
        assert consumer.receive() is None
        assert time.monotonic() - t0 < 2.5


@pytest.mark.parametrize("reading_here", [False, True], ids=["io-thread", "reading-here"])
def test_a_connection_lost_mid_drain_ends_receive_no_wait_at_once(
    pull_peer: TestPeer, monkeypatch: pytest.MonkeyPatch, reading_here: bool,
) -> None:
    """A prefetch-0 ``receive_no_wait`` waits for its drain's answer (``DrainOutcome``); the
    connection lost meanwhile ends it at once, whether the waiting thread reads the socket
    itself (``answer_drain_here``) or the I/O thread does, not after ``amqp.drainTimeout``."""
    from amqp_jms.provider.amqp import connection as amqp_connection

    if reading_here:
        monkeypatch.setattr(amqp_connection, "READ_HERE_SECONDS", 5.0)
    peer = pull_peer
    peer.expect_flow(lambda f: threading.Timer(0.2, peer.drop).start() or True)  # never answered
    url = peer.url + OPTIONS + "&jms.prefetchPolicy.all=0&amqp.drainTimeout=20000"
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("q"))
        t0 = time.monotonic()
        try:
            got = consumer.receive_no_wait()
        except JMSException as e:
            got = e
        took = time.monotonic() - t0
    assert took < 2.5, (took, got)
    assert got is None or isinstance(got, JMSException), got


def test_a_receive_interrupted_after_reading_ends_the_connection_loudly(
    pull_peer: TestPeer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Interrupted between reading the socket and handing the bytes to the engine, a frame (the
    message) may be lost: the connection is failed with a reason, not left waiting for it."""
    from proton import Message as PMessage
    from proton import byte, symbol

    from amqp_jms.provider.amqp import connection as amqp_connection

    heard: list[JMSException] = []
    got = threading.Event()
    original = AmqpProvider._handle_here
    calls = [0]

    def interrupted(self: Any, data: bytes, fut: Any, done: Any = None) -> bool:
        calls[0] += 1
        if calls[0] == 1:
            raise KeyboardInterrupt
        return bool(original(self, data, fut, done))

    monkeypatch.setattr(amqp_connection, "READ_HERE_SECONDS", 5.0)
    peer = pull_peer
    m = PMessage(body="m", annotations={symbol("x-opt-jms-msg-type"): byte(5)})
    # the message comes once the receiver surely reads (the in-process peer would otherwise race
    # it), inside the stretched read budget
    peer.expect_flow(lambda f: threading.Timer(0.2, lambda: peer.send(f.link_name, m)).start() or True)
    with ConnectionFactory(peer.url + OPTIONS + "&jms.prefetchPolicy.all=0").create_connection() as conn:
        conn.set_exception_listener(lambda e: (heard.append(e), got.set()))
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("q"))
        monkeypatch.setattr(AmqpProvider, "_handle_here", interrupted)
        with pytest.raises(KeyboardInterrupt):
            consumer.receive(3000)
        assert got.wait(5), "the connection went on with a frame missing"
        assert "interrupted while reading" in str(heard[0])
    assert calls[0] >= 1
