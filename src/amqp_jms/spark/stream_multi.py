"""Streaming reads with ``numReceivers`` > 1: several receivers, one log each, one offset each.

Each receiver is a :class:`~amqp_jms.spark.receiver_process.ReceiverProcess` with its own log
``<walPath>/receiver-<i>``; the query's owner record stays at ``walPath`` itself (the first
receiver-less claim, as for one receiver). The offset is
``{"segments": [<last segment of receiver 0>, …], "log": <owner id>}``: ``latestOffset`` asks every
receiver at once (they wait for their triggers in parallel) and ``partitions`` hands out one task
per new segment of each. The guarantees hold per receiver (its segments in its order, accepted
only once durable); across receivers there is no order, as with any competing consumers.
A query restarted from its checkpoint must keep its ``numReceivers`` (the offset says how many).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows

from ..exceptions import IllegalStateException
from .receiver_process import ReceiverProcess, receiver_log_path
from .stream import JmsStreamReader, describe_source

__all__ = ["MultiReceiverStreamReader"]


def _share(total: int | None, k: int, i: int) -> int | None:
    """Receiver ``i``'s part of a per-trigger count (at least 1 each)."""
    if total is None:
        return None
    return max(1, total // k + (1 if i < total % k else 0))


class MultiReceiverStreamReader(JmsStreamReader):
    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self._receivers: list[ReceiverProcess] | None = None
        self._ends_planned: list[int] | None = None  # the ends ``latestOffset`` last handed out

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_receivers"] = None  # processes do not travel
        return state

    @property
    def count(self) -> int:
        return int(self.options.num_receivers)

    def initialOffset(self) -> dict[str, Any]:
        offset = super().initialOffset()  # (checks the log and the broker once)
        return {"segments": [0] * self.count, "log": offset["log"]}

    def _ends(self, offset: dict[str, Any]) -> list[int]:
        ends = offset.get("segments")
        if not isinstance(ends, list) or not all(isinstance(e, int) for e in ends):
            raise IllegalStateException(
                f"jms data source: the checkpoint's offset {offset!r} was written with another "
                f"numReceivers (now {self.count}): restart with the one the query was started with"
            )
        if len(ends) != self.count:
            raise IllegalStateException(
                f"jms data source: the checkpoint's offset has {len(ends)} receivers, numReceivers "
                f"is now {self.count}: restart with the one the query was started with"
            )
        return ends

    def _start(self, start: dict[str, Any], max_rows: int | None) -> dict[str, Any] | None:
        """Claim the log, start the receivers; the offset to offer first when the logs hold
        segments accepted before a crash and never planned (else None)."""
        from .wal import WriteAheadLog

        opts = self.options
        wal_path = opts.require_wal_path()
        begins = self._ends(start)
        root = WriteAheadLog(wal_path)
        self._log_id = root.claim(
            start.get("log") or self._log_id, describe_source(opts), fresh=not any(begins)
        )
        self._wal = root
        pending = []
        for i, begin in enumerate(begins):
            wal = WriteAheadLog(receiver_log_path(wal_path, i))
            wal.observe(begin)
            wal.delete_through(begin)
            ids = wal.ids_between(begin, wal.last_id())
            pending.append(ids[-1] if ids else begin)
        receivers: list[ReceiverProcess] = []
        try:
            for i in range(self.count):
                receivers.append(
                    ReceiverProcess(
                        opts,
                        receiver_log_path(wal_path, i),
                        self._available_now,
                        _share(max_rows, self.count, i),
                    )
                )
            for receiver in receivers:
                receiver.result()  # started (each connects on its own thread from here)
        except BaseException:
            for receiver in receivers:
                receiver.stop()
            raise
        self._receivers = receivers
        return self._at_all(pending) if pending != begins else None

    def _at_all(self, ends: list[int]) -> dict[str, Any]:
        return {"segments": list(ends), "log": self._log_id}

    def _latest(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begins = self._ends(start)
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        if self._receivers is None:
            self.check_once()
            pending = self._start(start, max_rows)
            if pending is not None:
                self._ends_planned = self._ends(pending)
                return pending
        receivers = self._receivers
        assert receivers is not None
        opts = self.options
        for i, (receiver, begin) in enumerate(zip(receivers, begins, strict=True)):
            receiver.request("delete_through", begin)
            receiver.result()
            receiver.request(
                "latest",
                begin,
                _share(max_rows, self.count, i),
                opts.poll_ms / 1000.0,
                _share(opts.min_messages_per_trigger, self.count, i),
                opts.max_trigger_delay_ms / 1000.0,
            )
        ends = [receiver.result() for receiver in receivers]  # asked all first: they wait together
        self._ends_planned = ends
        return self._at_all(ends)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """Each receiver's newest durable segment and the figures summed over their logs."""
        ends = self._ends_planned
        if self._receivers is None or ends is None:
            return None
        wal_path = self.options.require_wal_path()
        logs = [(receiver_log_path(wal_path, i), end) for i, end in enumerate(ends)]
        figures = self._report(logs)
        if figures is None:
            return None
        latest, values = figures
        return {**self._at_all(latest), **values}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        wal_path = self.options.require_wal_path()
        if self._wal is not None and self._log_id and not self._confirmed:
            self._wal.confirm(self._log_id)
            self._confirmed = True
        parts: list[InputPartition] = []
        for i, (first, last) in enumerate(zip(self._ends(start), self._ends(end), strict=True)):
            sub = receiver_log_path(wal_path, i)
            parts.extend(self._segment_partitions(sub, first, last))
        return parts

    def commit(self, end: dict[str, Any]) -> None:
        from .wal import delete_segments_through

        wal_path = self.options.require_wal_path()
        for i, last in enumerate(self._ends(end)):
            if self._receivers is not None:
                self._receivers[i].call("delete_through", last)
            else:
                delete_segments_through(receiver_log_path(wal_path, i), last)

    def stop(self) -> None:
        if self._backlog is not None:
            self._backlog.close()
        receivers, self._receivers = self._receivers, None
        for receiver in receivers or []:
            receiver.stop()
