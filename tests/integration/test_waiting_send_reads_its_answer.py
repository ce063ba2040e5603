"""A waiting send's answer is read by the sending thread (``AmqpProvider.answer_here``), not the
connection's I/O thread: one thread woken per round trip instead of two, on a plain and on a
failover connection. Against the embedded broker in its own process: an in-process peer would
answer only when this process's GIL lets it, racing the sender to its read.
"""

from __future__ import annotations

import resource
import select
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from waiting import threads_calling

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.provider import config
from amqp_jms.provider import loop as loop_module
from amqp_jms.provider.amqp.producer import AmqpProducer
from amqp_jms.testing.broker_process import BrokerProcess


@pytest.fixture
def broker(broker_process: BrokerProcess) -> BrokerProcess:
    return broker_process


@pytest.mark.parametrize("failover", [False, True], ids=["plain", "failover"])
def test_the_answer_to_a_waiting_send_is_read_by_the_sender(
    broker: BrokerProcess, monkeypatch: Any, failover: bool,
) -> None:
    readers = threads_calling(monkeypatch, AmqpProducer, "on_delivery_raw")
    url = f"failover:({broker.url})" if failover else broker.url
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(f"read-here-{failover}"))
        for i in range(40):
            p.send(s.create_text_message(f"m{i}"))  # PERSISTENT: each waits for its outcome
    assert len(readers) == 40
    here = readers.count(threading.current_thread().name)
    # (a loaded machine may find the I/O thread awake now and then; without the path: none)
    assert here >= 20, readers


@pytest.mark.parametrize("failover", [False, True], ids=["plain", "failover"])
def test_the_answer_to_an_awaited_send_is_read_by_the_awaiting_event_loop(
    broker: BrokerProcess, monkeypatch: Any, failover: bool,
) -> None:
    """The asyncio face: the socket is lent to the event loop whose task awaits the send
    (``Provider.answer_on_loop``, ``read_lease``), so that loop's thread, not the I/O thread,
    takes the broker's answers; every message is stored once."""
    import asyncio

    from amqp_jms.aio import AsyncConnectionFactory

    readers = threads_calling(monkeypatch, AmqpProducer, "on_delivery_raw")
    url = f"failover:({broker.url})" if failover else broker.url
    queue = f"read-on-loop-{failover}"

    async def send_all() -> None:
        async with await AsyncConnectionFactory(url).create_connection() as conn:
            s = await conn.create_session()
            p = await s.create_producer(Queue(queue))
            for i in range(40):
                await p.send(s.create_text_message(f"m{i}"))  # PERSISTENT: awaits its outcome

    asyncio.run(send_all())
    assert len(readers) == 40
    here = readers.count(threading.current_thread().name)
    # (a loaded machine may find the I/O thread awake now and then; without the path: none)
    assert here >= 20, readers
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue(queue))
        got = [c.receive(2000) for _ in range(40)]
        assert [m.get_text() if m is not None else None for m in got] == [f"m{i}" for i in range(40)]
        assert c.receive(200) is None


class _CountingPoll:
    """``select.poll`` of a waiting caller's reads, counting how each answer was found: by a poll
    that does not sleep (``poll(0)``) or by one that sleeps until the socket is readable."""

    def __init__(self, counts: dict[str, int]) -> None:
        self._poll = _real_poll()
        self._counts = counts

    def register(self, fd: int, mask: int) -> None:
        self._poll.register(fd, mask)

    def poll(self, timeout: float | None = None) -> list[tuple[int, int]]:
        ready = self._poll.poll(timeout)
        if ready:
            self._counts["found awake" if timeout == 0 else "found after a sleep"] += 1
        return ready


_real_poll = select.poll


def _answers_found(url: str, queue: str, monkeypatch: pytest.MonkeyPatch, sends: int = 200
                   ) -> tuple[dict[str, int], float]:
    """How the sending thread found its answers, and how often it slept (gave up its CPU) per
    waiting send."""
    counts = {"found awake": 0, "found after a sleep": 0}
    with monkeypatch.context() as m:
        m.setattr(loop_module, "select", SimpleNamespace(poll=lambda: _CountingPoll(counts),
                                                         POLLIN=select.POLLIN))
        with ConnectionFactory(url).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue(queue))
            for _ in range(20):
                p.send(s.create_text_message("warm"))
            before = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
            for i in range(sends):
                p.send(s.create_text_message(f"m{i}"))
            sleeps = (resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw - before) / sends
    return counts, sleeps


@pytest.mark.skipif(not hasattr(resource, "RUSAGE_THREAD"), reason="per-thread usage is Linux's")
def test_a_progressive_wait_polls_for_its_answer_and_a_conservative_one_sleeps(
    broker: BrokerProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``provider.futureType``: a progressive caller polls the socket before it sleeps, so a
    nearby broker's answer finds it awake; a conservative one sleeps until the answer wakes it,
    once per send. (The polling is stretched from 1 ms to 50 ms here: a loaded machine may keep
    the broker past a millisecond, and it is the polling that is tested, not the broker. How the
    answers were found is counted at the caller's poll, not by the thread's context switches: a
    polling caller lets go of the GIL at each poll, and under a loaded test run another thread
    of this process taking it then counts as a sleep too.)"""
    monkeypatch.setitem(config._SPIN_SECONDS, "progressive", 0.05)
    conservative, slept = _answers_found(f"{broker.url}?provider.futureType=conservative",
                                         "future-conservative", monkeypatch)
    progressive, _ = _answers_found(f"{broker.url}?provider.futureType=progressive",
                                    "future-progressive", monkeypatch)
    # (a loaded machine sends some of them the I/O thread's way, where the caller sleeps anyway
    # and reads nothing: of 200, at least a tenth are read by the caller even then)
    assert conservative["found awake"] == 0, conservative  # it never polls without sleeping
    assert conservative["found after a sleep"] >= 20, conservative
    assert slept > 0.5, slept
    assert progressive["found awake"] >= 20, progressive
    assert progressive["found awake"] > 4 * progressive["found after a sleep"], progressive


def test_an_accepted_answer_is_taken_alone_and_its_delivery_settled_later(
    broker: BrokerProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The usual answer, ``accepted`` and the only event pending, resolves the send at once
    (``AmqpProducer.accepted_alone``) and is counted then; its delivery is settled by whoever
    next takes the connection's events, so none is left unsettled once the connection has
    taken another turn, and none is counted twice."""
    taken: list[str] = []
    original = AmqpProducer.accepted_alone

    def spy(self: AmqpProducer, delivery: Any, tag: str, fut: Any) -> bool:
        took = original(self, delivery, tag, fut)
        if took:
            taken.append(threading.current_thread().name)
        return took

    monkeypatch.setattr(AmqpProducer, "accepted_alone", spy)
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("taken-alone"))
        for i in range(40):
            p.send(s.create_text_message(f"m{i}"))
            assert conn.metrics().sends_accepted == i + 1  # counted when send returns
        # (a loaded machine may find the I/O thread awake now and then)
        assert taken.count(threading.current_thread().name) >= 20, taken
        conn.create_session().close()  # a turn of the I/O thread, which takes what was left
        link: Any = p._provider_producer
        assert link._answered == set()
        assert link.endpoint.unsettled == 0
        assert conn.metrics().sends_accepted == 40
