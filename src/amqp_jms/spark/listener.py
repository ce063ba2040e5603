"""A ``StreamingQueryListener`` that shows the jms source's figures for every trigger.

Why a listener: a Python source cannot fill ``sources[i].metrics`` (Kafka's place for
``avgOffsetsBehindLatest`` …; PySpark has no metrics hook for it) and the Spark UI's Structured
Streaming tab only charts Spark's own rates; the figures ride in the progress's ``latestOffset``
(:mod:`.progress`). Attached once per session, the listener reads them from every query's
progress, logs one INFO line per jms source and trigger on the ``amqp_jms.spark`` logger, and
keeps the last figures per query for code that polls (``listener.metrics(query.id)``). It runs
where Spark delivers listener events: the driver's Python process in a classic session, the
client in Spark Connect; it needs nothing newer than PySpark 4.0.
"""

from __future__ import annotations

import threading
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener

from .progress import describe, source_metrics

__all__ = ["JmsProgressListener"]


class JmsProgressListener(StreamingQueryListener):
    """``spark.streams.addListener(JmsProgressListener())``: one INFO line per trigger and jms
    source (``query <name> batch <n> source <i>: received=… buffered=… walBytes=…
    maxOffsetsBehindLatest=…``), and :meth:`metrics` for the last ones of a query."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, list[dict[str, str]]] = {}

    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        from .._logs import SPARK

        progress = event.progress
        per_source = [source_metrics(progress, i) for i in range(len(progress.sources or []))]
        if not any(per_source):
            return  # no jms source in this query (or no figures yet)
        name = progress.name or progress.id
        for i, values in enumerate(per_source):
            if values:
                SPARK.info("query %s batch %s source %d: %s", name, progress.batchId, i, describe(values))
        with self._lock:
            self._last[str(progress.id)] = per_source

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass

    def metrics(self, query_id: Any, source: int = 0) -> dict[str, str]:
        """The last figures seen for ``query_id``'s source ``source`` (Kafka's ``metrics`` form,
        :func:`.progress.source_metrics`), ``{}`` before its first progress with them."""
        with self._lock:
            sources = self._last.get(str(query_id), [])
        return dict(sources[source]) if 0 <= source < len(sources) else {}
