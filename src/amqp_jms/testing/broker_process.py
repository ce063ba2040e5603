"""The embedded broker as a subprocess (``python -m amqp_jms.broker``) with its memory readings:
for tests that kill it or measure it, and for ``benchmarks/broker_fuzz.py``.

    p = BrokerProcess("--data-dir", "d")     # started; p.url, p.pid, p.addr (p.metrics_url)
    p.peak_mb(); p.rss_mb()                   # VmHWM / VmRSS from /proc/<pid>/status
    log = p.stop()                            # SIGTERM (then SIGKILL); what it logged
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence

__all__ = ["BrokerProcess", "RestartableBroker"]


class BrokerProcess:
    """``python -m amqp_jms.broker --port 0`` (plus ``args``); ``url``, ``pid``, memory readings."""

    def __init__(self, *args: str, quiet: bool = True, entry: Sequence[str] = ("-m", "amqp_jms.broker"),
                 env: Mapping[str, str] | None = None) -> None:
        """``entry``: what the interpreter runs, a script that ends in the broker's command line
        instead of the module (a benchmark's broker with its loop instrumented); ``env``: the
        subprocess's environment (default: this one's)."""
        # the log goes to a file: a pipe nobody reads would block a broker that logs a lot
        self._log = tempfile.TemporaryFile("w+")
        self._stopped: str | None = None
        self.proc = subprocess.Popen(
            [sys.executable, *entry, "--port", "0", *(["-q"] if quiet else []), *args],
            stdout=subprocess.PIPE, stderr=self._log, text=True, env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"(amqp://\S+)", line)
        if not m:
            raise AssertionError(f"broker did not start: {line!r} {self.stop()}")
        self.url = m.group(1)
        metrics = re.search(r"metrics on (http://\S+?)\)", line)
        self.metrics_url = metrics.group(1) if metrics else None  # with --metrics HOST:PORT
        console = re.search(r"console on (https?://\S+?)\)", line)
        self.console_url = console.group(1) if console else None  # with --console
        self.pid = self.proc.pid
        host, port = self.url.rsplit("/", 1)[1].rsplit(":", 1)
        self.addr = (host, int(port))

    def status_kb(self, field: str) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise AssertionError(f"{field} not in /proc/{self.pid}/status")

    def rss_mb(self) -> float:
        return self.status_kb("VmRSS") / 1024

    def peak_mb(self) -> float:
        return self.status_kb("VmHWM") / 1024

    def alive(self) -> bool:
        return self.proc.poll() is None

    def socket(self, timeout: float = 5.0) -> socket.socket:
        return socket.create_connection(self.addr, timeout=timeout)

    def stderr(self) -> str:
        """What it has logged so far."""
        self._log.seek(0)
        return self._log.read()

    def stop(self) -> str:
        """Stop it (SIGTERM, then SIGKILL); returns what it logged."""
        if self._stopped is not None:
            return self._stopped
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stopped = self.stderr()
        self._log.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self._stopped


class RestartableBroker:
    """A :class:`BrokerProcess` on a store that can be SIGKILLed and brought back on the same
    port and store: for tests of what a client rides through when its broker crashes."""

    def __init__(self, data_dir: str, *args: str) -> None:
        self.data_dir = str(data_dir)
        self.args = args
        self.proc = BrokerProcess("--data-dir", self.data_dir, *args)
        self.port = self.proc.addr[1]

    def kill(self) -> None:
        """SIGKILL: no shutdown, the store as the crash left it."""
        self.proc.proc.kill()
        self.proc.proc.wait()
        self.proc.stop()

    def start(self) -> None:
        self.proc = BrokerProcess("--data-dir", self.data_dir, "--port", str(self.port), *self.args)

    def crash_and_restart(self, down_s: float = 0.5) -> None:
        import time

        self.kill()
        time.sleep(down_s)
        self.start()

    def stop(self) -> str:
        return self.proc.stop()
