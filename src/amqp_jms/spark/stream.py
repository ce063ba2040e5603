"""Streaming reads: at-least-once with no loss at any crash point.

The driver-side reader (Spark keeps it in one long-lived Python process) owns the AMQP
connection, opened lazily on the first ``latestOffset`` (the reader is also built in a planner
process and pickled, so ``__init__`` must not connect). Each trigger:

1. ``latestOffset(start, limit)``: segments ``<= start`` are deleted (Spark calls this right after
   the batch ending at ``start`` committed; its own ``commit`` comes late, see below). Segments on
   disk past ``start`` — appended before a crash, never planned — are offered first. Otherwise
   receive up to the limit in a transacted session, append each ``segmentMessages`` chunk to the
   write-ahead log (fsynced), *then* commit the session (accept). The offset is
   ``{"segment": <last id>}``.
2. ``partitions(start, end)``: one task per segment id in ``(start, end]``; a missing one is an
   error, never a silent gap.
3. ``read(partition)`` (executors): decode the segment's raw messages into Arrow batches.
4. ``commit(end)``: delete segments ``<= end``.

Measured Spark 4.3 facts this relies on: ``commit(end)`` for batch N only runs when batch N+1
is planned (never while idle, never for the last ``availableNow`` batch) and ``stop()`` is never
called — so the reader never waits on them; a failed batch is replayed with the same offsets,
which re-reads the same segments. Crash outcomes: before the append, messages are unaccepted and
the broker redelivers them; between append and accept, they are in a segment *and* redelivered
(duplicates, de-duplicate on ``message_id``); after accept, they are in a segment until Spark
committed the batch.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from ..exceptions import IllegalStateException
from ._faults import crash_point
from .options import JmsOptions

__all__ = ["JmsStreamReader", "SegmentPartition", "decode_segment"]

#: A chunk of at least this many messages is written as two segments (two parallel tasks).
_SPLIT_AT = 1000
#: availableNow: the least time the first poll of a run waits before calling the destination empty.
_FIRST_POLL_MS = 2000


@dataclass(frozen=True)
class SegmentPartition(InputPartition):
    """One write-ahead segment: one task."""

    wal_path: str
    segment_id: int


def decode_segment(
    wal_path: str, segment_id: int, body_as: str, include_amqp: bool
) -> Iterator[pa.RecordBatch]:
    """The messages of one segment as Arrow batches of the row schema."""
    from ._client import decode
    from .reader import BATCH_ROWS
    from .schema import arrow_schema, message_to_values, rows_to_batch
    from .wal import read_segment

    schema = arrow_schema(body_as, include_amqp)
    raw = read_segment(wal_path, segment_id).to_pylist()
    for start in range(0, len(raw), BATCH_ROWS):
        rows = []
        for data in raw[start : start + BATCH_ROWS]:
            values = message_to_values(decode(data), body_as)
            if include_amqp:
                values["amqp"] = data
            rows.append(values)
        yield rows_to_batch(rows, schema)
        crash_point("during_sink")


def _offset(start: dict[str, Any]) -> int:
    try:
        return int(start["segment"])
    except (KeyError, TypeError, ValueError):
        raise IllegalStateException(f"jms data source: unexpected stream offset {start!r}") from None


class _Driver:
    """Driver-side state: the WAL, the connection, the consumer. Never pickled."""

    def __init__(self, options: JmsOptions) -> None:
        from ._client import open_connection, open_consumer
        from .wal import WriteAheadLog

        self.wal = WriteAheadLog(options.require_wal_path())
        self.connection = open_connection(options)
        try:
            self.session = self.connection.create_session(True)
            self.consumer = open_consumer(self.session, options)
        except BaseException:
            self.connection.close()
            raise

    def receive_segments(
        self, options: JmsOptions, max_rows: int | None, first_wait_ms: int | None = None
    ) -> tuple[list[int], int]:
        """Receive up to ``max_rows``; append + accept per segment. Returns (ids, count)."""
        from ._client import receive_raw

        ids: list[int] = []
        total = 0
        chunk: list[bytes] = []
        wait = options.poll_ms if first_wait_ms is None else first_wait_ms
        per_segment = options.segment_messages
        while max_rows is None or total + len(chunk) < max_rows:
            received = receive_raw(self.consumer, wait)
            if received is None:
                break
            chunk.append(received[1])
            # later polls wait as long as the first: a credit refill round trip can take longer
            # than a short gap on a loaded machine, and an empty poll ends an availableNow run
            wait = options.poll_ms
            if len(chunk) >= per_segment:
                ids.extend(self._flush(chunk))
                total += len(chunk)
                chunk = []
        if chunk:
            ids.extend(self._flush(chunk))
            total += len(chunk)
        return ids, total

    def _flush(self, chunk: list[bytes]) -> list[int]:
        """Append ``chunk`` durably, then accept it. Returns the new segment ids."""
        # two segments (two tasks) for a chunk worth splitting: the executors decode in parallel
        parts = 2 if len(chunk) >= _SPLIT_AT else 1
        size = math.ceil(len(chunk) / parts)
        ids = [self.wal.append(chunk[i : i + size]) for i in range(0, len(chunk), size)]
        crash_point("after_append")
        self.session.commit()  # accept only what is durable
        crash_point("after_accept")
        return ids


class JmsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: JmsOptions) -> None:
        self.options = options
        self._driver: _Driver | None = None
        self._available_now = False
        self._drained = False
        self._polled = False

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_driver"] = None  # connections do not travel
        return state

    def _state(self) -> _Driver:
        if self._driver is None:
            self._driver = _Driver(self.options)
        return self._driver

    def initialOffset(self) -> dict[str, Any]:
        return {"segment": 0}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_messages_per_trigger:
            return ReadMaxRows(self.options.max_messages_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Read until the destination is first found empty, then report no more data."""
        self._available_now = True

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        state = self._state()
        begin = _offset(start)
        state.wal.observe(begin)
        state.wal.delete_through(begin)
        pending = state.wal.ids_between(begin, state.wal.last_id())
        if pending:
            return {"segment": pending[-1]}
        if self._drained:
            return {"segment": begin}
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        first_wait = None
        if self._available_now and not self._polled:
            # availableNow ends at the first empty poll: give a fresh consumer (attach, credit,
            # first transfer) time to see what is already there before calling it empty
            first_wait = max(self.options.poll_ms, _FIRST_POLL_MS)
        self._polled = True
        ids, count = state.receive_segments(self.options, max_rows, first_wait)
        if self._available_now and (max_rows is None or count < max_rows):
            self._drained = True
        if not ids:
            return {"segment": begin}
        return {"segment": ids[-1]}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        import os

        from .wal import segment_path

        wal_path = self.options.require_wal_path()
        parts: list[InputPartition] = []
        for segment_id in range(_offset(start) + 1, _offset(end) + 1):
            if not os.path.exists(segment_path(wal_path, segment_id)):
                raise IllegalStateException(
                    f"jms data source: write-ahead segment {segment_id} is missing from {wal_path}: "
                    "the checkpoint and the walPath do not belong together"
                )
            parts.append(SegmentPartition(wal_path, segment_id))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, SegmentPartition)
        yield from decode_segment(
            partition.wal_path, partition.segment_id, self.options.body_as, self.options.include_amqp
        )

    def commit(self, end: dict[str, Any]) -> None:
        from .wal import WriteAheadLog

        wal = self._driver.wal if self._driver is not None else WriteAheadLog(self.options.require_wal_path())
        wal.delete_through(_offset(end))

    def stop(self) -> None:
        if self._driver is not None:
            try:
                self._driver.connection.close()
            finally:
                self._driver = None
