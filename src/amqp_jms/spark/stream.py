"""Streaming reads: at-least-once with no loss at any crash point.

The driver-side reader (Spark keeps it in one long-lived Python process) owns a background
receiver (:mod:`amqp_jms.spark.receiver`), started lazily on the first ``latestOffset`` (the
reader is also built in a planner process and pickled, so ``__init__`` must not connect). The
receiver keeps receiving in a transacted session while the executors work, appends each chunk to
the write-ahead log (fsynced) and *then* commits the session (accepts). Each trigger:

1. ``latestOffset(start, limit)``: segments ``<= start`` are deleted (Spark calls this right after
   the batch ending at ``start`` committed; its own ``commit`` comes late, see below). Segments on
   disk past ``start`` when the reader starts — appended before a crash, never planned — are
   offered first. Otherwise the segments the receiver made durable meanwhile, up to the limit;
   when there are none, it closes the chunk it is filling (waiting up to ``pollMs`` for a first
   message). The offset is ``{"segment": <last id>}``.
2. ``partitions(start, end)``: one task per segment id in ``(start, end]``; a missing one is an
   error, never a silent gap.
3. ``read(partition)`` (executors): decode the segment's raw messages into Arrow batches.
4. ``commit(end)``: delete segments ``<= end``.
5. ``reportLatestOffset()`` (right after ``latestOffset``, for the progress only): the newest
   durable segment with the source's figures beside it (:mod:`.progress`). On a release that
   never calls it (``features().report_latest_offset`` false), ``latestOffset`` logs them.

Measured Spark 4.3 facts this relies on: ``commit(end)`` for batch N only runs when batch N+1
is planned (never while idle, never for the last ``availableNow`` batch) and ``stop()`` is never
called — so the reader never waits on them; a failed batch is replayed with the same offsets,
which re-reads the same segments. Crash outcomes: before the append (the receiver's in-memory
chunk), messages are unaccepted and the broker redelivers them; between append and accept, they
are in a segment *and* redelivered (duplicates, de-duplicate on ``message_id``); after accept,
they are in a segment until Spark committed the batch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from .backlog import BacklogProbe
    from .progress import LogFigures
    from .receiver import SegmentReceiver
    from .wal import WriteAheadLog

__all__ = ["JmsStreamReader", "RefusedStreamReader", "SegmentPartition", "decode_segment"]


@dataclass(frozen=True)
class SegmentPartition(InputPartition):
    """One write-ahead segment: one task."""

    wal_path: str
    segment_id: int


def decode_segment(
    wal_path: str, segment_id: int, body_as: str, include_amqp: bool, typed_as: str = "json"
) -> Iterator[pa.RecordBatch]:
    """The messages of one segment as Arrow batches of the row schema (:mod:`.columns`)."""
    from .columns import segment_batches
    from .schema import arrow_schema
    from .wal import read_segment

    schema = arrow_schema(body_as, include_amqp, typed_as)
    for batch in segment_batches(read_segment(wal_path, segment_id), schema, body_as, include_amqp):
        yield batch
        crash_point("during_sink")


def _offset(start: dict[str, Any]) -> int:
    try:
        return int(start["segment"])
    except (KeyError, TypeError, ValueError):
        if isinstance(start, dict) and isinstance(start.get("segments"), list):
            raise IllegalStateException(
                f"jms data source: the checkpoint's offset {start!r} was written with numReceivers="
                f"{len(start['segments'])}, now 1: restart with the one the query was started with"
            ) from None
        raise IllegalStateException(f"jms data source: unexpected stream offset {start!r}") from None


def describe_source(options: JmsOptions) -> dict[str, Any]:
    """What the owner record of a log says about its source (no credentials: host and port only)."""
    from urllib.parse import urlsplit

    parts = urlsplit(options.url)
    out: dict[str, Any] = {
        "broker": f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname),
        "destination": str(options.destination),
    }
    if options.selector:
        out["selector"] = options.selector
    if options.subscription:
        out["subscription"] = options.subscription
    return out


class JmsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are ``{"segment": <last segment id>, "log": <the log's owner id>}``: the log id,
    made up by ``initialOffset`` of a new query and kept in Spark's checkpoint, binds the
    ``walPath`` to this query and source (:meth:`WriteAheadLog.claim`)."""

    def __init__(self, options: JmsOptions) -> None:
        self.options = options
        self._receiver: SegmentReceiver | None = None
        self._available_now = False
        self._log_id: str | None = None
        self._wal: WriteAheadLog | None = None  # the driver's log, once claimed
        self._confirmed = False
        self._end: int | None = None  # the end offset ``latestOffset`` last handed out
        self._figures: LogFigures | None = None
        self._backlog: BacklogProbe | None = None  # reportBacklog=true, once asked
        self._checked = False  # the log and the broker, once, before anything is taken

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_receiver"] = None  # threads and connections do not travel
        state["_wal"] = None
        state["_backlog"] = None
        return state

    def check_once(self) -> None:
        """The log's filesystem opens and its directory can be made, and the broker lets us in:
        ``ValueError`` naming what is wrong, at the query's first call (a new query's
        ``initialOffset``, a restarted one's ``latestOffset``), before the receiver takes a
        message. Once: later a broker outage is the receiver's to ride through."""
        if self._checked:
            return
        from .source import check_connection
        from .wal import validate_wal_path

        validate_wal_path(self.options.require_wal_path())
        check_connection(self.options)
        self._checked = True

    def initialOffset(self) -> dict[str, Any]:
        import uuid

        self.check_once()
        if self._log_id is None:
            self._log_id = uuid.uuid4().hex
        return {"segment": 0, "log": self._log_id}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_messages_per_trigger:
            return ReadMaxRows(self.options.max_messages_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Read until the destination is first found empty, then report no more data."""
        self._available_now = True

    def _at(self, segment: int) -> dict[str, Any]:
        return {"segment": segment, "log": self._log_id} if self._log_id else {"segment": segment}

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        end = self._latest(start, limit)
        from .features import features

        if not features().report_latest_offset:
            self._log_figures()
        return end

    def _log_figures(self) -> None:
        """A release that never calls ``reportLatestOffset`` (a vendor build with admission
        control but without it): the figures go to the driver's log, one INFO line a trigger."""
        from .._logs import SPARK
        from .progress import describe

        report = self.reportLatestOffset()
        if report is not None:
            SPARK.info("jms data source %s: %s", self.options.destination, describe(report))

    def _latest(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """The offset for ``latestOffset`` (the receiver started on the first call)."""
        from .receiver import SegmentReceiver
        from .wal import WriteAheadLog

        begin = _offset(start)
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        if self._receiver is None:
            self.check_once()
            wal = WriteAheadLog(self.options.require_wal_path())
            # the checkpoint's log id (or, on a new query, initialOffset's) must own the log
            self._log_id = wal.claim(
                start.get("log") or self._log_id, describe_source(self.options), fresh=begin == 0
            )
            self._wal = wal
            wal.observe(begin)
            wal.delete_through(begin)
            pending = wal.ids_between(begin, wal.last_id())
            self._receiver = SegmentReceiver(self.options, wal, self._available_now, max_rows)
            if pending:  # accepted before a crash, never planned: offered first, whatever the limit
                self._end = pending[-1]
                return self._at(pending[-1])
        receiver = self._receiver
        receiver.delete_through(begin)
        opts = self.options
        end = receiver.latest(
            begin,
            max_rows,
            opts.poll_ms / 1000.0,
            opts.min_messages_per_trigger,
            opts.max_trigger_delay_ms / 1000.0,
        )
        self._end = end
        return self._at(end)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """The newest durable segment and the source's figures, shown as the source's
        ``latestOffset`` in the query's progress (never checkpointed: see :mod:`.progress`)."""
        if self._receiver is None or self._end is None:
            return None
        figures = self._report([(self.options.require_wal_path(), self._end)])
        if figures is None:
            return None
        latest, values = figures
        return {**self._at(latest[0]), **values}

    def _report(self, logs: list[tuple[str, int]]) -> tuple[list[int], dict[str, float]] | None:
        """The figures of ``logs`` (:class:`.progress.LogFigures`), and the broker's ``backlog``
        with ``reportBacklog``; ``None`` (and a WARNING) when a log cannot be listed: progress
        never fails the query."""
        from .._logs import SPARK
        from .progress import LogFigures

        if self._figures is None:
            self._figures = LogFigures()
        try:
            latest, values = self._figures.figures(logs)
        except Exception as exc:  # a listing error of a remote store: the next trigger retries
            SPARK.warning("jms data source: no progress figures this trigger: %s", exc)
            return None
        if self.options.report_backlog:
            if self._backlog is None:
                from .backlog import BacklogProbe

                self._backlog = BacklogProbe(self.options)
            depth = self._backlog.depth()
            if depth is not None:
                values["backlog"] = depth
        return latest, values

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        wal_path = self.options.require_wal_path()
        if self._wal is not None and self._log_id and not self._confirmed:
            self._wal.confirm(self._log_id)  # Spark wrote this batch's offsets: the log is ours
            self._confirmed = True
        return self._segment_partitions(wal_path, _offset(start), _offset(end))

    def _segment_partitions(self, wal_path: str, first: int, last: int) -> list[InputPartition]:
        """One task per segment of the log at ``wal_path`` in ``(first, last]``; a missing one
        fails the query (or, with ``failOnDataLoss=false``, is skipped with a WARNING)."""
        from .._logs import SPARK
        from .wal import segment_exists

        parts: list[InputPartition] = []
        for segment_id in range(first + 1, last + 1):
            if not segment_exists(wal_path, segment_id):
                if not self.options.fail_on_data_loss:
                    SPARK.warning(
                        "jms data source: write-ahead segment %d is missing from %s; skipped "
                        "(failOnDataLoss=false): its messages are lost",
                        segment_id,
                        wal_path,
                    )
                    continue
                raise IllegalStateException(
                    f"jms data source: write-ahead segment {segment_id} is missing from {wal_path}: "
                    "the checkpoint and the walPath do not belong together, or the segment was "
                    "deleted (set failOnDataLoss=false to skip it and lose its messages)"
                )
            parts.append(SegmentPartition(wal_path, segment_id))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, SegmentPartition)
        opts = self.options
        yield from decode_segment(
            partition.wal_path,
            partition.segment_id,
            opts.body_as,
            opts.include_amqp,
            opts.typed_properties_as,
        )

    def commit(self, end: dict[str, Any]) -> None:
        from .wal import delete_segments_through

        if self._receiver is not None:
            self._receiver.delete_through(_offset(end))
        else:
            delete_segments_through(self.options.require_wal_path(), _offset(end))

    def stop(self) -> None:
        if self._backlog is not None:
            self._backlog.close()
        if self._receiver is not None:
            try:
                self._receiver.stop()
            finally:
                self._receiver = None


class RefusedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """A stream reader whose options were refused when it was planned: every call raises the
    reason (see ``JmsDataSource.streamReader``); ``stop`` does nothing."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def _refuse(self) -> Any:
        raise ValueError(self.reason)

    def initialOffset(self) -> dict[str, Any]:
        return self._refuse()

    def prepareForTriggerAvailableNow(self) -> None:
        self._refuse()

    def getDefaultReadLimit(self) -> ReadLimit:
        return self._refuse()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        return self._refuse()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        return self._refuse()

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self._refuse()

    def commit(self, end: dict[str, Any]) -> None:
        self._refuse()

    def stop(self) -> None:
        pass
