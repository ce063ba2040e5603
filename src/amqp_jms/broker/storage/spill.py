"""Paging for deep queues: messages beyond a queue's memory limit wait in a temp SQLite file.

A queue that holds more than its limit of message bytes stops growing in memory: new messages go
to its spill file, and come back (highest priority first, then oldest) when the in-memory part
runs low, or at once when a paged message outranks everything in memory (the queue asks
``top_priority``). Writes are buffered and flushed in batches; the file is unsynchronised scratch space
(durability is the store's job, not this one's) and is deleted when the queue or broker goes.

A large message (``large.py``) is already a file of its own, mapped: paging it keeps that mapping
aside and writes only its row, so paging never copies it onto the heap nor into SQLite.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from .message import BrokerMessage

__all__ = ["Spill"]

_BATCH = 2000  # rows written to the file at once, at most
_BATCH_BYTES = 1 << 20  # ... or fewer once they hold this many bytes (paging bounds memory)
_BROWSE_PAGE = 200  # paged messages a browser reads back at a time


class Spill:
    def __init__(self, directory: str | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="amqp-jms-spill-", suffix=".db", dir=directory)
        os.close(fd)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute(
            "CREATE TABLE m (prio INTEGER, seq INTEGER, data BLOB, durable INTEGER, expiry REAL, "
            "count INTEGER, origin INTEGER, stored INTEGER, PRIMARY KEY (prio, seq)) WITHOUT ROWID"
        )
        self._db = db
        self._pending: list[tuple[int, int, bytes | None, int, float, int, int, int]] = []
        self._pending_bytes = 0
        self._large: dict[int, Any] = {}  # seq -> a large message's mapped file (row data NULL)
        self.count = 0
        self.bytes = 0  # message bytes paged out (the store-size limit counts them)
        self._by_priority = [0] * 10

    def top_priority(self) -> int:
        """The highest priority of a paged message (-1 when none is paged)."""
        for p in range(9, -1, -1):
            if self._by_priority[p]:
                return p
        return -1

    def __len__(self) -> int:
        return self.count

    def put(self, msg: BrokerMessage) -> None:
        data = msg.data
        self.bytes += len(data)
        if type(data) is not bytes:
            self._large[msg.seq] = data
            data = None
        else:
            self._pending_bytes += len(data)
        self._pending.append(
            (-msg.priority, msg.seq, data, int(msg.durable), msg.expiry, msg.delivery_count,
             msg.origin, int(msg.stored))
        )
        self.count += 1
        self._by_priority[msg.priority] += 1
        if len(self._pending) >= _BATCH or self._pending_bytes >= _BATCH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            db = self._db
            db.execute("BEGIN")
            db.executemany("INSERT INTO m VALUES (?,?,?,?,?,?,?,?)", self._pending)
            db.execute("COMMIT")
            self._pending.clear()
            self._pending_bytes = 0

    def take(self, n: int, max_bytes: int = 1 << 62) -> list[BrokerMessage]:
        """Up to ``n`` messages, highest priority first then oldest, removed from the file; no
        more (past the first) than ``max_bytes`` of heap (a page-in of big messages is bounded
        by bytes, not by a count)."""
        self._flush()
        rows = []
        size = 0
        cur = self._db.execute("SELECT * FROM m ORDER BY prio, seq LIMIT ?", (n,))
        for row in cur:
            rows.append(row)
            size += 256 if row[2] is None else len(row[2])
            if size >= max_bytes:
                break
        cur.close()
        if not rows:
            return []
        last = rows[-1]
        self._db.execute("BEGIN")
        self._db.execute(
            "DELETE FROM m WHERE prio < ? OR (prio = ? AND seq <= ?)", (last[0], last[0], last[1])
        )
        self._db.execute("COMMIT")
        self.count -= len(rows)
        out = []
        large = self._large
        for row in rows:
            self._by_priority[-row[0]] -= 1
            m = _message(row, large.pop(row[1]) if row[2] is None else row[2])
            self.bytes -= len(m.data)
            out.append(m)
        return out

    def browse(self, priority: int, upto: int) -> Iterator[BrokerMessage]:
        """Copies of the paged messages of one priority with ``seq <= upto``, oldest first, left
        in the file and read ``_BROWSE_PAGE`` at a time (a browser of a deep queue holds a page,
        not the queue); one taken meanwhile is not seen."""
        last = -1
        large = self._large
        while True:
            rows = self._page(priority, last, upto, _BROWSE_PAGE)
            if not rows:
                return
            for row in rows:
                data = row[2] if row[2] is not None else large.get(row[1])
                if data is not None:
                    yield _message(row, data)
            last = rows[-1][1]

    def _page(self, priority: int, after: int, upto: int, n: int) -> list[Any]:
        """The next ``n`` rows of one priority with ``after < seq <= upto``, oldest first (what is
        still buffered is written first)."""
        self._flush()
        return self._db.execute(
            "SELECT * FROM m WHERE prio = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
            (-priority, after, upto, n),
        ).fetchall()

    def take_matching(
        self, priority: int, after: int, upto: int, n: int, pred: Callable[[BrokerMessage], bool] | None
    ) -> tuple[list[BrokerMessage], int | None]:
        """A management walk's step through the paged messages of one priority: of the next ``n``
        (oldest first, ``after < seq <= upto``) remove and return those ``pred`` accepts (all when
        it is None); also the last seq looked at (None: nothing left to look at)."""
        rows = self._page(priority, after, upto, n)
        if not rows:
            return [], None
        large = self._large
        taken: list[BrokerMessage] = []
        for row in rows:
            data = row[2] if row[2] is not None else large.get(row[1])
            if data is None:
                continue
            m = _message(row, data)
            if pred is None or pred(m):
                taken.append(m)
        if taken:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM m WHERE prio = ? AND seq = ?",
                                 [(-priority, m.seq) for m in taken])
            self._db.execute("COMMIT")
            for m in taken:
                large.pop(m.seq, None)
                self.count -= 1
                self.bytes -= len(m.data)
                self._by_priority[priority] -= 1
        return taken, rows[-1][1]

    def drain(self) -> list[BrokerMessage]:
        return self.take(1 << 62)

    def close(self) -> None:
        self._large.clear()
        try:
            self._db.close()
        finally:
            try:
                os.unlink(self.path)
            except OSError:
                pass


def _message(row: tuple[int, int, bytes | None, int, float, int, int, int], data: Any) -> BrokerMessage:
    prio, seq, _, durable, expiry, count, origin, stored = row
    m = BrokerMessage(data, priority=-prio, durable=bool(durable), expiry=expiry,
                      delivery_count=count, origin=origin, seq=seq)
    m.stored = bool(stored)
    return m
