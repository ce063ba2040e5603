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
     "walBytes": 4210688,                     # bytes of segment data in the log (planned ones included)
     "minOffsetsBehindLatest": 3000,          # Kafka's names, per receiver's log: messages durable
     "maxOffsetsBehindLatest": 3000,          # in it past the batch just planned (one receiver:
     "avgOffsetsBehindLatest": 3000.0}        # all three are "buffered")

(A message is "received" once it is in the log: before that it is not accepted, and a crash has
the broker deliver it again.) With ``reportBacklog=true`` the reader adds ``"backlog"``, the
broker's queue depth (:mod:`.backlog`).

Kafka's source reports how far the query is behind each partition's newest record as
``{min,max,avg}OffsetsBehindLatest`` in ``sources[i].metrics``; here a receiver's log is the
partition (its segments are the offsets), so the same names count, over the receivers, the
messages each log holds past the batch just planned. What still waits at the broker has no offset
yet: that is ``backlog``.

``endOffset`` (what the batch read) keeps the offset form alone: the figures never enter the
offsets Spark checkpoints and replays, so restarting from a checkpoint is unchanged.

Reading them back: :func:`source_metrics` turns a progress (classic or Spark Connect, object or
JSON) into Kafka's ``metrics`` form; :class:`amqp_jms.spark.listener.JmsProgressListener` logs
them for every progress of every query.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["FIGURES", "LogFigures", "source_metrics"]

#: The figure keys the source puts beside its offset, in the order a log line shows them.
FIGURES = (
    "received",
    "buffered",
    "bufferedSegments",
    "walBytes",
    "backlog",
    "minOffsetsBehindLatest",
    "maxOffsetsBehindLatest",
    "avgOffsetsBehindLatest",
)


class LogFigures:
    """Figures over one or more logs, counting each segment's messages once (segments never
    change once published, and a segment is deleted only after a batch that planned it, so each
    one is seen by some listing between its publication and its deletion)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, int], int] = {}
        self.received = 0

    def figures(self, logs: Sequence[tuple[str, int]]) -> tuple[list[int], dict[str, float]]:
        """For ``(wal_path, end of the batch just planned)`` pairs: each log's newest durable
        segment id, and the summed figures."""
        from .wal import log_status, segment_message_count

        latest: list[int] = []
        behind: list[int] = []  # per log: messages past the batch just planned
        buffered_segments = wal_bytes = 0
        for wal_path, end in logs:
            buffered = 0
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
            behind.append(buffered)
        return latest, {
            "buffered": sum(behind),
            "bufferedSegments": buffered_segments,
            "received": self.received,
            "walBytes": wal_bytes,
            "minOffsetsBehindLatest": min(behind, default=0),
            "maxOffsetsBehindLatest": max(behind, default=0),
            "avgOffsetsBehindLatest": round(sum(behind) / len(behind), 1) if behind else 0.0,
        }


def _field(obj: Any, name: str) -> Any:
    """``obj[name]`` or ``obj.name``: a progress is a dict (JSON), or an object whose fields are
    attributes (classic ``StreamingQueryProgress``, Spark Connect's)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def source_metrics(progress: Any, source: int = 0) -> dict[str, str]:
    """The jms source's figures in one query progress, in the form of Kafka's
    ``sources[i].metrics`` (a map of strings): ``{"avgOffsetsBehindLatest": "3000.0",
    "maxOffsetsBehindLatest": "3000", …, "received": "30000", "walBytes": "4210688"}``.

    ``progress`` is ``query.lastProgress`` (or an item of ``recentProgress``, or a listener
    event's ``progress``), as an object, a dict or its JSON text; ``source`` the index in its
    ``sources``. ``{}`` when that source carries no figures: another format, a trigger before the
    receiver started, or a Spark release that does not show ``reportLatestOffset`` (the figures
    are then in the driver's log: docs/spark.md, Progress metrics)."""
    if isinstance(progress, str):
        progress = json.loads(progress)
    sources = _field(progress, "sources") or []
    if not 0 <= source < len(sources):
        return {}
    latest = _field(sources[source], "latestOffset")
    if isinstance(latest, str):
        try:
            latest = json.loads(latest)
        except ValueError:
            return {}
    if not isinstance(latest, dict) or "received" not in latest:
        return {}
    return {key: str(latest[key]) for key in FIGURES if key in latest}


def describe(values: dict[str, Any]) -> str:
    """``received=30000 buffered=3000 …``: the figures as one log line shows them."""
    return " ".join(f"{key}={values[key]}" for key in FIGURES if key in values)
