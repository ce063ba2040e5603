"""The durable store: SQLite in WAL mode, written by one thread with group commit.

The event loop never waits on SQLite. Changes collect as ready parameter tuples during a loop
turn and go to the writer thread in one hand-off with the turn's ``barrier()`` future; the writer
takes everything queued, applies it in one transaction (SQLite runs without the GIL) and commits
once (group commit), then resolves the group's futures on the loop with one wake-up. A group of
message inserts alone (the synchronous durable send) is one multi-row INSERT in autocommit: the
writer takes the GIL back once per group, not for BEGIN, INSERT and COMMIT each.
``begin_batch``/``end_batch`` keep a transaction's changes in one group so a commit is atomic.

Durability: ``synchronous=NORMAL`` in WAL mode survives a process crash (the broker's promise);
``synchronous=FULL`` (``fsync=True``) also survives power loss, at a cost per group.

A large message (``large.py``: a mapped file, not ``bytes``) is not put in a row: the writer
copies it in 1 MiB pieces to ``large/<seq>`` beside the database (synced first under ``fsync``),
renamed into place before its row commits, and the row's data is left empty (no stored message
is empty: a durable one has a header). Recovery maps the file back, so a 100 MB message passes
through neither SQLite nor the heap; the file goes once its row is deleted, and files without a
row (a crash between the two) are deleted at load.
"""

from __future__ import annotations

import asyncio
import functools
import json
import mmap
import os
import queue
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

from .message import BrokerMessage, advance_seq
from .store import Store

__all__ = ["SQLiteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queues (name TEXT PRIMARY KEY, kind TEXT NOT NULL, meta TEXT);
CREATE TABLE IF NOT EXISTS messages (
    queue TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, priority INTEGER NOT NULL,
    durable INTEGER NOT NULL, expiry REAL NOT NULL, deliver_at REAL NOT NULL,
    delivery_count INTEGER NOT NULL, PRIMARY KEY (queue, seq)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS txn_outcomes (
    epoch INTEGER NOT NULL, n INTEGER NOT NULL, at REAL NOT NULL, user TEXT NOT NULL,
    PRIMARY KEY (epoch, n)
);
"""

Op = tuple[Any, ...]


class SQLiteStore(Store):
    persistent = True

    def __init__(self, path: str | Path, loop: asyncio.AbstractEventLoop, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.loop = loop
        self._fsync = fsync
        self._large_dir = self.path.parent / "large"
        self._large: set[int] = set()  # seqs whose message is a file in _large_dir (writer thread)
        self._ops: queue.SimpleQueue[Op | None] = queue.SimpleQueue()
        self._batch: _Buffer | None = None
        self._pending_barrier: asyncio.Future[None] | None = None
        self._buf = _Buffer()
        self._handoff_scheduled = False
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                             cached_statements=256)  # (room for _insert_n's statements)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        db.executescript(_SCHEMA)
        self._db = db
        self._identity = self._next_start()
        self._thread = threading.Thread(
            target=self._run, name=f"amqp-jms-store-{self.path.name}", daemon=True
        )
        self._thread.start()
        self.error: BaseException | None = None

    # -- submitting (event loop) ---------------------------------------------------------------
    # Changes collect in a _Buffer on the loop and go to the writer once per loop turn (a queue
    # put per message would wake the writer, and hand it the GIL, for every message). Message
    # rows are kept as ready parameter tuples so the writer only calls ``executemany``.
    def _target(self) -> _Buffer:
        if self._batch is not None:
            return self._batch
        if not self._handoff_scheduled:
            self._handoff_scheduled = True
            self.loop.call_soon(self._handoff)
        return self._buf

    def _handoff(self) -> None:
        # the turn's changes and its barrier in one put: one wake-up of the writer, one group
        # (a put each would let the writer commit the changes alone, then wake again for an
        # empty group holding the barrier)
        self._handoff_scheduled = False
        items = self._buf.take()
        fut, self._pending_barrier = self._pending_barrier, None
        if items or fut is not None:
            self._ops.put(("ops", items, fut))

    def add(self, queue: str, msg: BrokerMessage) -> None:
        row = (queue, msg.seq, msg.data, msg.priority, int(msg.durable), msg.expiry, msg.deliver_at,
               msg.delivery_count)
        if type(msg.data) is bytes:
            self._target().adds.append(row)
        else:  # a large message: its own file (in order with the rows around it)
            self._target().op(("large", row))

    def remove(self, queue: str, msg: BrokerMessage) -> None:
        self._target().removes.append((queue, msg.seq))

    def remove_many(self, queue: str, msgs: list[BrokerMessage]) -> None:
        self._target().removes.extend([(queue, msg.seq) for msg in msgs])

    def update_count(self, queue: str, msg: BrokerMessage) -> None:
        self._target().op(("count", msg.delivery_count, queue, msg.seq))

    def mark_delivered(self, queue: str, msg: BrokerMessage) -> None:
        # applied after the loop turn's inserts and deletes, as MAX: order-free, one executemany
        self._target().marks.append((msg.delivery_count + 1, queue, msg.seq))

    def save_queue(self, name: str, kind: str, meta: dict[str, Any] | None) -> None:
        self._target().op(("saveq", name, kind, json.dumps(meta) if meta is not None else None))

    def delete_queue(self, name: str) -> None:
        self._target().op(("delq", name))

    def barrier(self) -> asyncio.Future[None] | None:
        # one future per loop turn is enough: everything submitted before it commits with it
        fut = self._pending_barrier
        if fut is None:
            fut = self._pending_barrier = self.loop.create_future()
            if not self._handoff_scheduled:
                self._handoff_scheduled = True
                self.loop.call_soon(self._handoff)
        return fut

    def begin_batch(self) -> None:
        self._batch = _Buffer()

    def end_batch(self) -> asyncio.Future[None] | None:
        buf, self._batch = self._batch, None
        batch = buf.take() if buf is not None else []
        if not batch:
            return None
        fut: asyncio.Future[None] = self.loop.create_future()
        self._handoff()
        self._ops.put(("batch", batch, fut))
        return fut

    def _next_start(self) -> tuple[str, int]:
        """The store's id (made with it) and this start's number, one more than the last start's:
        written before the broker serves anything, so no transaction id is ever made twice."""
        db = self._db
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('store_id', 'epoch')").fetchall())
        store_id = meta.get("store_id") or uuid.uuid4().hex[:16]
        epoch = int(meta.get("epoch", "0")) + 1
        db.execute("BEGIN")
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                       [("store_id", store_id), ("epoch", str(epoch))])
        db.execute("COMMIT")
        return store_id, epoch

    def identity(self) -> tuple[str, int]:
        return self._identity

    def load_txn_outcomes(self) -> tuple[list[tuple[int, int, float, str]], tuple[int, int]]:
        rows = [(int(e), int(n), float(at), str(u)) for e, n, at, u in
                self._db.execute("SELECT epoch, n, at, user FROM txn_outcomes ORDER BY at, epoch, n")]
        below = self._db.execute("SELECT value FROM meta WHERE key='txn_forgotten_below'").fetchone()
        e, _, n = (below[0] if below else "0:0").partition(":")
        return rows, (int(e), int(n))

    def txn_committed(self, key: tuple[int, int], at: float, user: str) -> None:
        self._target().op(("txn", key[0], key[1], at, user))

    def txn_forgotten(self, keys: list[tuple[int, int]], below: tuple[int, int]) -> None:
        self._target().op(("txnforget", keys, f"{below[0]}:{below[1]}"))

    # -- recovery ------------------------------------------------------------------------------
    def load(self) -> tuple[list[tuple[str, str, dict[str, Any] | None]], list[tuple[str, BrokerMessage]]]:
        defs = [
            (str(n), str(k), json.loads(m) if m else None)
            for n, k, m in self._db.execute("SELECT name, kind, meta FROM queues ORDER BY rowid")
        ]
        msgs: list[tuple[str, BrokerMessage]] = []
        top = 0
        rows = self._db.execute(
            "SELECT queue, seq, data, priority, durable, expiry, deliver_at, delivery_count "
            "FROM messages ORDER BY seq"
        )
        for q, seq, data, prio, durable, expiry, deliver_at, count in rows:
            if not data:  # a large message: its file
                data = self._map_large(int(seq))
                if data is None:
                    continue
            msgs.append((str(q), BrokerMessage(bytes(data) if type(data) is not mmap.mmap else data,
                                               priority=int(prio), durable=bool(durable),
                                               expiry=float(expiry), deliver_at=float(deliver_at),
                                               delivery_count=int(count), seq=int(seq))))
            top = max(top, int(seq))
        advance_seq(top)
        self._drop_orphans()
        return defs, msgs

    # -- large messages: a file each -----------------------------------------------------------
    def _map_large(self, seq: int) -> mmap.mmap | None:
        try:
            with open(self._large_dir / str(seq), "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # missing or empty: the row cannot be served
            return None
        self._large.add(seq)
        return data

    def _drop_orphans(self) -> None:
        if not self._large_dir.is_dir():
            return
        for entry in os.scandir(self._large_dir):
            name = entry.name
            if not (name.isdigit() and int(name) in self._large):
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass

    def _write_large(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """Writer thread: a large message's bytes to its file; the row to insert (data empty)."""
        seq, data = row[1], row[2]
        self._large_dir.mkdir(exist_ok=True)
        final = self._large_dir / str(seq)
        tmp = final.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            view = memoryview(data)
            for i in range(0, len(view), _PIECE):
                f.write(view[i : i + _PIECE])
                data.madvise(mmap.MADV_DONTNEED, i, min(_PIECE, len(view) - i))  # out of our RSS
            if self._fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, final)
        self._large.add(seq)
        return (row[0], seq, b"", *row[3:])

    def _unlink_large(self, seqs: list[int]) -> None:
        """Writer thread, after the commit: the files of deleted rows."""
        for seq in seqs:
            self._large.discard(seq)
            try:
                os.unlink(self._large_dir / str(seq))
            except OSError:
                pass

    # -- writer thread -------------------------------------------------------------------------
    def _run(self) -> None:
        ops = self._ops
        while True:
            first = ops.get()
            if first is None:
                return
            group = [first]
            stop = False
            while True:
                try:
                    nxt = ops.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                group.append(nxt)
            self._apply(group)
            if stop:
                return

    def _apply(self, group: list[Op]) -> None:
        items: list[Op] = []
        futures: list[asyncio.Future[None]] = []
        for op in group:
            if op[0] == "ops":
                items.extend(op[1])
                if op[2] is not None:
                    futures.append(op[2])
            elif op[0] == "batch":
                items.extend(op[1])
                futures.append(op[2])
        db = self._db
        gone: list[int] = []  # large messages whose rows this group deletes
        large = self._large
        try:
            if not items:
                pass  # barriers alone: what came before them is committed already
            elif _one_statement(items):
                # the usual group of synchronous sends: its rows in one INSERT, in autocommit (a
                # statement is its own transaction, as atomic as BEGIN/COMMIT), so the writer
                # re-takes the GIL once per group instead of three times
                rows = items[0][1]
                db.execute(_insert_n(len(rows)), [v for row in rows for v in row])
                items = []
            else:
                db.execute("BEGIN")
            for item in items:
                kind = item[0]
                if kind == "seg":
                    if item[1]:
                        _write_rows(db, _INSERT_ONE, _INSERT_MANY, item[1])
                    if item[2]:
                        _write_rows(db, _DELETE_ONE, _DELETE_MANY, item[2])
                        if large:
                            gone.extend(seq for _, seq in item[2] if seq in large)
                elif kind == "large":
                    db.execute(_INSERT_ONE, self._write_large(item[1]))
                elif kind == "marks":
                    db.executemany(_MARK, item[1])
                elif kind == "count":
                    db.execute("UPDATE messages SET delivery_count=? WHERE queue=? AND seq=?", item[1:])
                elif kind == "saveq":
                    db.execute("INSERT OR REPLACE INTO queues VALUES (?,?,?)", item[1:])
                elif kind == "txn":
                    db.execute("INSERT OR REPLACE INTO txn_outcomes VALUES (?,?,?,?)", item[1:])
                elif kind == "txnforget":
                    db.executemany("DELETE FROM txn_outcomes WHERE epoch=? AND n=?", item[1])
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('txn_forgotten_below', ?)", (item[2],))
                elif kind == "delq":
                    gone.extend(seq for (seq,) in db.execute(
                        "SELECT seq FROM messages WHERE queue=? AND length(data)=0", (item[1],)))
                    db.execute("DELETE FROM queues WHERE name=?", (item[1],))
                    db.execute("DELETE FROM messages WHERE queue=?", (item[1],))
            if db.in_transaction:
                db.execute("COMMIT")
            if gone:
                self._unlink_large(gone)
        except BaseException as exc:  # keep serving; report through the futures
            self.error = exc
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        if futures:
            try:  # one wake-up of the loop per group, however many barriers it answers
                self.loop.call_soon_threadsafe(_resolve, futures)
            except RuntimeError:  # the loop is gone (broker stopped): nobody is waiting
                pass

    def close(self) -> None:
        self._handoff()
        self._ops.put(None)
        self._thread.join(30)
        self._db.close()


# Many rows per statement: SQLite runs a statement without the GIL, and the writer thread then
# re-takes the GIL once per statement instead of once per row (each re-take can stall the event
# loop thread for a switch interval on a busy machine).
_CHUNK = 200
_PIECE = 1 << 20  # bytes of a large message written to its file per write
_ROW = "(?,?,?,?,?,?,?,?)"
_INSERT_ONE = "INSERT OR REPLACE INTO messages VALUES " + _ROW
_INSERT_MANY = "INSERT OR REPLACE INTO messages VALUES " + ",".join([_ROW] * _CHUNK)
_DELETE_ONE = "DELETE FROM messages WHERE queue=? AND seq=?"
_DELETE_MANY = "DELETE FROM messages WHERE (queue, seq) IN (VALUES " + ",".join(["(?,?)"] * _CHUNK) + ")"


_MARK = "UPDATE messages SET delivery_count=MAX(delivery_count, ?) WHERE queue=? AND seq=?"


def _one_statement(items: list[Op]) -> bool:
    """Whether a group is message inserts alone, few enough for one statement."""
    if len(items) != 1:
        return False
    item = items[0]
    return item[0] == "seg" and not item[2] and 0 < len(item[1]) <= _CHUNK


@functools.lru_cache(maxsize=_CHUNK)
def _insert_n(n: int) -> str:
    """An INSERT of ``n`` message rows (sqlite3 caches each as a prepared statement)."""
    return "INSERT OR REPLACE INTO messages VALUES " + ",".join([_ROW] * n)


def _write_rows(db: sqlite3.Connection, one: str, many: str, rows: list[tuple[Any, ...]]) -> None:
    full = len(rows) - len(rows) % _CHUNK
    for i in range(0, full, _CHUNK):
        db.execute(many, [v for row in rows[i : i + _CHUNK] for v in row])
    if full < len(rows):
        db.executemany(one, rows[full:])


class _Buffer:
    """Pending changes in order: segments of message inserts/deletes, and other operations."""

    __slots__ = ("adds", "items", "marks", "removes")

    def __init__(self) -> None:
        self.adds: list[tuple[Any, ...]] = []
        self.removes: list[tuple[Any, ...]] = []
        self.items: list[Op] = []
        self.marks: list[tuple[Any, ...]] = []  # (count, queue, seq) of messages being delivered

    def _close_segment(self) -> None:
        if self.adds or self.removes:
            self.items.append(("seg", self.adds, self.removes))
            self.adds, self.removes = [], []

    def op(self, op: Op) -> None:
        self._close_segment()
        self.items.append(op)

    def take(self) -> list[Op]:
        self._close_segment()
        if self.marks:
            self.items.append(("marks", self.marks))
            self.marks = []
        items, self.items = self.items, []
        return items


def _resolve(futures: list[asyncio.Future[None]]) -> None:
    for fut in futures:
        if not fut.done():
            fut.set_result(None)
