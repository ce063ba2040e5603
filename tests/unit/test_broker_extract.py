"""The management node's queue walk (``broker/routing/extract.py``) on a bare queue: it takes exactly the
messages that qualify, in delivery order, across steps between which consumers and releases
change the queue, and leaves everything else where it was."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import pytest

from amqp_jms.broker.routing import extract
from amqp_jms.broker.routing.extract import Extraction
from amqp_jms.broker.routing.queue import MessageQueue
from amqp_jms.broker.storage.message import BrokerMessage


def _queue(n: int, *, memory_limit: int = 0, priority: Callable[[int], int] = lambda i: 4) -> MessageQueue:
    q = MessageQueue("q", clock=time.time, memory_limit=memory_limit)
    for i in range(n):
        m = BrokerMessage(b"x" * 100, priority=priority(i))
        m.origin = i  # the message's number, for the test
        q.enqueue(m)
    return q


def _run(ext: Extraction, between: Callable[[], None] = lambda: None) -> list[int]:
    taken: list[int] = []
    while not ext.done:
        taken += [m.origin for m in ext.step(time.time())]
        between()
    return taken


def test_takes_the_matching_in_order_and_leaves_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "STEP_MESSAGES", 7)  # many small steps
    q = _queue(100)
    taken = _run(Extraction(q, pred=lambda m: m.origin % 3 == 0))
    assert taken == list(range(0, 100, 3))
    assert [m.origin for m in q] == [i for i in range(100) if i % 3]


def test_limit_and_what_arrives_meanwhile_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "STEP_MESSAGES", 5)
    q = _queue(20)
    assert _run(Extraction(q, limit=8)) == list(range(8))
    ext = Extraction(q)
    arrivals = itertools.count(1000)

    def arrive() -> None:
        m = BrokerMessage(b"y")
        m.origin = next(arrivals)
        q.enqueue(m)

    assert _run(ext, arrive) == list(range(8, 20))  # an endless producer cannot make it endless
    assert all(m.origin >= 1000 for m in q)


def test_consumers_taking_from_the_head_between_steps_do_not_make_it_skip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(extract, "STEP_MESSAGES", 4)
    q = _queue(60)
    gone: list[int] = []

    def consumer_takes_head() -> None:  # the head is a kept (non-matching) message or new
        bucket = q.bucket(4)
        if bucket:
            gone.append(q.remove_picked(4, [0])[0].origin)

    taken = _run(Extraction(q, pred=lambda m: m.origin % 2 == 1), consumer_takes_head)
    remaining = [m.origin for m in q]
    # every odd message was either taken by the walk or by the "consumer": none skipped, none twice
    odd = set(range(1, 60, 2))
    assert odd <= set(taken) | set(gone)
    assert not set(taken) & set(gone)
    assert not any(i % 2 for i in remaining)
    assert taken == sorted(taken)


def test_priorities_paged_and_delayed() -> None:
    q = _queue(300, memory_limit=5000, priority=lambda i: 9 if i % 10 == 0 else 4)
    assert q.paged > 200
    later = BrokerMessage(b"z", deliver_at=time.time() + 3600)
    later.origin = 999
    q.enqueue(later)
    taken = _run(Extraction(q, pred=lambda m: m.origin % 5 == 0))
    assert taken == [i for i in range(0, 300, 10)] + [i for i in range(300) if i % 5 == 0 and i % 10]
    assert len(q) == 300 - len(taken) and q.delayed == 1
    assert _run(Extraction(q, delayed=True))[-1] == 999  # a purge takes the scheduled one too
    assert len(q) == 0 and q.delayed == 0 and q.paged == 0
