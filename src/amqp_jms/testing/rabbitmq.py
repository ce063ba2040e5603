"""Start and stop a private RabbitMQ 3.10 (Debian's package) with its AMQP 1.0 plugin.

Why this exists: RabbitMQ is the one real AMQP 1.0 broker nobody on this project wrote, so it is
the honest peer for interop tests and benchmarks. Debian's package is meant to run under systemd
as the ``rabbitmq`` user; here we run it as root from a throw-away directory on loopback, with
every path and port of its own, so several instances (and the system one) never collide::

    with RabbitMQ() as rmq:
        url = rmq.url            # amqp://127.0.0.1:<port>
        ...                      # addresses: /queue/<name>, /topic/<name>

How it runs (measured facts in ``field-notes.md``):

* ``/usr/lib/rabbitmq/bin/rabbitmq-server`` directly (the ``/usr/sbin`` wrapper switches user),
  with ``RUNNING_UNDER_SYSTEMD=1`` so the script ``exec``\\ s the Erlang VM: the child PID *is*
  ``beam.smp`` and a SIGTERM to it is a clean shutdown.
* The VM spawns ``epmd -daemon``, which re-parents to PID 1 and outlives it. We give each instance
  its own epmd port (``ERL_EPMD_PORT``) and find that epmd by its environment afterwards, so we
  stop exactly the epmd we caused and never someone else's.
* Nothing is left running: :meth:`RabbitMQ.stop` is idempotent and is also registered with
  :mod:`atexit`, and a :func:`weakref.finalize` covers instances dropped without ``stop()``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = ["SERVER", "RabbitMQ", "RabbitMQError", "available", "unavailable_reason"]

SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
"""The Debian package's server script (run directly, not through the user-switching wrapper)."""

_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 20.0


class RabbitMQError(RuntimeError):
    """RabbitMQ could not be started (the message carries the tail of its console log)."""


def unavailable_reason() -> str | None:
    """Why RabbitMQ cannot run here, or ``None`` when it can."""
    if not os.path.exists(SERVER):
        return f"RabbitMQ is not installed ({SERVER} missing; as root: apt-get install rabbitmq-server)"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "RabbitMQ is started as root from a temp dir; not running as root"
    if shutil.which("erl") is None and not os.path.exists("/usr/lib/erlang/bin/erl"):
        return "Erlang (erl) is not installed"
    return None


def available() -> bool:
    """True when :class:`RabbitMQ` can start here (server script present, running as root)."""
    return unavailable_reason() is None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie still answers kill(0); treat it as gone
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _epmd_pids(epmd_port: int) -> list[int]:
    """PIDs of ``epmd`` processes started with ``ERL_EPMD_PORT=<epmd_port>`` in their environment."""
    wanted = f"ERL_EPMD_PORT={epmd_port}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm", "rb") as f:
                if f.read().strip() != b"epmd":
                    continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if wanted in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _terminate(pid: int, timeout: float) -> None:
    """SIGTERM ``pid``, wait up to ``timeout``, then SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _pid_alive(pid):
        time.sleep(0.05)
    if _pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class _Instance:
    """The resources one started broker holds; ``close()`` releases all of them, once.

    Kept apart from :class:`RabbitMQ` so the finalizer and atexit hook reference it without keeping
    the user-facing object alive.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.epmd_port: int | None = None
        self.tmp: str | None = None
        self.log_file: IO[bytes] | None = None
        self.closed = False

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        proc = self.proc
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(_STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
            # anything else left in its process group (erl_child_setup, inet_gethost)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        if self.epmd_port is not None:
            for pid in _epmd_pids(self.epmd_port):
                _terminate(pid, 5.0)
        if self.log_file is not None:
            with contextlib.suppress(Exception):
                self.log_file.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


class RabbitMQ:
    """A private RabbitMQ with ``rabbitmq_amqp1_0`` on 127.0.0.1; a context manager.

    Args:
        port: the AMQP port; ``None`` picks a free one.
        start_timeout: seconds to wait for the port and a successful AMQP open.

    Attributes:
        url: ``amqp://127.0.0.1:<port>`` once started.
        port: the AMQP port.
    """

    def __init__(self, port: int | None = None, *, start_timeout: float = _START_TIMEOUT) -> None:
        self.port = port
        self.start_timeout = start_timeout
        self._inst: _Instance | None = None
        self._finalizer: weakref.finalize[..., RabbitMQ] | None = None

    @property
    def url(self) -> str:
        """The AMQP URL of the running broker."""
        if self._inst is None or self._inst.closed:
            raise RabbitMQError("RabbitMQ is not running")
        return f"amqp://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """PID of the ``beam.smp`` process, while running."""
        if self._inst is None or self._inst.proc is None or self._inst.closed:
            return None
        return self._inst.proc.pid

    @property
    def epmd_pids(self) -> list[int]:
        """PIDs of the ``epmd`` this instance spawned (empty once stopped)."""
        if self._inst is None or self._inst.epmd_port is None:
            return []
        return _epmd_pids(self._inst.epmd_port)

    @property
    def directory(self) -> Path | None:
        """The temp dir holding config, mnesia, logs (removed on stop)."""
        if self._inst is None or self._inst.tmp is None:
            return None
        return Path(self._inst.tmp)

    def start(self) -> RabbitMQ:
        """Start the broker and wait until it accepts an AMQP open. Raises :class:`RabbitMQError`."""
        reason = unavailable_reason()
        if reason is not None:
            raise RabbitMQError(reason)
        if self._inst is not None and not self._inst.closed:
            return self
        inst = _Instance()
        self._inst = inst
        self._finalizer = weakref.finalize(self, inst.close)
        atexit.register(inst.close)
        try:
            self._spawn(inst)
            self._wait_ready(inst)
        except BaseException:
            inst.close()
            raise
        return self

    def stop(self) -> None:
        """Stop the broker and its epmd and remove the temp dir. Idempotent."""
        if self._inst is not None:
            self._inst.close()
            atexit.unregister(self._inst.close)

    def __enter__(self) -> RabbitMQ:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the broker's console output (for error messages)."""
        if self._inst is None or self._inst.tmp is None:
            return ""
        try:
            text = Path(self._inst.tmp, "console.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- internals -----------------------------------------------------------------------------

    def _spawn(self, inst: _Instance) -> None:
        tmp = tempfile.mkdtemp(prefix="amqp-jms-rabbitmq-")
        inst.tmp = tmp
        if self.port is None:
            self.port = _free_port()
        dist_port = _free_port()
        inst.epmd_port = _free_port()
        conf = Path(tmp, "rabbitmq.conf")
        conf.write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.port}\n"
            "log.console = true\n"
            "log.file = false\n"
            "amqp1_0.default_user = guest\n"
            "amqp1_0.default_vhost = /\n"
            "loopback_users = none\n"
        )
        plugins = Path(tmp, "enabled_plugins")
        plugins.write_text("[rabbitmq_amqp1_0].\n")
        for d in ("mnesia", "log", "home"):
            Path(tmp, d).mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(Path(tmp, "home")),
            "RUNNING_UNDER_SYSTEMD": "1",
            "RABBITMQ_NODENAME": "rabbit@localhost",
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(dist_port),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
            "ERL_EPMD_PORT": str(inst.epmd_port),
            "RABBITMQ_CONFIG_FILE": str(conf),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(plugins),
            "RABBITMQ_MNESIA_BASE": str(Path(tmp, "mnesia")),
            "RABBITMQ_LOG_BASE": str(Path(tmp, "log")),
            "RABBITMQ_PID_FILE": str(Path(tmp, "rabbitmq.pid")),
            "RABBITMQ_CONF_ENV_FILE": str(Path(tmp, "rabbitmq-env.conf")),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(Path(tmp, "advanced.config")),
        }
        log = open(Path(tmp, "console.log"), "wb")  # closed by _Instance.close
        inst.log_file = log
        inst.proc = subprocess.Popen(
            [SERVER],
            cwd=tmp,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def _wait_ready(self, inst: _Instance) -> None:
        assert inst.proc is not None and self.port is not None
        deadline = time.monotonic() + self.start_timeout
        last_error = "port never opened"
        while time.monotonic() < deadline:
            if inst.proc.poll() is not None:
                raise RabbitMQError(
                    f"RabbitMQ exited with status {inst.proc.returncode} while starting:\n"
                    + self.log_tail()
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                    pass
            except OSError as e:
                last_error = f"port {self.port}: {e}"
                time.sleep(0.25)
                continue
            err = _try_amqp_open(self.port)
            if err is None:
                return
            last_error = f"AMQP open failed: {err}"
            time.sleep(0.25)
        raise RabbitMQError(
            f"RabbitMQ did not become ready within {self.start_timeout:.0f} s ({last_error}):\n"
            + self.log_tail()
        )


def _try_amqp_open(port: int) -> str | None:
    """Open and close an AMQP connection with proton; the error text, or ``None`` on success."""
    from proton.utils import BlockingConnection

    try:
        conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=5)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    with contextlib.suppress(Exception):
        conn.close()
    return None
