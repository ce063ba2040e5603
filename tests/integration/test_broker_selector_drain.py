"""A drain on a selector consumer ends only after the whole queue was offered to it.

The embedded broker scans for a selector in slices of ``SCAN_SLICE`` messages, yielding to its
event loop between slices. A drain answered after the first slice said "empty" while matching
messages lay further on, so a pipeline reading "until drained" (Spark's availableNow) stopped
early and left them on the queue.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import Connection, ConnectionFactory, Queue, TextMessage
from amqp_jms.broker.routing.queue import SCAN_SLICE


@pytest.fixture
def conn(broker: Any) -> Iterator[Connection]:
    c = ConnectionFactory(broker.url + "?jms.presettlePolicy.presettleProducers=true").create_connection()
    c.start()
    yield c
    c.close()


def _send(conn: Connection, queue: str, kinds: list[str]) -> None:
    producer = conn.create_session(False).create_producer(Queue(queue))
    for i, kind in enumerate(kinds):
        message = TextMessage(f"{kind}-{i}")
        message.set_string_property("kind", kind)
        producer.send(message)
    producer.close()  # everything written and the detach answered: all of it is on the queue


def _read_until_drained(conn: Connection, queue: str, selector: str) -> list[str]:
    consumer = conn.create_session(False).create_consumer(Queue(queue), selector)
    got = []
    while True:
        message = consumer.receive_no_wait()
        if message is None:
            assert consumer.drain()
            message = consumer.receive_no_wait()
            if message is None:
                return got
        got.append(message.get_text())


def test_a_drain_waits_for_matches_beyond_the_first_scan_slice(conn: Connection) -> None:
    kinds = ["miss"] * (3 * SCAN_SLICE) + ["hit"] * 5 + ["miss"] * SCAN_SLICE + ["hit"] * 5
    _send(conn, "sel-drain", kinds)
    got = _read_until_drained(conn, "sel-drain", "kind = 'hit'")
    assert got == [f"hit-{i}" for i, k in enumerate(kinds) if k == "hit"]


def test_a_drain_with_nothing_matching_still_ends(conn: Connection) -> None:
    _send(conn, "sel-drain-none", ["miss"] * (2 * SCAN_SLICE + 7))
    assert _read_until_drained(conn, "sel-drain-none", "kind = 'hit'") == []
    # the misses are all still there for a consumer that takes them
    assert len(_read_until_drained(conn, "sel-drain-none", "kind = 'miss'")) == 2 * SCAN_SLICE + 7
