"""The outcomes of committed transactions the broker keeps (issue 26): bounded by count and age,
durable with the store, and never confused with another store's or another start's ids."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqp_jms.broker import BrokerLimits
from amqp_jms.broker.routing.txn_outcomes import TxnOutcomes
from amqp_jms.broker.storage.sqlite_store import SQLiteStore
from amqp_jms.broker.storage.store import MemoryStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _outcomes(store: object = None, clock: Clock | None = None, **limits: object) -> TxnOutcomes:
    return TxnOutcomes(store or MemoryStore(), BrokerLimits(**limits), clock or Clock())  # type: ignore[arg-type]


def test_committed_rolled_back_and_unknown() -> None:
    o = _outcomes()
    a, b = o.new_id(), o.new_id()
    o.committed(a, "alice")
    assert o.outcome(a, "alice") is True
    assert o.outcome(b, "alice") is False  # made here, not open, never committed
    assert o.outcome(a, "mallory") is None  # another user's: not told
    assert o.outcome(o.new_id().replace(b".3", b".9"), "alice") is None  # never made
    assert o.outcome(b"txn:1", "alice") is None and o.outcome(b"0000." + a, "alice") is None
    other = _outcomes()
    assert other.outcome(a, "alice") is None  # another broker's store


def test_a_hostile_txn_id_is_unknown_never_an_error() -> None:
    """A peer chooses the txn-id it asks about: shapes this store never makes (extra or missing
    parts, signs, a 5,000-digit number past Python's int-parsing limit, non-ASCII) are answered
    "cannot tell", not with an exception on the broker's loop."""
    o = _outcomes()
    prefix = o.new_id().rsplit(b".", 2)[0] + b"."
    for bad in (b"", prefix, prefix + b"1", prefix + b"1.2.3", prefix + b"-1.-1", prefix + b"x.y",
                prefix + b"1." + b"9" * 5000, prefix + "١.٢".encode(), b"\xff" * 64):
        assert o.outcome(bad, "alice") is None, bad[:40]


def test_kept_up_to_the_count_and_the_age() -> None:
    clock = Clock()
    o = _outcomes(clock=clock, max_txn_outcomes=3, txn_outcome_seconds=60.0)
    ids = [o.new_id() for _ in range(5)]
    for i in ids:
        o.committed(i, "")
    assert [o.outcome(i, "") for i in ids] == [None, None, True, True, True]
    extra = o.new_id()  # made after the others, never committed
    assert o.outcome(extra, "") is False
    clock.now += 61
    assert [o.outcome(i, "") for i in ids] == [None] * 5
    assert o.outcome(extra, "") is False  # newer than every forgotten commit: still certain


def test_none_kept_offers_nothing() -> None:
    o = _outcomes(max_txn_outcomes=0)
    a = o.new_id()
    o.committed(a, "")
    assert not o.offered and o.outcome(a, "") is None


def test_the_store_keeps_them_across_a_restart(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    try:
        store = SQLiteStore(tmp_path / "b.sqlite", loop)
        o = _outcomes(store)
        committed, rolled_back = o.new_id(), o.new_id()
        store.begin_batch()
        o.committed(committed, "u")
        fut = store.end_batch()
        assert fut is not None
        loop.run_until_complete(fut)
        store.close()

        store = SQLiteStore(tmp_path / "b.sqlite", loop)
        again = _outcomes(store)
        assert again.store_id == o.store_id and again.epoch == o.epoch + 1
        assert again.new_id() not in (committed, rolled_back)  # ids are never made twice
        assert again.outcome(committed, "u") is True
        assert again.outcome(rolled_back, "u") is False  # it died with the first start
        store.close()
    finally:
        loop.close()
