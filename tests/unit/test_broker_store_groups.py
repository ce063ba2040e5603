"""The SQLite store's group commit: the rows of a loop turn and its barrier reach the writer
together, the barrier resolves only once those rows are committed (what a durable send's
"accepted" waits for), and whatever a group holds commits all or nothing."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.broker.storage.sqlite_store import SQLiteStore


def _rows(path: Path) -> list[tuple[str, int]]:
    """What another connection (a restarted broker) reads from the file."""
    with sqlite3.connect(str(path)) as db:
        return [(str(q), int(s)) for q, s in db.execute("SELECT queue, seq FROM messages ORDER BY seq")]


def _msg(seq: int) -> BrokerMessage:
    return BrokerMessage(b"\x00Sp\xc0\x01\x00", durable=True, seq=seq)


def test_a_barrier_resolves_once_the_turns_rows_are_committed(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite"

    async def main() -> None:
        store = SQLiteStore(path, asyncio.get_running_loop())
        try:
            for seq in range(1, 9):  # eight producers' sends in one loop turn: one group
                store.add(f"q{seq}", _msg(seq))
            first = store.barrier()
            assert store.barrier() is first  # one barrier per turn
            assert first is not None
            await asyncio.wait_for(first, 10)
            assert _rows(path) == [(f"q{s}", s) for s in range(1, 9)]
            alone = store.barrier()  # nothing new: resolves without a write
            assert alone is not None and alone is not first
            await asyncio.wait_for(alone, 10)
            store.add("q", _msg(20))  # inserts and a delete: one transaction
            store.remove("q1", _msg(1))
            mixed = store.barrier()
            assert mixed is not None
            await asyncio.wait_for(mixed, 10)
            assert ("q", 20) in _rows(path) and ("q1", 1) not in _rows(path)
            assert store.error is None
        finally:
            store.close()

    asyncio.run(main())


def test_a_group_that_fails_commits_none_of_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite"

    async def main() -> None:
        store = SQLiteStore(path, asyncio.get_running_loop())
        try:
            store.add("q", _msg(1))
            bad = _msg(2)
            bad.priority = None  # type: ignore[assignment]  # NOT NULL: the statement fails
            store.add("q", bad)
            fut = store.barrier()
            assert fut is not None
            await asyncio.wait_for(fut, 10)
            assert isinstance(store.error, sqlite3.IntegrityError)
            assert _rows(path) == []  # the first row did not commit without the second
        finally:
            store.close()

    asyncio.run(main())
