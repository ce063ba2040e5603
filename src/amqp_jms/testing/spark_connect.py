"""A Spark Connect server from the installed pyspark package, on loopback: for tests and for trying
``format("jms")`` from a thin client (docs/spark.md, Spark Connect).

    server = ConnectServer(env={"PYTHONPATH": ...})   # started; server.url == "sc://127.0.0.1:PORT"
    spark = SparkSession.builder.remote(server.url).getOrCreate()
    log = server.stop()                                # SIGTERM to its process group, then SIGKILL

The server is ``spark-submit --class …SparkConnectServer`` run in the foreground (what
``sbin/start-connect-server.sh --wait`` does, without its pid file and log directory inside the
pyspark package). Its driver, and so every Python data source reader the server plans, runs in
this server's process tree with ``env``: the connector must be importable there.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping

__all__ = ["ConnectServer"]

_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ConnectServer:
    """``spark-submit`` of the Connect server on ``master`` (``local[2]``), listening on
    127.0.0.1 only; ``url``, ``port``, ``startup_s`` (how long it took to accept connections)."""

    def __init__(
        self,
        master: str = "local[2]",
        env: Mapping[str, str] | None = None,
        conf: Mapping[str, str] | None = None,
        start_timeout_s: float = 240.0,
    ) -> None:
        import pyspark

        spark_home = os.path.dirname(pyspark.__file__)
        self.port = _free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        settings = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.memory": "1g",
            **(conf or {}),
        }
        command = [os.path.join(spark_home, "bin", "spark-submit"), "--class", _SERVER_CLASS]
        command += ["--master", master, "--name", "amqp-jms-connect"]
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        child_env = {
            **os.environ,
            "SPARK_HOME": spark_home,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            **(env or {}),
        }
        # the log goes to a file: a pipe nobody reads would block a server that logs a lot
        self._log = tempfile.TemporaryFile("w+")
        self._stopped: str | None = None
        started = time.monotonic()
        # its own process group: the JVM's Python workers go down with it at stop()
        self.proc = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, env=child_env, start_new_session=True
        )
        deadline = started + start_timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = self.stop()
                    raise RuntimeError(f"Spark Connect server did not start: {log[-3000:]}") from None
                time.sleep(0.25)
        self.startup_s = time.monotonic() - started

    def log(self) -> str:
        """What the server has logged so far."""
        self._log.seek(0)
        return self._log.read()

    def stop(self) -> str:
        """Stop the server and its children (SIGTERM to its group, then SIGKILL); what it logged."""
        if self._stopped is not None:
            return self._stopped
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # a Python worker that outlived the JVM
        except ProcessLookupError:
            pass
        self._stopped = self.log()
        self._log.close()
        return self._stopped
