"""A waiting send reads its own answer (``AmqpProvider.answer_here``): what a sender and the
other users of its connection rely on, frame by frame against the scripted peer (that the
sender reads it at all: ``tests/integration/test_waiting_send_reads_its_answer.py``, against a
broker in its own process, whose answers do not wait for this process's GIL).

A synchronous send whose connection's I/O thread sleeps reads the peer's answer on the sending
thread, for up to ``READ_HERE_SECONDS``; anything else the connection must do meanwhile (another
thread's call, an answer only the I/O thread may handle, a late answer, a lost socket) goes on
as before, and an interrupted wait either leaves the connection whole or ends it loudly.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Delivery
from send_paths import send_path  # noqa: F401  (autouse: every test on both paths)

from amqp_jms import ConnectionFactory, JMSException, Queue
from amqp_jms.client import Connection, MessageProducer, Session
from amqp_jms.provider.amqp import connection as amqp_connection
from amqp_jms.provider.amqp import write_through
from amqp_jms.testing.peer import TestPeer, _Expect

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def _conn(peer: TestPeer, options: str = "") -> Connection:
    peer.expect_open(offered_capabilities=["ANONYMOUS-RELAY"])
    peer.expect_begin()
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _producer(peer: TestPeer, conn: Connection) -> tuple[Session, MessageProducer]:
    """A session, and a producer for queue ``q`` the peer gives 10 credits."""
    s = conn.create_session()
    peer.expect_attach(offer=10)
    return s, s.create_producer(Queue("q"))


def _held_transfer(peer: TestPeer, held: list[Delivery]) -> None:
    """Expect a transfer and answer nothing yet: the test answers with ``_answer``."""
    peer._add(_Expect("transfer", None, lambda c, d: held.append(d), label="held transfer"))


def _answer(peer: TestPeer, d: Delivery, state: int = Delivery.ACCEPTED) -> None:
    def act(c: Any) -> None:
        d.update(state)
        d.settle()

    peer.run(act)


def test_a_refusal_read_by_the_sender_is_raised_by_send(peer: TestPeer) -> None:
    """Only ``accepted`` is taken on the sender's thread; any other outcome goes to the I/O
    thread's handling, which raises it from ``send`` as before."""
    with _conn(peer) as conn:
        s, p = _producer(peer, conn)
        peer.expect_transfer(outcome="rejected", condition=("amqp:unauthorized-access", "not yours"))
        with pytest.raises(JMSException, match="not yours"):
            p.send(s.create_text_message("x"))
        peer.expect_transfer()
        p.send(s.create_text_message("y"))  # the link goes on
        peer.wait()


def test_an_answer_later_than_the_read_budget_still_completes_the_send(peer: TestPeer) -> None:
    held: list[Delivery] = []
    with _conn(peer) as conn:
        s, p = _producer(peer, conn)
        _held_transfer(peer, held)
        timer = threading.Timer(0.3, lambda: _answer(peer, held[0]))  # 15x the budget
        timer.start()
        started = time.monotonic()
        p.send(s.create_text_message("slow"))
        assert 0.25 < time.monotonic() - started < 3
        timer.join()
        peer.wait()


def test_another_thread_is_not_held_up_by_a_waiting_sender(peer: TestPeer) -> None:
    """While one thread waits for a slow answer, another thread's call on the same connection
    (here: a session, which needs the I/O thread and a round trip) goes through at once."""
    held: list[Delivery] = []
    with _conn(peer) as conn:
        s, p = _producer(peer, conn)
        _held_transfer(peer, held)
        sent = threading.Event()
        t = threading.Thread(target=lambda: (p.send(s.create_text_message("slow")), sent.set()))
        t.start()
        deadline = time.monotonic() + 5
        while not held and time.monotonic() < deadline:
            time.sleep(0.005)
        assert held, "the transfer never reached the peer"
        peer.expect_begin()
        started = time.monotonic()
        conn.create_session()
        took = time.monotonic() - started
        assert not sent.is_set()  # the first send is still waiting for its answer
        assert took < 0.5, f"a session took {took:.3f} s behind a waiting send"
        _answer(peer, held[0])
        t.join(5)
        assert sent.is_set()
        peer.wait()


def test_a_sender_interrupted_while_waiting_leaves_the_connection_whole(peer: TestPeer) -> None:
    """Interrupted before anything was read (KeyboardInterrupt in ``poll``): the send raises
    it, the late answer is taken by the I/O thread, and the next send works."""
    held: list[Delivery] = []
    heard: list[JMSException] = []

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    with _conn(peer) as conn:
        conn.set_exception_listener(heard.append)
        s, p = _producer(peer, conn)
        _held_transfer(peer, held)
        main = threading.main_thread().ident
        assert main is not None and threading.get_ident() == main

        def interrupt_once_sent() -> None:  # the transfer is out: the sender is waiting
            deadline = time.monotonic() + 5
            while not held and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(0.002)
            signal.pthread_kill(main, signal.SIGUSR1)

        old = signal.signal(signal.SIGUSR1, interrupt)
        try:
            threading.Thread(target=interrupt_once_sent, daemon=True).start()
            with pytest.raises(KeyboardInterrupt):
                p.send(s.create_text_message("interrupted"))
        finally:
            signal.signal(signal.SIGUSR1, old)
        assert len(held) == 1
        _answer(peer, held[0])
        peer.expect_transfer()
        p.send(s.create_text_message("next"))
        peer.wait()
    assert heard == []


def _send_interrupted_in(peer: TestPeer, conn: Connection, monkeypatch: Any, method: str
                         ) -> tuple[Session, MessageProducer, list[int]]:
    """A waiting send interrupted (KeyboardInterrupt) the first time the provider's ``method``
    runs, as its answer is read: the session, the producer and the calls to ``method``."""
    original = getattr(amqp_connection.AmqpProvider, method)
    calls = [0]

    def interrupted(self: Any, *args: Any) -> bool:
        calls[0] += 1
        if calls[0] == 1:
            raise KeyboardInterrupt
        return bool(original(self, *args))

    held: list[Delivery] = []
    s, p = _producer(peer, conn)
    _held_transfer(peer, held)
    monkeypatch.setattr(amqp_connection.AmqpProvider, method, interrupted)
    # the answer comes once the sender surely reads (this in-process peer would otherwise race
    # it, for the socket and for the GIL), inside a read budget made long enough
    monkeypatch.setattr(amqp_connection, "READ_HERE_SECONDS", 5.0)
    timer = threading.Timer(0.2, lambda: _answer(peer, held[0]))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        p.send(s.create_text_message("x"))
    timer.join()
    return s, p, calls


def test_a_sender_interrupted_after_reading_ends_the_connection_loudly(
    peer: TestPeer, monkeypatch: Any, send_path: str,  # noqa: F811 (the imported fixture)
) -> None:
    """Interrupted between reading the socket and handing the bytes to the engine, a frame may
    be lost: the connection is failed, with a reason, rather than waiting forever for it. (The
    Python read: the C one, ``write_through.read_in``, reads into the engine in one call, with
    no such moment; see the next test.)"""
    if send_path != "Python":
        pytest.skip("the Python read's own case (the C read's is the next test)")
    heard: list[JMSException] = []
    got = threading.Event()
    with _conn(peer) as conn:
        conn.set_exception_listener(lambda e: (heard.append(e), got.set()))
        s, p, calls = _send_interrupted_in(peer, conn, monkeypatch, "_handle_here")
        assert got.wait(5), "the connection went on with a frame missing"
        assert "interrupted while reading" in str(heard[0])
        with pytest.raises(JMSException):
            p.send(s.create_text_message("after"))
    assert calls[0] >= 1


@pytest.mark.skipif(write_through.read_in is None, reason="the C accelerator _ctransfer was not built")
def test_a_sender_interrupted_once_its_answer_is_in_the_engine_leaves_the_connection_whole(
    peer: TestPeer, monkeypatch: Any, send_path: str,  # noqa: F811 (the imported fixture)
) -> None:
    """The C read puts what it read into the engine in the same call: interrupted right after,
    nothing is lost. The send raises the interrupt, its answer stays in the engine for whoever
    takes the events next, the connection lives on, and the next send works."""
    if send_path != "C":
        pytest.skip("the C read's own case (the Python read's is the test before)")
    heard: list[JMSException] = []
    with _conn(peer) as conn:
        conn.set_exception_listener(heard.append)
        s, p, calls = _send_interrupted_in(peer, conn, monkeypatch, "_took_input")
        assert calls[0] == 1
        # its answer is handled by the I/O thread, woken for it, not left for the next send
        deadline = time.monotonic() + 5
        while conn.metrics().sends_accepted < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert conn.metrics().sends_accepted == 1
        peer.expect_transfer()
        p.send(s.create_text_message("after"))
        peer.wait()
        assert conn.metrics().sends_accepted == 2  # the first one's answer was not lost
    assert heard == []


def test_a_connection_lost_while_a_sender_waits_fails_the_send(peer: TestPeer) -> None:
    held: list[Delivery] = []
    with _conn(peer) as conn:
        s, p = _producer(peer, conn)
        _held_transfer(peer, held)
        threading.Timer(0.1, peer.drop).start()
        started = time.monotonic()
        with pytest.raises(JMSException):
            p.send(s.create_text_message("lost"))
        assert time.monotonic() - started < 3
