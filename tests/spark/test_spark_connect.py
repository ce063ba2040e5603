"""``format("jms")`` through Spark Connect: a thin client, the plan executed by a Connect server.

One Connect server (``amqp_jms.testing.spark_connect``, from the pyspark package, local[2],
loopback) serves the module; the client is ``SparkSession.builder.remote("sc://…")``. Registration
goes through the client (``register(spark)``): Connect ships the DataSource class to the server
pickled by reference, so the server's Python must import this package (its ``PYTHONPATH`` below).
The broker is a subprocess; the streaming write-ahead log is on S3 (moto on loopback).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import amqp_jms

pytestmark = pytest.mark.spark

_SENT = 2000


@pytest.fixture(scope="module")
def connect_server(s3_wal_root: str) -> Iterator[Any]:
    """A Connect server whose Python workers import this tree's amqp_jms and see moto's S3
    credentials (the ``s3_wal_root`` fixture puts them in the environment it inherits)."""
    pytest.importorskip("pyspark")
    pytest.importorskip("grpc", reason="Spark Connect's client needs pip install 'amqp-jms[spark-connect]'")
    from amqp_jms.testing.spark_connect import ConnectServer

    src = str(Path(amqp_jms.__file__).resolve().parents[1])
    pythonpath = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    server = ConnectServer(env={"PYTHONPATH": pythonpath, "PYSPARK_PYTHON": sys.executable})
    print(f"Spark Connect server accepted connections after {server.startup_s:.1f} s")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def remote(connect_server: Any) -> Iterator[Any]:
    from pyspark.sql import SparkSession

    from amqp_jms.spark import register

    # a Connect session switches the process to Connect mode through the environment: put it back,
    # or every later module's classic SparkSession.builder.getOrCreate() asks for a remote URL
    saved = {key: os.environ.get(key) for key in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
    session = SparkSession.builder.remote(connect_server.url).getOrCreate()
    try:
        assert session.__class__.__module__.startswith("pyspark.sql.connect")
        register(session)
        yield session
    finally:
        session.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def broker_url() -> Iterator[str]:
    from amqp_jms.testing.broker_process import BrokerProcess

    broker = BrokerProcess()
    try:
        yield broker.url
    finally:
        broker.stop()


def _queue_depth(url: str, queue: str) -> int:
    from amqp_jms import Queue
    from amqp_jms.client import ConnectionFactory

    with ConnectionFactory(url).create_connection() as conn:
        browser = conn.create_session(False).create_browser(Queue(queue))
        return sum(1 for _ in browser)


def test_batch_write_and_browse_through_connect(remote: Any, broker_url: str, check_each_once: Any) -> None:
    rows = [(f"m{i}", i % 3) for i in range(_SENT)]
    df = remote.createDataFrame(rows, "text string, priority int")
    df.write.format("jms").option("url", broker_url).option("destination", "queue://connect-batch").mode(
        "append"
    ).save()

    read = (
        remote.read.format("jms")
        .option("url", broker_url)
        .option("destination", "queue://connect-batch")
        .load()
    )
    got = read.select("message_id", "text", "priority").collect()
    check_each_once(got, _SENT)
    assert {r.text: r.priority for r in got} == {f"m{i}": i % 3 for i in range(_SENT)}
    assert _queue_depth(broker_url, "connect-batch") == _SENT  # a browse leaves the queue as it was


def test_a_planning_error_reaches_the_connect_client_by_name(remote: Any) -> None:
    read = remote.read.format("jms").option("url", "amqp://127.0.0.1:1").option("destination", "queue://q")
    with pytest.raises(Exception, match=r"jms data source: cannot connect to amqp://127\.0\.0\.1:1"):
        read.load().collect()


def test_read_stream_to_parquet_with_the_log_on_s3_through_connect(
    remote: Any,
    broker_url: str,
    s3_wal_root: str,
    tmp_path: Path,
    send_texts: Any,
    check_each_once: Any,
) -> None:
    send_texts(broker_url, "connect-stream", _SENT)
    wal = s3_wal_root.format("connect-stream")
    out, checkpoint = tmp_path / "out", tmp_path / "chk"  # the server shares this machine's disk
    started = time.monotonic()
    query = (
        remote.readStream.format("jms")
        .option("url", broker_url)
        .option("destination", "queue://connect-stream")
        .option("walPath", wal)
        .option("segmentMessages", 500)
        .option("maxMessagesPerTrigger", 800)
        .load()
        .select("message_id", "text")
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(240)
    assert query.exception() is None
    print(f"{_SENT} messages queue -> parquet through Connect in {time.monotonic() - started:.1f} s")
    # under Connect a progress is read by attribute: p["numInputRows"] is None there
    batches = [p for p in query.recentProgress if p.numInputRows > 0]
    assert len(batches) >= 3 and all(p.numInputRows <= 800 for p in batches)  # admission control

    check_each_once(remote.read.parquet(str(out)).collect(), _SENT)
    assert _queue_depth(broker_url, "connect-stream") == 0  # consumed: accepted once the log held them
