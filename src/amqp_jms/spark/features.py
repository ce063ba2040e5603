"""What the installed PySpark offers the connector, detected once, so that every Spark 4 release
loads it and each feature a release lacks falls back or is refused by name, never by a crash.

Why detection, not version numbers: vendors' runtimes (Databricks, EMR, Dataproc) ship patched
pyspark builds whose version string says little about what was backported; the presence of the
module or attribute is what the code needs. The Python Data Source API itself (batch and
streaming ``DataSource``, ``DataSourceReader``/``Writer``/``StreamReader``/``StreamWriter``) is in
every 4.x release; these came later:

========================  =======  =====================================================
feature                   since    without it
========================  =======  =====================================================
``filter_pushdown``       4.1      batch reads: Spark evaluates every filter (no ``pushFilters``)
``admission_control``     4.2      streaming reads refused at planning: the stream reader needs
                                   ``latestOffset(start, limit)``, ``ReadLimit`` and
                                   ``SupportsTriggerAvailableNow``
                                   (``pyspark.sql.streaming.datasource``), see below
``report_latest_offset``  4.2      (a build with admission control but not this) the source's
                                   figures go to the driver's log, an INFO line per trigger
``arrow_timezone``        4.1+     ``to_arrow_schema(timestamp_utc=True)``, the same UTC schema
========================  =======  =====================================================

Why streaming needs 4.2: the write-ahead log's no-loss rule deletes a segment only once Spark has
committed the batch that read it, and binds the log to the query through the start offset
Spark hands ``latestOffset``. Before 4.2 ``latestOffset()`` takes no arguments, so after a restart
the reader cannot tell which segments the checkpoint has already processed, nor carry on the
checkpoint's segment numbering once the log is empty: a restarted query could hand out ids the
checkpoint has passed, and lose those messages. Refusing is the fallback, not a degraded stream.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader

from .._links import doc_url

__all__ = ["SparkFeatures", "UnsupportedStreamReader", "features", "to_arrow_schema_utc"]


@dataclass(frozen=True)
class SparkFeatures:
    version: str
    filter_pushdown: bool
    admission_control: bool
    report_latest_offset: bool
    arrow_timezone: bool

    def streaming_refusal(self) -> str | None:
        """Why a streaming read cannot run on this release, or ``None`` when it can."""
        if self.admission_control:
            return None
        return (
            f"jms data source: streaming reads need PySpark 4.2 or newer (this is {self.version}): "
            "the write-ahead log relies on latestOffset(start, limit), ReadLimit and "
            "Trigger.AvailableNow support for Python sources (pyspark.sql.streaming.datasource), "
            "which this release lacks. Batch reads and writes (spark.read / df.write with "
            "format('jms')) work on this release; for streaming, upgrade pyspark "
            f"({doc_url('spark', 'spark-releases')})"
        )


def _attribute(module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def detect() -> SparkFeatures:
    """Probe the installed pyspark (imports only; no session needed)."""
    import inspect

    version = str(_attribute("pyspark", "__version__") or "unknown")
    reader = _attribute("pyspark.sql.datasource", "DataSourceReader")
    stream_reader = _attribute("pyspark.sql.datasource", "DataSourceStreamReader")
    streaming = [
        _attribute("pyspark.sql.streaming.datasource", name)
        for name in ("ReadLimit", "ReadMaxRows", "ReadAllAvailable", "SupportsTriggerAvailableNow")
    ]
    to_arrow = _attribute("pyspark.sql.pandas.types", "to_arrow_schema")
    try:
        arrow_timezone = to_arrow is not None and "timezone" in inspect.signature(to_arrow).parameters
    except (TypeError, ValueError):
        arrow_timezone = False
    return SparkFeatures(
        version=version,
        filter_pushdown=reader is not None and hasattr(reader, "pushFilters"),
        admission_control=all(item is not None for item in streaming),
        report_latest_offset=stream_reader is not None and hasattr(stream_reader, "reportLatestOffset"),
        arrow_timezone=arrow_timezone,
    )


@cache
def features() -> SparkFeatures:
    """The installed pyspark's features (detected on first use)."""
    return detect()


def to_arrow_schema_utc(schema: Any) -> Any:
    """``pyspark.sql.pandas.types.to_arrow_schema`` with timestamps in UTC on every 4.x release
    (4.0 spells it ``timestamp_utc=True``, later releases ``timezone="UTC"``)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if features().arrow_timezone:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema, timestamp_utc=True)  # type: ignore[call-arg]


class UnsupportedStreamReader(DataSourceStreamReader):
    """The stream reader on a release the real one cannot run on: every call raises the reason
    (as ``stream.RefusedStreamReader`` does, without its 4.2-only base classes), so the query
    fails with it as its first act."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def _refuse(self) -> Any:
        raise ValueError(self.reason)

    def initialOffset(self) -> dict[str, Any]:
        return self._refuse()

    def latestOffset(self, *args: Any) -> dict[str, Any]:  # () before 4.2, (start, limit) after
        return self._refuse()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Any:
        return self._refuse()

    def read(self, partition: Any) -> Any:
        return self._refuse()

    def commit(self, end: dict[str, Any]) -> None:
        self._refuse()

    def stop(self) -> None:
        pass
