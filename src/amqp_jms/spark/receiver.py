"""The streaming reader's background receiver: receive and append while the executors work.

Why: Spark plans micro-batch N+1 only after batch N has finished, so a source that receives
inside ``latestOffset`` makes the broker wait while the executors decode and write, and the
executors wait while the driver receives (measured: the two halves of an ingest took the same
time, one after the other). This thread keeps receiving in the driver's Python process while a
batch runs; ``latestOffset`` only hands out the segments it has made durable meanwhile.

The guarantees of the write-ahead design hold because every message goes receive → durable
segment (fsync) → accept, in that order, on the one thread that receives:

- a message in the current, in-memory chunk is not accepted: a crash makes the broker
  redeliver it;
- a segment on disk whose accept did not happen is replayed *and* redelivered (duplicates with
  the same ``message_id``);
- an accepted message is in a segment until Spark has committed the batch that read it.

How it accepts: a CLIENT_ACKNOWLEDGE session, ``session.acknowledge()`` once a chunk is durable
(every message the session delivered is in that chunk: this thread is its only receiver). The
accepts leave as plain settled dispositions, which proton-c merges into ranges (a segment of
10^4 is a few frames), handed to the I/O thread in one call, with no round trip to wait for. A
transacted session, as before, sent one transactional disposition per message as ``receive``
returned it (never merged) and then waited for the discharge while the broker applied each
accept: a third to a half of the receiver's time under load (docs/benchmarks.md). At least once
is unchanged: an accept is sent only after the fsync, and a lost one (the connection dropped
before it reached the broker) is a redelivery with the same ``message_id``.

Bounded: at most ``maxBufferedMessages`` received messages wait un-planned (in the chunk or in
segments ``latestOffset`` has not handed out); then the thread stops receiving, the client stops
granting credit once its prefetch is full, and the broker keeps the rest. With a
``ReadMaxRows`` limit, segments are cut so that a batch of exactly the limit can be planned.

Stopping: Spark never calls ``stop()`` on a stream reader, so the thread is a daemon (it never
keeps the driver alive); what it holds un-accepted when the process ends is redelivered.
With ``Trigger.AvailableNow`` it decides "the destination is empty" with an AMQP drain (the
broker answers with everything it has, then "nothing more"), not with a guessed wait, and then
closes its connection.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .._logs import SPARK
from ..exceptions import IllegalStateException
from ._faults import crash_point
from .options import JmsOptions
from .seen import SEEN_WINDOW, SeenIds
from .wal import WriteAheadLog

__all__ = ["DEFAULT_MAX_BUFFERED", "QUIET_MS", "ReceiverStats", "SegmentReceiver"]

_log = SPARK

#: A chunk a trigger cut short (not a full ``segmentMessages``) of at least this many messages is
#: written as two segments (two parallel tasks); a full chunk is one segment of exactly
#: ``segmentMessages``.
SPLIT_AT = 1000
#: Un-planned messages the receiver may hold (on disk, and at most one segment in memory) by
#: default: enough to receive through a batch's Python worker start-up (~20 s) without pausing.
DEFAULT_MAX_BUFFERED = 100_000
#: availableNow with a peer that cannot drain (RabbitMQ < 3.12): how long the destination must
#: stay quiet (at least; ``pollMs`` if longer) before it counts as empty.
QUIET_MS = 2000
#: How often an idle receiver looks at requests and the stop flag.
_TICK_MS = 50
#: availableNow: how long the destination must stay quiet, once messages have been flowing,
#: before the receiver asks for a drain. A drain is a round trip that stops the flow (credit 0
#: until refilled); a broker busy with its store (or sharing the cores with Spark's executors)
#: pauses for more than one tick mid-stream (one run made 102 drains on 10^5 messages). Before
#: the first message a tick is enough (an empty destination is found at once).
_FLOWING_QUIET_MS = 500
#: Reconnect back-off after a lost connection: first wait, doubling up to the last.
_BACKOFF_FIRST_S = 0.2
_BACKOFF_MAX_S = 5.0


def _report(line: str) -> None:
    """Append a timing line to ``$AMQP_JMS_SPARK_STATS`` when set (the benchmark reads it: the
    receiver runs in Spark's source process, whose logging goes nowhere visible)."""
    path = os.environ.get("AMQP_JMS_SPARK_STATS")
    if path:
        with open(path, "a") as handle:
            handle.write(f"{time.time():.3f} {line}\n")


@dataclass
class ReceiverStats:
    """Where the receiver's time went (seconds), for the benchmark and for tuning."""

    messages: int = 0
    segments: int = 0
    receive_s: float = 0.0  # in the client's receive (waiting for and decoding messages)
    append_s: float = 0.0  # writing and fsyncing segments
    accept_s: float = 0.0  # acknowledging a durable chunk (handing its accepts to the I/O thread)
    paused_s: float = 0.0  # stopped by backpressure (maxBufferedMessages)
    drains: int = 0
    reconnects: int = 0
    duplicates: int = 0  # redeliveries of what the log holds: accepted, not appended (:mod:`.seen`)
    started: float = field(default_factory=time.monotonic)
    accepted_at: float = 0.0  # seconds from ``started`` to the end of the last accept
    cpu_s: float = 0.0  # the receiving thread's CPU time since attached (not the I/O thread's)

    def summary(self) -> str:
        return (
            f"{self.messages} messages in {self.segments} segments; receive {self.receive_s:.2f} s, "
            f"append {self.append_s:.2f} s, accept {self.accept_s:.2f} s, paused {self.paused_s:.2f} s, "
            f"{self.drains} drains, {self.reconnects} reconnects, "
            f"{self.duplicates} redeliveries dropped, thread cpu {self.cpu_s:.2f} s, "
            f"last accept {self.accepted_at:.2f} s, {time.monotonic() - self.started:.2f} s since start"
        )


class SegmentReceiver:
    """Owns the connection and a daemon thread that fills write-ahead segments.

    ``latest(begin, max_rows, wait_s)`` is the only call the reader makes per trigger; every
    other method is for that call or for tests.
    """

    def __init__(
        self, options: JmsOptions, wal: WriteAheadLog, available_now: bool, rows_per_batch: int | None
    ) -> None:
        self.options = options
        self.wal = wal
        self.available_now = available_now
        self.rows_per_batch = rows_per_batch
        self.max_buffered = options.max_buffered_messages or max(
            DEFAULT_MAX_BUFFERED, 2 * (rows_per_batch or 0)
        )
        self.stats = ReceiverStats()
        self._wal_lock = threading.Lock()
        self._cond = threading.Condition()
        self._counts: dict[int, int] = {}  # segments written by this receiver: id -> messages
        self._planned = 0  # the largest end offset handed out
        self._chunk_len = 0
        self._requested = 0  # flush-request generations: latest asks, the thread serves
        self._served = 0
        self._drained = False
        self._error: BaseException | None = None
        self._stopping = False
        self._batch_at = time.monotonic()  # when the last non-empty batch was handed out
        self._handed_out = False
        self._attached = False  # the consumer exists: ``latest`` times its wait from here
        self._failover = False  # a failover url: the provider reconnects (``failover.py``)
        self._seen: SeenIds | None = None  # what the log took, read from it by the thread
        self._cpu_started = 0.0  # the receiving thread's ``thread_time`` when first attached
        self._thread = threading.Thread(target=self._run, name="amqp-jms-spark-receiver", daemon=True)
        self._thread.start()

    # -- the reader's side ------------------------------------------------------------------------
    def latest(
        self,
        begin: int,
        max_rows: int | None,
        wait_s: float,
        min_rows: int | None = None,
        max_delay_s: float = 0.0,
    ) -> int:
        """The end offset of the next batch after ``begin``: ``begin`` when there is nothing.

        Hands out segments already durable and accepted; when there are none, asks the thread to
        close its current chunk (or the next messages to arrive) and waits up to ``wait_s``
        (availableNow: until the thread has flushed or found the destination empty). With
        ``min_rows`` (``minOffsetsPerTrigger``) fewer messages make no batch until ``max_delay_s``
        (``maxTriggerDelay``) has passed since the last batch (availableNow ignores it).
        """
        with self._cond:
            self._raise_failure()
            for segment_id in [i for i in self._counts if i <= begin]:
                del self._counts[segment_id]
            self._planned = max(self._planned, begin)
            while not self._attached and self._error is None and self._thread.is_alive():
                self._cond.wait(1.0)  # connecting is not part of the poll
            if self.available_now and not self._handed_out:
                # the first availableNow batch: what is buffered up to the trigger limit (or one
                # segment), not the few messages that arrived first; the rest overlaps its run
                want = min(max_rows or self.options.segment_messages, self.options.segment_messages)
                while self._unplanned() < want and not self._drained and self._error is None:
                    if not self._thread.is_alive():
                        break
                    self._cond.wait(0.05)
            if not self._ready(begin):
                self._requested += 1
                generation = self._requested
                deadline = None if self.available_now else time.monotonic() + wait_s
                while self._served < generation and not self._drained and self._error is None:
                    if not self._thread.is_alive():
                        raise IllegalStateException("jms data source: the background receiver stopped")
                    left = 1.0 if deadline is None else deadline - time.monotonic()
                    if left <= 0:
                        if not self._chunk_len:
                            break  # nothing arrived in time
                        left = 1.0  # something did: wait for its segment to be durable
                    self._cond.wait(min(left, 1.0))
                self._raise_failure()
            ready = self._ready(begin)
            end = begin
            taken = 0
            for segment_id in ready:
                count = self._counts[segment_id]
                if max_rows is not None and taken and taken + count > max_rows:
                    break
                end = segment_id
                taken += count
            now = time.monotonic()
            if (
                min_rows
                and not self.available_now
                and taken < min_rows
                and now - self._batch_at < max_delay_s
            ):
                end, taken = begin, 0  # too few yet: wait for more, or for the delay
            if taken:
                self._batch_at = now
                self._handed_out = True
            self._planned = max(self._planned, end)
            self._cond.notify_all()  # un-planned data went down: a paused thread may go on
        _report(f"latest({begin}) -> {end}: {taken} messages; {self.stats.summary()}")
        return end

    def wait_drained(self, timeout_s: float) -> bool:
        """Whether an availableNow receiver has found the destination empty (and so reads nothing
        more), waiting up to ``timeout_s`` for it."""
        with self._cond:
            self._cond.wait_for(lambda: self._drained or self._error is not None, timeout_s)
            return self._drained

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop receiving and close the connection (un-accepted messages go back to the broker)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout_s)

    # -- internals ---------------------------------------------------------------------------------
    def _ready(self, begin: int) -> list[int]:
        return sorted(i for i in self._counts if i > begin)

    def _raise_failure(self) -> None:
        if self._error is not None:
            raise IllegalStateException(
                f"jms data source: the background receiver failed: {self._error}"
            ) from self._error

    def _unplanned(self) -> int:
        return sum(n for i, n in self._counts.items() if i > self._planned) + self._chunk_len

    def _cut_at(self) -> int:
        """Close the chunk at this size: a segment, or where a full ``ReadMaxRows`` batch ends."""
        size = self.options.segment_messages
        if self.rows_per_batch:
            unplanned = sum(n for i, n in self._counts.items() if i > self._planned)
            size = min(size, self.rows_per_batch - unplanned % self.rows_per_batch)
        return size

    def _run(self) -> None:
        """Receive until stopped (or, availableNow, drained); ride through a lost connection.

        A broker restart or a dropped connection costs nothing but time: what the thread held
        un-accepted (its chunk, the client's prefetch) is redelivered by the broker, a segment
        already durable stays in the log (its accept may be lost: those messages come again,
        duplicates with the same ``message_id``), and the thread reconnects with back-off for up
        to ``reconnectTimeoutMs`` before it gives up and fails the query.
        """
        from ._client import is_connection_loss, open_ack_session, open_connection, open_consumer
        from .failover import LossLog, is_failover_url

        backoff = _BACKOFF_FIRST_S
        lost_since: float | None = None
        try:
            with self._wal_lock:
                seen = SeenIds(SEEN_WINDOW, self.wal.recent_ids(SEEN_WINDOW))
            self._seen = seen
            while True:
                connection = None
                try:
                    connection = open_connection(self.options)
                    if is_failover_url(self.options.url):
                        self._failover = True
                        connection.add_connection_listener(LossLog(self.stats))
                    session = open_ack_session(connection)
                    consumer = open_consumer(session, self.options)
                    if lost_since is not None:
                        _log.warning(
                            "jms receiver: reconnected to %s after %.1f s",
                            self.options.destination,
                            time.monotonic() - lost_since,
                        )
                        _report(f"reconnected after {time.monotonic() - lost_since:.2f} s")
                    lost_since, backoff = None, _BACKOFF_FIRST_S
                    if not self._attached:  # CPU per message from here: connecting is not receiving
                        self._cpu_started = time.thread_time()
                    with self._cond:
                        self._attached = True
                        self._cond.notify_all()
                    self._loop(connection, session, consumer)
                    return
                except BaseException as exc:
                    # never connected: the broker the query was planned against is gone, or
                    # the options are wrong; fail the trigger clearly rather than wait
                    if self._stopping or not self._attached or not is_connection_loss(exc):
                        raise
                    if self._failover:  # failover gave up (failover.maxReconnectAttempts)
                        raise
                    now = time.monotonic()
                    if lost_since is None:
                        lost_since = now
                        self.stats.reconnects += 1
                        _log.warning(
                            "jms receiver: connection to the broker lost (%s); un-accepted messages "
                            "will be redelivered; reconnecting",
                            exc,
                        )
                    if now - lost_since > self.options.reconnect_timeout_ms / 1000.0:
                        raise
                    with self._cond:
                        self._chunk_len = 0  # the chunk was dropped: the broker redelivers it
                        self._cond.wait(backoff)  # ``stop`` wakes it
                        if self._stopping:
                            return
                    backoff = min(backoff * 2, _BACKOFF_MAX_S)
                finally:
                    if connection is not None:
                        try:
                            connection.close()  # un-accepted messages (prefetch, chunk) are released
                        except Exception:  # a connection already lost: nothing to release
                            pass
        except BaseException as exc:  # reported to the reader by the next latestOffset
            with self._cond:
                if not self._stopping:
                    self._error = exc
                self._cond.notify_all()
        finally:
            self.stats.cpu_s = time.thread_time() - self._cpu_started
            _log.info("jms receiver: %s", self.stats.summary())
            _report(f"receiver ended: {self.stats.summary()}")

    def _loop(self, connection: Any, session: Any, consumer: Any) -> None:
        from ._client import connection_epoch, drain, receive_raw

        stats = self.stats
        seen = self._seen
        assert seen is not None
        chunk: list[bytes] = []
        chunk_ids: list[str] = []  # the message ids of ``chunk`` ('' for a message without one)
        in_chunk: set[str] = set()
        unacked_dropped = False  # redeliveries dropped while the chunk was not empty
        last_got: float | None = None  # when the last message arrived (availableNow's quiet spell)
        while True:
            with self._cond:
                if self._stopping:
                    return
                self._chunk_len = len(chunk)
                flush_wanted = self._requested > self._served
                if not flush_wanted and self._unplanned() >= self.max_buffered:
                    began = time.monotonic()
                    self._cond.wait(_TICK_MS / 1000.0)  # backpressure: no receive, no new credit
                    stats.paused_s += time.monotonic() - began
                    continue
                cut_at = self._cut_at()
            began = time.monotonic()
            if flush_wanted and chunk:  # a trigger waits: flush as soon as nothing more is here
                got = receive_raw(consumer, 0)
                stats.receive_s += time.monotonic() - began
                if got is None:
                    self._flush(session, chunk, chunk_ids, full=False)
                    chunk, chunk_ids, in_chunk, unacked_dropped = [], [], set(), False
                    continue
            else:
                # availableNow too waits before it drains: a drain is a round trip that stops
                # the flow (credit 0 until refilled), so only for a queue that went quiet (a
                # tick before the first message, ``_FLOWING_QUIET_MS`` once they flow)
                got = receive_raw(consumer, _TICK_MS)
                if got is None and self.available_now and last_got is not None:
                    if time.monotonic() - last_got < _FLOWING_QUIET_MS / 1000.0:
                        stats.receive_s += time.monotonic() - began
                        continue  # a pause mid-stream, not yet an empty destination
                if got is None and self.available_now:
                    # a failover between servers is not the end of the data: offline, the client
                    # answers a drain at once with nothing. Wait for the reconnect (as long as the
                    # failover.* options let it try; when it gives up, the receive raises and the
                    # query fails), then ask the server the connection is on.
                    epoch = connection_epoch(connection)
                    if epoch is None:
                        stats.receive_s += time.monotonic() - began
                        continue
                    stats.drains += 1
                    if drain(consumer):  # the broker sends what it has, then says so
                        got = receive_raw(consumer, 0)
                    else:  # a peer that cannot drain: only a quiet spell says "empty"
                        got = receive_raw(consumer, max(self.options.poll_ms, QUIET_MS))
                    if got is None and connection_epoch(connection) != epoch:
                        stats.receive_s += time.monotonic() - began
                        continue  # lost during the drain: its answer says nothing
                stats.receive_s += time.monotonic() - began
                if got is None:
                    if not self.available_now:
                        continue
                    if chunk:
                        self._flush(session, chunk, chunk_ids, full=False)
                        chunk, chunk_ids = [], []
                    elif unacked_dropped:
                        session.acknowledge()
                    with self._cond:
                        self._drained = True
                        self._cond.notify_all()
                    return
            last_got = time.monotonic()
            message, data = got
            message_id = message.get_jms_message_id() or ""
            if message_id and message.get_jms_redelivered() and (
                message_id in seen or message_id in in_chunk
            ):
                # the log holds it (a lost or voided accept, a broker that crashed before
                # storing the accept): accept it again, never append it twice. With a chunk
                # pending, its accept waits for the chunk's (they share the session's acknowledge)
                stats.duplicates += 1
                if chunk:
                    unacked_dropped = True
                else:
                    session.acknowledge()
                continue
            chunk.append(data)
            chunk_ids.append(message_id)
            in_chunk.add(message_id)
            self._chunk_len = len(chunk)  # read by ``latest`` (an int store: no lock needed)
            crash_point("mid_segment")
            if len(chunk) >= cut_at:
                self._flush(session, chunk, chunk_ids, full=len(chunk) >= self.options.segment_messages)
                chunk, chunk_ids, in_chunk, unacked_dropped = [], [], set(), False

    def _flush(self, session: Any, chunk: list[bytes], chunk_ids: list[str], full: bool) -> None:
        """Append ``chunk`` durably, record its ids, then accept it; then let ``latest`` hand it
        out. A full chunk is one segment; one a trigger cut short, of ``SPLIT_AT`` or more, is
        two (two tasks: the executors decode in parallel)."""
        stats = self.stats
        parts = 2 if not full and len(chunk) >= SPLIT_AT else 1
        size = math.ceil(len(chunk) / parts)
        began = time.monotonic()
        written: list[tuple[int, int]] = []
        with self._wal_lock:
            for i in range(0, len(chunk), size):
                part = chunk[i : i + size]
                written.append((self.wal.append(part), len(part)))
        stats.append_s += time.monotonic() - began
        stats.messages += len(chunk)
        stats.segments += len(written)
        with self._cond:  # durable: offered whatever happens to the accept
            self._counts.update(written)
            self._chunk_len = 0
        crash_point("after_append")
        if self._seen is not None:
            self._seen.add_all(message_id for message_id in chunk_ids if message_id)
        with self._wal_lock:  # after the segment is durable: an id recorded is a message logged
            first = 0
            for segment_id, count in written:
                self.wal.write_ids(segment_id, [m for m in chunk_ids[first : first + count] if m])
                first += count
        began = time.monotonic()
        # accept only what is durable: everything this session delivered is in ``chunk`` (a lost
        # accept, or one a failover voided because the message came on a connection since
        # lost: redelivered, dropped by the ``seen`` look-up) or a redelivery of what the log holds
        session.acknowledge()
        ended = time.monotonic()
        stats.accept_s += ended - began
        stats.accepted_at = ended - stats.started
        stats.cpu_s = time.thread_time() - self._cpu_started
        crash_point("after_accept")
        with self._cond:
            self._served = self._requested
            self._cond.notify_all()

    def delete_through(self, end: int) -> None:
        """Delete committed segments ``<= end`` (under the lock the appends take), and the ids
        of those older than the redelivery window (:mod:`.seen`)."""
        with self._wal_lock:
            self.wal.observe(end)
            self.wal.delete_through(end)
            self.wal.prune_ids(end, SEEN_WINDOW)
