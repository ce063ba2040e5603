"""The source's own figures in ``StreamingQueryProgress``.

Why through the latest offset: PySpark 4.3's Python stream reader has no custom-metrics hook (a
Python source's ``metrics`` map in the progress stays ``{}``), but it has ``reportLatestOffset``
(PySpark 4.2+). Spark calls it right after each ``latestOffset`` and shows the dict it returns as
the source's ``latestOffset`` in ``query.lastProgress["sources"][i]``, and uses it for nothing
else: it is never written to the checkpoint, never compared with another offset, never handed back
to the reader. So the figures ride there, beside the segment id(s) that make it an offset::

    {"segment": 12, "log": "…",              # the newest durable segment (numReceivers=1), or
                                              # "segments": [12, 9] (one per receiver)
     "buffered": 3000,                        # messages durable in the log, not yet in a batch
     "bufferedSegments": 1,
     "received": 30000,                       # messages received and made durable in the log since
                                              # the query (re)started (a restart counts what it finds)
     "walBytes": 4210688}                     # bytes of segment data in the log (planned ones included)

(A message is "received" once it is in the log: before that it is not accepted, and a crash has
the broker deliver it again.) With ``reportBacklog=true`` the reader adds ``"backlog"``, the
broker's queue depth (:mod:`.backlog`).

``endOffset`` (what the batch read) keeps the offset form alone: the figures never enter the
offsets Spark checkpoints and replays, so restarting from a checkpoint is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["LogFigures"]


class LogFigures:
    """Figures over one or more logs, counting each segment's messages once (segments never
    change once published, and a segment is deleted only after a batch that planned it, so each
    one is seen by some listing between its publication and its deletion)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, int], int] = {}
        self.received = 0

    def figures(self, logs: Sequence[tuple[str, int]]) -> tuple[list[int], dict[str, int]]:
        """For ``(wal_path, end of the batch just planned)`` pairs: each log's newest durable
        segment id, and the summed figures."""
        from .wal import log_status, segment_message_count

        latest: list[int] = []
        buffered = buffered_segments = wal_bytes = 0
        for wal_path, end in logs:
            status = log_status(wal_path)
            wal_bytes += status.data_bytes
            latest.append(max(status.ids[-1], end) if status.ids else end)
            present = set(status.ids)
            for key in [k for k in self._counts if k[0] == wal_path and k[1] not in present]:
                del self._counts[key]  # deleted after its batch committed
            for segment_id in status.ids:
                key = (wal_path, segment_id)
                count = self._counts.get(key)
                if count is None:
                    count = segment_message_count(wal_path, segment_id)
                    if count is None:
                        continue  # deleted since the listing
                    self._counts[key] = count
                    self.received += count
                if segment_id > end:
                    buffered += count
                    buffered_segments += 1
        return latest, {
            "buffered": buffered,
            "bufferedSegments": buffered_segments,
            "received": self.received,
            "walBytes": wal_bytes,
        }
