"""The durable store: SQLite in WAL mode, written by one thread with group commit.

The event loop never waits on SQLite. Every change is a small tuple put on a queue; the writer
thread takes everything queued, applies it in one transaction and commits once (group commit),
then resolves the ``barrier()`` futures that were queued with it on the loop. A message added
and removed within one group (a durable message consumed at once) never touches the table.
``begin_batch``/``end_batch`` keep a transaction's changes in one group so a commit is atomic.

Durability: ``synchronous=NORMAL`` in WAL mode survives a process crash (the broker's promise);
``synchronous=FULL`` (``fsync=True``) also survives power loss, at a cost per group.
"""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
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
"""

Op = tuple[Any, ...]


class SQLiteStore(Store):
    persistent = True

    def __init__(self, path: str | Path, loop: asyncio.AbstractEventLoop, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.loop = loop
        self._ops: queue.SimpleQueue[Op | None] = queue.SimpleQueue()
        self._batch: list[Op] | None = None
        self._pending_barrier: asyncio.Future[None] | None = None
        self._buf: list[Op] = []
        self._handoff_scheduled = False
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        db.executescript(_SCHEMA)
        self._db = db
        self._thread = threading.Thread(
            target=self._run, name=f"amqp-jms-store-{self.path.name}", daemon=True
        )
        self._thread.start()
        self.error: BaseException | None = None

    # -- submitting (event loop) ---------------------------------------------------------------
    def _put(self, op: Op) -> None:
        if self._batch is not None:
            self._batch.append(op)
            return
        # hand ops to the writer once per loop turn: a queue put per op would wake the writer
        # thread (and hand it the GIL) for every message
        self._buf.append(op)
        if not self._handoff_scheduled:
            self._handoff_scheduled = True
            self.loop.call_soon(self._handoff)

    def _handoff(self) -> None:
        self._handoff_scheduled = False
        if self._buf:
            ops, self._buf = self._buf, []
            self._ops.put(("ops", ops))

    def add(self, queue: str, msg: BrokerMessage) -> None:
        self._put(("add", queue, msg.seq, msg.data, msg.priority, int(msg.durable), msg.expiry,
                   msg.deliver_at, msg.delivery_count))

    def remove(self, queue: str, msg: BrokerMessage) -> None:
        self._put(("remove", queue, msg.seq))

    def update_count(self, queue: str, msg: BrokerMessage) -> None:
        self._put(("count", queue, msg.seq, msg.delivery_count))

    def save_queue(self, name: str, kind: str, meta: dict[str, Any] | None) -> None:
        self._put(("saveq", name, kind, json.dumps(meta) if meta is not None else None))

    def delete_queue(self, name: str) -> None:
        self._put(("delq", name))

    def barrier(self) -> asyncio.Future[None] | None:
        # one future per loop turn is enough: everything submitted before it commits with it
        fut = self._pending_barrier
        if fut is None or fut.done():
            fut = self.loop.create_future()
            self._pending_barrier = fut
            self.loop.call_soon(self._submit_barrier, fut)
        return fut

    def _submit_barrier(self, fut: asyncio.Future[None]) -> None:
        if self._pending_barrier is fut:
            self._pending_barrier = None
        self._handoff()
        self._ops.put(("barrier", fut))

    def begin_batch(self) -> None:
        self._batch = []

    def end_batch(self) -> asyncio.Future[None] | None:
        batch, self._batch = self._batch, None
        if not batch:
            return None
        fut: asyncio.Future[None] = self.loop.create_future()
        self._handoff()
        self._ops.put(("batch", batch, fut))
        return fut

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
            msgs.append((str(q), BrokerMessage(bytes(data), priority=int(prio), durable=bool(durable),
                                               expiry=float(expiry), deliver_at=float(deliver_at),
                                               delivery_count=int(count), seq=int(seq))))
            top = max(top, int(seq))
        advance_seq(top)
        return defs, msgs

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
        flat: list[Op] = []
        futures: list[asyncio.Future[None]] = []
        for op in group:
            if op[0] == "barrier":
                futures.append(op[1])
            elif op[0] == "ops":
                flat.extend(op[1])
            elif op[0] == "batch":
                flat.extend(op[1])
                futures.append(op[2])
            else:
                flat.append(op)
        # cancel adds removed within the same group
        added = {(op[1], op[2]) for op in flat if op[0] == "add"}
        gone = {(op[1], op[2]) for op in flat if op[0] == "remove"} & added
        db = self._db
        inserts: list[Op] = []
        deletes: list[Op] = []

        def flush() -> None:
            if inserts:
                db.executemany("INSERT OR REPLACE INTO messages VALUES (?,?,?,?,?,?,?,?)", inserts)
                inserts.clear()
            if deletes:
                db.executemany("DELETE FROM messages WHERE queue=? AND seq=?", deletes)
                deletes.clear()

        try:
            db.execute("BEGIN")
            for op in flat:
                kind = op[0]
                if kind == "add":
                    if (op[1], op[2]) not in gone:
                        inserts.append(op[1:])
                elif kind == "remove":
                    if (op[1], op[2]) not in gone:
                        deletes.append(op[1:])
                else:
                    flush()
                    if kind == "count":
                        db.execute("UPDATE messages SET delivery_count=? WHERE queue=? AND seq=?",
                                   (op[3], op[1], op[2]))
                    elif kind == "saveq":
                        db.execute("INSERT OR REPLACE INTO queues VALUES (?,?,?)", op[1:])
                    elif kind == "delq":
                        db.execute("DELETE FROM queues WHERE name=?", (op[1],))
                        db.execute("DELETE FROM messages WHERE queue=?", (op[1],))
            flush()
            db.execute("COMMIT")
        except BaseException as exc:  # keep serving; report through the futures
            self.error = exc
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        for fut in futures:
            try:
                self.loop.call_soon_threadsafe(_resolve, fut)
            except RuntimeError:  # the loop is gone (broker stopped): nobody is waiting
                break

    def close(self) -> None:
        if self._buf:
            ops, self._buf = self._buf, []
            self._ops.put(("ops", ops))
        self._ops.put(None)
        self._thread.join(30)
        self._db.close()


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
