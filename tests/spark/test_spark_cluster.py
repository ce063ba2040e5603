"""The jms source on a standalone Spark cluster whose workers cannot see the driver's disk.

A Master and two Workers (each with its own work directory) are started from the pyspark
package on loopback. Each Worker runs in its own mount namespace (``unshare``) with an empty
tmpfs over the test's directory, so executors see nothing of the driver's files, as on separate
hosts. The write-ahead log lives on S3 (moto's server on loopback): the ingest works, every
message arrives, duplicates only with the same message id. The same query with the log on the
driver's local disk fails clearly in its first batch (executors cannot open the segment); before
the log went through pyarrow.fs, an ``s3://`` walPath silently became a local folder.
"""

from __future__ import annotations

import os
import re
import shutil
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _unshare_reason() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare(1) is not installed"
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /mnt"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"no private mount namespace here (needs root or CAP_SYS_ADMIN): {probe.stderr.strip()}"
    return None


class StandaloneCluster:
    """Master + 2 Workers from the pyspark package; workers blind to ``hidden``."""

    def __init__(self, work: Path, hidden: Path) -> None:
        import pyspark

        self.spark_home = os.path.dirname(pyspark.__file__)
        self.work = work
        self.hidden = hidden
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen[bytes]] = []

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "SPARK_HOME": self.spark_home,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
        }

    def _spawn(self, args: list[str], log: str, blind: bool) -> None:
        spark_class = os.path.join(self.spark_home, "bin", "spark-class")
        command = [spark_class, *args]
        if blind:  # its own mount namespace, an empty tmpfs over the driver's directory
            script = f'mount -t tmpfs none "{self.hidden}" && exec "$@"'
            command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]
        self.procs.append(
            subprocess.Popen(
                command,
                env=self._env(),
                stdout=subprocess.DEVNULL,
                stderr=open(self.work / log, "wb"),
                start_new_session=True,
            )
        )

    def start(self) -> None:
        master = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port)]
        self._spawn([*master, "--webui-port", "0"], "master.log", blind=False)
        for n in (1, 2):
            work_dir = self.work / f"worker{n}"
            work_dir.mkdir()
            worker = ["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1"]
            worker += ["--work-dir", str(work_dir), "--cores", "1", "--memory", "1g", "--webui-port", "0"]
            self._spawn(worker, f"worker{n}.log", blind=True)
        deadline = time.monotonic() + 120
        while True:
            registered = (self.work / "master.log").read_text(errors="replace").count("Registering worker")
            if registered >= 2:
                return
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                raise RuntimeError("the standalone cluster did not come up: " + self.logs())
            time.sleep(0.5)

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-1500:] for p in sorted(self.work.glob("*.log")))

    def stop(self) -> None:
        import signal

        for proc in self.procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)


@pytest.fixture(scope="module")
def cluster_spark(tmp_path_factory: pytest.TempPathFactory, s3_wal_root: str) -> Iterator[tuple[Any, Path]]:
    """A SparkSession on the cluster, and the driver-only directory the workers cannot see."""
    reason = _unshare_reason()
    if reason is not None:
        pytest.skip(reason)
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    hidden = tmp_path_factory.mktemp("driver-only")
    cluster_work = tmp_path_factory.mktemp("cluster")
    cluster = StandaloneCluster(cluster_work, hidden)
    cluster.start()
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    executor_env = {
        key: os.environ[key]
        for key in (
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_DEFAULT_REGION",
            "AWS_EC2_METADATA_DISABLED",
        )
        if key in os.environ
    }
    executor_env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    builder = (
        SparkSession.builder.master(cluster.url)
        .appName("amqp-jms-cluster")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.executor.cores", "1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.pyspark.python", sys.executable)
    )
    for key, value in executor_env.items():
        builder = builder.config(f"spark.executorEnv.{key}", value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    from amqp_jms.spark import register

    register(session)
    try:
        yield session, hidden
    finally:
        session.stop()
        cluster.stop()


@pytest.fixture(scope="module")
def broker_url() -> Iterator[str]:
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def _ingest(spark: Any, url: str, queue: str, wal: str, checkpoint: Path, trigger: dict[str, Any]) -> Any:
    df = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("walPath", wal)
        .option("segmentMessages", 500)
        .load()
    )
    return (
        df.select("message_id", "text")
        .writeStream.format("memory")  # rows come back to the driver: no sink path executors need
        .queryName(re.sub(r"\W", "_", queue))
        .option("checkpointLocation", str(checkpoint))
        .trigger(**trigger)
        .start()
    )


def test_ingest_with_the_log_on_s3_while_workers_cannot_see_the_driver_disk(
    cluster_spark: tuple[Any, Path], broker_url: str, s3_wal_root: str, send_texts: Any, check_each_once: Any
) -> None:
    spark, hidden = cluster_spark
    send_texts(broker_url, "cluster-now", _SENT)
    query = _ingest(
        spark,
        broker_url,
        "cluster-now",
        s3_wal_root.format("cluster-now"),
        hidden / "chk1",
        {"availableNow": True},
    )
    query.awaitTermination(300)
    assert query.exception() is None
    check_each_once(spark.sql("select * from cluster_now").collect(), _SENT)

    send_texts(broker_url, "cluster-tick", _SENT)
    query = _ingest(
        spark,
        broker_url,
        "cluster-tick",
        s3_wal_root.format("cluster-tick"),
        hidden / "chk2",
        {"processingTime": "500 milliseconds"},
    )
    try:
        deadline = time.monotonic() + 180
        while spark.sql("select count(distinct text) c from cluster_tick").collect()[0].c < _SENT:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.5)
        check_each_once(spark.sql("select * from cluster_tick").collect(), _SENT)
    finally:
        query.stop()


def test_a_log_on_the_driver_disk_fails_the_first_batch_clearly(
    cluster_spark: tuple[Any, Path], broker_url: str, send_texts: Any
) -> None:
    spark, hidden = cluster_spark
    send_texts(broker_url, "cluster-local", 10)
    query = _ingest(
        spark, broker_url, "cluster-local", str(hidden / "wal"), hidden / "chk3", {"availableNow": True}
    )
    with pytest.raises(Exception, match=r"seg-0+1\.arrow is not visible on this executor"):
        query.awaitTermination(300)


def test_no_wal_path_with_the_default_on_the_driver_disk_is_refused_before_anything_is_taken(
    cluster_spark: tuple[Any, Path], broker_url: str, send_texts: Any
) -> None:
    """Issue 34: the query took all the messages into a log on the driver's disk, then failed
    its first batch; only a local-mode rerun on that host could get them back. Now it fails at
    once naming walPath, and the queue keeps every message."""
    from amqp_jms import Queue
    from amqp_jms.client import ConnectionFactory
    from amqp_jms.spark import register

    spark, hidden = cluster_spark
    send_texts(broker_url, "cluster-default", 10)
    spark.conf.set("spark.sql.streaming.checkpointLocation", str(hidden / "root"))
    try:
        register(spark)
        df = (
            spark.readStream.format("jms")
            .option("url", broker_url)
            .option("destination", "queue://cluster-default")
            .load()
        )
        with pytest.raises(Exception, match=r"option 'walPath' is required on a cluster"):
            query = (
                df.writeStream.format("memory")
                .queryName("cluster_default")
                .option("checkpointLocation", str(hidden / "chk4"))
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination(120)
    finally:
        spark.conf.unset("spark.sql.streaming.checkpointLocation")
        register(spark)
    with ConnectionFactory(broker_url).create_connection() as conn:
        conn.start()
        browser = conn.create_session(False).create_browser(Queue("cluster-default"))
        assert sum(1 for _ in browser.get_enumeration()) == 10
    assert not (hidden / "root" / "jms-wal").exists()
