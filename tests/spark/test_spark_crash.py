"""Crash tests: SIGKILL the streaming driver at each point, restart from the checkpoint, lose nothing.

The driver is a subprocess (tests/spark/crash_driver.py) in its own process group; the crash point
(amqp_jms.spark._faults) blocks it at an exact place, and the test kills the whole group (JVM,
source runner, executors' Python workers). Then the same query restarts from its checkpoint and
write-ahead log with availableNow. Every sent message must be in the Parquet output at least
once, and exactly once after de-duplication on message_id.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.message import TextMessage

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_DRIVER = str(Path(__file__).with_name("crash_driver.py"))
_SENT = 60


@pytest.fixture(scope="module")
def broker_url() -> Iterator[str]:
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def _run(url: str, queue: str, work: Path, mode: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, _DRIVER, url, queue, str(work), mode],
        env={**os.environ, "PYSPARK_PYTHON": sys.executable, **env},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=open(work / f"{mode}.log", "ab"),
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(30)


def _committed_rows(out: Path) -> list[tuple[str, str]]:
    """(message_id, text) of the files the Parquet sink committed (its _spark_metadata log).

    Read without Spark: a file a killed batch left behind is not in the log, as Spark would see it.
    """
    import json

    import pyarrow.parquet as pq

    files: set[str] = set()
    for entry in sorted((out / "_spark_metadata").iterdir()):
        if entry.name.startswith("."):
            continue
        for line in entry.read_text().splitlines()[1:]:  # first line: the log version
            record = json.loads(line)
            path = record["path"].removeprefix("file://")
            if record.get("action", "add") == "add":
                files.add(path)
            else:
                files.discard(path)
    rows: list[tuple[str, str]] = []
    for path in sorted(files):
        table = pq.read_table(path, columns=["message_id", "text"])
        rows.extend(zip(table.column("message_id").to_pylist(), table.column("text").to_pylist()))
    return rows


def _clear_unwritten_first_offsets(chk: Path) -> None:
    """What docs/spark.md tells a user whose driver died while Spark wrote batch 0's offsets:
    Spark (4.x) then refuses the checkpoint because ``offsets/`` holds its temporary file; with
    no batch file there, no batch ever ran, and removing the temporary files is safe."""
    offsets = chk / "offsets"
    if offsets.is_dir() and not any(entry.name.isdigit() for entry in offsets.iterdir()):
        for entry in offsets.iterdir():
            entry.unlink()


@pytest.mark.parametrize(
    "point", ["mid_segment", "after_append", "after_accept", "during_sink", "before_first_batch"]
)
def test_no_loss_when_the_driver_is_killed(broker_url: str, tmp_path: Path, point: str) -> None:
    queue = f"crash-{point}"
    with ConnectionFactory(broker_url).create_connection() as conn:
        producer = conn.create_session(False).create_producer(Queue(queue))
        for i in range(_SENT):
            producer.send(TextMessage(f"m{i}"))
    marker = tmp_path / "crashed"
    # crash on the third pass after the first batch is committed (the receiver, paced by
    # maxBufferedMessages=10, still has 40 messages to go then); mid_segment (the background
    # receiver holds received, un-appended messages) is passed once per message
    env = {
        "AMQP_JMS_SPARK_CRASH_AT": point,
        "AMQP_JMS_SPARK_CRASH_AFTER": "2",
        "AMQP_JMS_SPARK_CRASH_ARMED_BY": str(tmp_path / "chk" / "commits" / "0"),
        "AMQP_JMS_SPARK_CRASH_MARKER": str(marker),
    }
    if point == "before_first_batch":  # the first segment accepted, whatever Spark is doing
        env = {
            "AMQP_JMS_SPARK_CRASH_AT": "after_accept",
            "AMQP_JMS_SPARK_CRASH_MARKER": str(marker),
        }
    proc = _run(broker_url, queue, tmp_path, "crash", env)
    try:
        deadline = time.time() + 400
        while not marker.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.5)
        assert marker.exists(), (tmp_path / "crash.log").read_text()[-3000:]
    finally:
        _kill_group(proc)
    _clear_unwritten_first_offsets(tmp_path / "chk")
    restart = _run(broker_url, queue, tmp_path, "finish", {})
    try:
        assert restart.wait(500) == 0, (tmp_path / "finish.log").read_text()[-3000:]
    finally:
        _kill_group(restart)
    rows = _committed_rows(tmp_path / "out")
    texts = {text for _, text in rows}
    assert texts == {f"m{i}" for i in range(_SENT)}  # nothing lost
    by_id = dict(rows)
    assert len(by_id) == _SENT  # exactly once after de-duplication on message_id
    assert sorted(by_id.values(), key=lambda t: int(t[1:])) == [f"m{i}" for i in range(_SENT)]
    # and nothing is left behind at the broker
    with ConnectionFactory(broker_url).create_connection() as conn:
        conn.start()
        assert conn.create_session(False).create_consumer(Queue(queue)).receive(300) is None
