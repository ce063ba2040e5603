"""A streaming query rides through a broker killed with SIGKILL and restarted under it: the
receiver reconnects with back-off, what it had not accepted comes again, nothing is lost, and
duplicates carry the same message_id. The broker runs as a subprocess with a durable store."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_SENT = 2000


class BrokerProcess:
    """``python -m amqp_jms.broker`` with a data directory, on a fixed port so it can restart."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"amqp://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "amqp_jms.broker",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.data_dir),
                "-q",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        assert re.search(r"amqp://", self.proc.stdout.readline()), "the broker did not start"

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


@pytest.fixture
def broker_process(tmp_path: Path) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path / "store")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _rows(spark: Any, table: str) -> list[Any]:
    return spark.sql(f"select message_id, text from {table}").collect()


def test_broker_killed_and_restarted_under_a_running_query_loses_nothing(
    spark: Any, broker_process: BrokerProcess, tmp_path: Path, send_texts: Any, check_each_once: Any
) -> None:
    send_texts(broker_process.url, "restart", _SENT)
    df = (
        spark.readStream.format("jms")
        .option("url", broker_process.url)
        .option("destination", "queue://restart")
        .option("walPath", str(tmp_path / "wal"))
        .option("segmentMessages", 100)
        .option("maxMessagesPerTrigger", 200)
        .option("maxBufferedMessages", 200)  # paced, so the broker dies mid-stream
        .option("pollMs", 100)
        .load()
    )
    query = (
        df.select("message_id", "text")
        .writeStream.format("memory")
        .queryName("restart")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 120
        while len(_rows(spark, "restart")) < 300:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.2)
        broker_process.kill()
        time.sleep(2)  # the receiver finds the broker gone and keeps trying
        broker_process.start()
        deadline = time.monotonic() + 180
        while len({r.text for r in _rows(spark, "restart")}) < _SENT:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, f"{len(_rows(spark, 'restart'))} rows"
            time.sleep(0.5)
        check_each_once(_rows(spark, "restart"), _SENT)
    finally:
        query.stop()
