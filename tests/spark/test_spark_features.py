"""Feature detection across Spark 4 releases (amqp_jms.spark.features).

The installed pyspark is the newest; an older release is simulated in a fresh interpreter by
taking away what it lacks (the ``pyspark.sql.streaming.datasource`` module of 4.2, the
``pushFilters`` hook of 4.1, ``to_arrow_schema``'s ``timezone`` keyword of 4.1), before the
connector is imported: the connector must load, batch reads keep their schema, and a streaming
read is refused by name instead of failing on an import.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")

_SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_detection_matches_what_the_installed_pyspark_has() -> None:
    from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader

    from amqp_jms.spark.features import detect

    found = detect()
    streaming = importlib.util.find_spec("pyspark.sql.streaming.datasource") is not None
    assert found.admission_control == streaming
    assert found.filter_pushdown == hasattr(DataSourceReader, "pushFilters")
    assert found.report_latest_offset == hasattr(DataSourceStreamReader, "reportLatestOffset")
    assert found.streaming_refusal() is None or not found.admission_control


_OLD_RELEASE = textwrap.dedent(
    """
    import json, sys
    import pyspark
    import pyspark.sql.pandas.types as pandas_types
    from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader

    newest_arrow = pandas_types.to_arrow_schema
    reference = None

    def to_arrow_schema(schema, error_on_duplicated_field_names_in_struct=False,
                        timestamp_utc=True, prefers_large_types=False):  # PySpark 4.0's signature
        return newest_arrow(schema, timezone="UTC" if timestamp_utc else None)

    from amqp_jms.spark.schema import row_schema
    reference = newest_arrow(row_schema("string", False, "variant"), timezone="UTC")

    pyspark.__version__ = "4.0.5"
    sys.modules["pyspark.sql.streaming.datasource"] = None  # import raises ImportError
    del DataSourceReader.pushFilters
    del DataSourceStreamReader.reportLatestOffset
    pandas_types.to_arrow_schema = to_arrow_schema

    from amqp_jms.spark import JmsDataSource
    from amqp_jms.spark.features import features
    from amqp_jms.spark.reader import JmsBatchReader
    from amqp_jms.spark.schema import arrow_schema

    found = features()
    reader = JmsDataSource({"url": "amqp://127.0.0.1:1", "destination": "queue://q",
                            "walPath": "/tmp/w"}).streamReader(None)
    errors = []
    for call in (reader.initialOffset, reader.latestOffset):  # 4.0 calls latestOffset()
        try:
            call()
        except ValueError as exc:
            errors.append(str(exc))
    reader.stop()
    print(json.dumps({
        "features": found.__dict__,
        "reader": type(reader).__name__,
        "errors": errors,
        "stream_module_loaded": "amqp_jms.spark.stream" in sys.modules,
        "push_filters_defined": "pushFilters" in vars(JmsBatchReader),
        "arrow_same": arrow_schema("string", False, "variant") == reference,
    }))
    """
)


def test_an_older_release_loads_reads_in_batch_and_refuses_streaming_by_name() -> None:
    from amqp_jms.spark.features import features

    if not (features().admission_control and features().filter_pushdown and features().arrow_timezone):
        pytest.skip(f"PySpark {features().version} is itself an older release (the next test runs on it)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([_SRC, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", _OLD_RELEASE], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["features"] == {
        "version": "4.0.5",
        "filter_pushdown": False,
        "admission_control": False,
        "report_latest_offset": False,
        "arrow_timezone": False,
    }
    assert out["reader"] == "UnsupportedStreamReader" and not out["stream_module_loaded"]
    assert len(out["errors"]) == 2
    for error in out["errors"]:
        assert "streaming reads need PySpark 4.2 or newer (this is 4.0.5)" in error
        assert "Batch reads and writes" in error
    assert not out["push_filters_defined"]  # Spark 4.0 evaluates every filter itself
    assert out["arrow_same"]  # the same UTC timestamps, the same variant struct


def test_a_stream_on_a_release_without_admission_control_fails_by_name(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """On a real PySpark 4.0/4.1 (the second venv of docs/spark.md): ``start()`` or the first
    trigger fails with the refusal, not an ImportError or a TypeError from ``latestOffset()``."""
    from amqp_jms.spark.features import features

    if features().admission_control:
        pytest.skip(f"PySpark {features().version} runs streaming reads")
    spark = request.getfixturevalue("spark")  # (no session is started where the test skips)
    query = None
    with pytest.raises(Exception, match=r"streaming reads need PySpark 4\.2 or newer"):
        query = (
            spark.readStream.format("jms")
            .option("url", "amqp://127.0.0.1:1")
            .option("destination", "queue://q")
            .option("walPath", str(tmp_path / "wal"))
            .load()
            .writeStream.format("memory")
            .queryName("refused")
            .option("checkpointLocation", str(tmp_path / "chk"))
            .start()
        )
        query.awaitTermination(120)
    if query is not None:
        query.stop()


def test_source_metrics_reads_the_figures_in_kafkas_form_and_nothing_from_other_sources() -> None:
    """``source_metrics`` turns a progress into Kafka's ``sources[i].metrics`` form (a map of
    strings) from a dict, its JSON text or an object with attributes (classic and Connect
    progress objects); a source without the figures (another format, a release that shows no
    ``reportLatestOffset``) gives ``{}``, never an error."""
    from types import SimpleNamespace

    from amqp_jms.spark.progress import source_metrics

    figures = {
        "segment": 14, "log": "5f0c", "buffered": 20, "bufferedSegments": 2, "received": 140,
        "walBytes": 7340, "minOffsetsBehindLatest": 20, "maxOffsetsBehindLatest": 20,
        "avgOffsetsBehindLatest": 20.0,
    }
    progress = {
        "id": "q", "batchId": 3,
        "sources": [
            {"description": "RateStreamV2", "latestOffset": "123", "endOffset": "123"},
            {"description": "jms", "latestOffset": json.dumps(figures), "endOffset": '{"segment": 12}'},
            {"description": "jms on 4.1", "latestOffset": None, "endOffset": '{"segment": 12}'},
        ],
    }
    expected = {
        "avgOffsetsBehindLatest": "20.0", "maxOffsetsBehindLatest": "20", "minOffsetsBehindLatest": "20",
        "buffered": "20", "bufferedSegments": "2", "received": "140", "walBytes": "7340",
    }
    assert source_metrics(progress, 1) == expected
    assert source_metrics(json.dumps(progress), 1) == expected
    as_object = SimpleNamespace(
        sources=[SimpleNamespace(**source) for source in progress["sources"]]  # type: ignore[arg-type]
    )
    assert source_metrics(as_object, 1) == expected
    assert source_metrics(progress, 0) == {} and source_metrics(progress, 2) == {}
    assert source_metrics(progress, 5) == {} and source_metrics({"sources": []}) == {}


def test_the_progress_listener_runs_on_every_release_and_passes_over_other_sources(
    request: pytest.FixtureRequest,
) -> None:
    """``JmsProgressListener`` needs nothing newer than PySpark 4.0 (this test runs in the oldest
    release's venv too): attached to a real session it reads every progress of a query without a
    jms source without failing (PySpark only logs a listener's exceptions, so they are caught
    here) and reports no figures for it."""
    import time

    from amqp_jms.spark.listener import JmsProgressListener

    spark = request.getfixturevalue("spark")

    class Checked(JmsProgressListener):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0
            self.errors: list[BaseException] = []

        def onQueryProgress(self, event: object) -> None:
            try:
                super().onQueryProgress(event)
            except BaseException as exc:
                self.errors.append(exc)
            self.calls += 1

    listener = Checked()
    spark.streams.addListener(listener)
    query = (
        spark.readStream.format("rate").option("rowsPerSecond", 10).load()
        .writeStream.format("noop").trigger(processingTime="200 milliseconds").start()
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline and listener.calls < 2 and query.isActive:
            time.sleep(0.2)
    finally:
        query.stop()
        spark.streams.removeListener(listener)
    assert listener.calls >= 2 and listener.errors == []
    assert listener.metrics(query.id) == {}
