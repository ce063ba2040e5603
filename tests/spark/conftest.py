"""Shared Spark fixture: one local[2] SparkSession per test module, stopped afterwards."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
#: Credentials for the S3 endpoint of ``s3_wal_root`` (moto, loopback), set before any test starts
#: Spark: the JVM's Python workers (the stream reader's among them) get the environment the JVM
#: started with, so a fixture setting them later would not reach a session already running.
_S3_TEST_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
for _key, _value in _S3_TEST_ENVIRONMENT.items():
    os.environ.setdefault(_key, _value)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("amqp-jms-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    from amqp_jms.spark import register

    register(session)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def broker_process(tmp_path: Any) -> Iterator[Any]:
    """The embedded broker as a subprocess with a durable store under ``tmp_path``, to be
    SIGKILLed and restarted under a query (``RestartableBroker.kill`` / ``start``)."""
    from amqp_jms.testing.broker_process import RestartableBroker

    broker = RestartableBroker(str(tmp_path / "store"))
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def s3_wal_root() -> Iterator[str]:
    """``s3://…`` URI prefix of a bucket on a local S3 endpoint: moto's server mode (a real S3
    HTTP implementation from PyPI, ``amqp-jms[spark]``'s dev extra), on loopback.

    Credentials travel in the environment (``AWS_ACCESS_KEY_ID``…, set when this module is
    imported), which Spark's executors and the driver's Python workers inherit.
    """
    import importlib.util
    import socket
    import subprocess
    import time

    if importlib.util.find_spec("moto") is None or importlib.util.find_spec("flask") is None:
        pytest.skip("moto's server mode (pip install 'moto[server]', in the dev extra) is not installed")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # this interpreter's moto (a ``moto_server`` on PATH may belong to another Python)
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for key, value in _S3_TEST_ENVIRONMENT.items():
        os.environ.setdefault(key, value)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.skip("moto's S3 server did not start")
                time.sleep(0.2)
        import pyarrow.fs as pafs

        endpoint = f"127.0.0.1:{port}"
        fs = pafs.S3FileSystem(
            endpoint_override=endpoint, scheme="http", region="us-east-1", allow_bucket_creation=True
        )
        fs.create_dir("wal-bucket")
        yield f"s3://wal-bucket/{{}}?endpoint_override={endpoint}&scheme=http&region=us-east-1"
    finally:
        proc.terminate()
        proc.wait(10)


def _send_texts(url: str, queue: str, count: int) -> None:
    """TextMessages ``m0`` … ``m<count-1>`` to ``queue``, persistent, committed every 500."""
    from amqp_jms import Queue
    from amqp_jms.client import ConnectionFactory
    from amqp_jms.message import TextMessage

    with ConnectionFactory(url).create_connection() as conn:
        session = conn.create_session(True)
        producer = session.create_producer(Queue(queue))
        for i in range(count):
            producer.send(TextMessage(f"m{i}"))
            if i % 500 == 499:
                session.commit()
        session.commit()


def _check_each_once(rows: list[Any], sent: int) -> None:
    """Every ``m<i>`` arrived; a duplicate row is the same message (same ``message_id``)."""
    assert {r.text for r in rows} == {f"m{i}" for i in range(sent)}
    by_id: dict[str, set[str]] = {}
    for row in rows:
        by_id.setdefault(row.message_id, set()).add(row.text)
    assert len(by_id) == sent and all(len(texts) == 1 for texts in by_id.values())


@pytest.fixture
def send_texts() -> Callable[[str, str, int], None]:
    return _send_texts


@pytest.fixture
def check_each_once() -> Callable[[list[Any], int], None]:
    return _check_each_once


def _check_same_ids(pairs: list[tuple[str, str]], expected: set[str]) -> None:
    """Every text of ``expected`` arrived; copies of one text all carry one message id (a
    duplicate is the same message again, never a new one)."""
    assert {text for _, text in pairs} == expected
    ids: dict[str, set[str]] = {}
    for message_id, text in pairs:
        ids.setdefault(text, set()).add(message_id)
    assert all(len(v) == 1 for v in ids.values()), [t for t, v in ids.items() if len(v) > 1][:5]


@pytest.fixture
def check_same_ids() -> Callable[[list[tuple[str, str]], set[str]], None]:
    """``check_same_ids(pairs of (message_id, text), expected texts)``."""
    return _check_same_ids
