"""A background receiver in a process of its own: how ``numReceivers`` uses the driver's cores.

Why a process: one receiver is bound by one core (the client's receive loop holds the GIL for
every message it vets), so several receivers as threads of the source's process would share
that core. Each :class:`ReceiverProcess` runs one :class:`~amqp_jms.spark.receiver.SegmentReceiver`
in ``python -m amqp_jms.spark.receiver_process``, with its own connection (a competing consumer
on the queue, or on the shared subscription of a topic) and its own write-ahead log under the
query's ``walPath`` (``receiver-<i>/``), so every guarantee of the single receiver holds per
receiver: receive → durable segment → accept, in order, at least once.

Its log lines travel too: the child's ``amqp_jms.*`` loggers hand every record (at the levels
the reader's process has set for them) over a second socket pair, and the reader's process emits
it through its own logger of the same name, prefixed ``receiver process <pid>:``. So the lines of
every receiver land where the source's own go, and are configured there; before, a child's
warnings went to Python's last-resort handler, straight to the driver's stderr.

The proxy forwards the reader's calls (``latest``, ``delete_through``, ``wait_drained``,
``stop``) over a socket pair as pickled tuples; an exception in the child comes back and is
raised in the reader. A plain ``subprocess`` (not ``multiprocessing``) because the source runs in
a Python worker Spark started, whose ``__main__`` a spawned child must not import again. The
child ends when the pipe closes: a driver that dies takes its receivers with it, and what they
held un-accepted is redelivered.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import socket
import struct
import subprocess
import sys
import threading
from typing import Any

from ..exceptions import IllegalStateException
from .options import JmsOptions

__all__ = ["ReceiverProcess", "receiver_log_path"]

_LEN = struct.Struct(">I")


def receiver_log_path(wal_path: str, index: int) -> str:
    """The log of receiver ``index`` (0-based) under the query's ``walPath``: ``receiver-<i>``
    joined to the path only. A URI keeps its query (``s3://b/wal?region=…`` becomes
    ``s3://b/wal/receiver-0?region=…``): appended after it, the name would end up in the last
    option's value."""
    from urllib.parse import urlsplit, urlunsplit

    name = f"receiver-{index}"
    if "://" not in wal_path:
        return wal_path.rstrip("/") + "/" + name
    parts = urlsplit(wal_path)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + name))


def _send(sock: socket.socket, value: Any) -> None:
    data = pickle.dumps(value)
    sock.sendall(_LEN.pack(len(data)) + data)


def _recv(sock: socket.socket) -> Any:
    head = _exactly(sock, _LEN.size)
    return pickle.loads(_exactly(sock, _LEN.unpack(head)[0]))


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class ReceiverProcess:
    """One receiver process and the reader's end of its pipe. ``request`` and ``result`` split
    a call so the reader can ask every receiver first and then collect (they wait in parallel)."""

    def __init__(
        self, options: JmsOptions, wal_path: str, available_now: bool, rows_per_batch: int | None
    ) -> None:
        from .._logs import LAYERS

        ours, theirs = socket.socketpair()
        logs_ours, logs_theirs = socket.socketpair()
        self._sock = ours
        self.wal_path = wal_path
        levels = json.dumps({logger.name: logger.getEffectiveLevel() for logger in LAYERS})
        try:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "amqp_jms.spark.receiver_process",
                    str(theirs.fileno()),
                    str(logs_theirs.fileno()),
                    levels,
                ],
                pass_fds=[theirs.fileno(), logs_theirs.fileno()],
                env=os.environ.copy(),
            )
        finally:
            theirs.close()
            logs_theirs.close()
        self._logs = threading.Thread(
            target=_emit_forwarded,
            args=(logs_ours, self.proc.pid),
            name=f"amqp-jms-receiver-{self.proc.pid}-logs",
            daemon=True,
        )
        self._logs.start()
        # no wait for the answer here: the caller starts every receiver, then collects with
        # ``result()``, so they start together (each process takes a second or more to import)
        self.request("start", options, wal_path, available_now, rows_per_batch)

    def request(self, *call: Any) -> None:
        try:
            _send(self._sock, call)
        except OSError as exc:
            raise IllegalStateException(
                f"jms data source: receiver process {self.proc.pid} is gone: {exc}"
            ) from None

    def result(self) -> Any:
        try:
            kind, value = _recv(self._sock)
        except (EOFError, OSError) as exc:
            raise IllegalStateException(
                f"jms data source: receiver process {self.proc.pid} ended (exit status "
                f"{self.proc.poll()}): {exc}"
            ) from None
        if kind == "error":
            raise value
        return value

    def call(self, *call: Any) -> Any:
        self.request(*call)
        return self.result()

    def stop(self, timeout_s: float = 10.0) -> None:
        try:
            self.call("stop", timeout_s)
        except IllegalStateException:
            pass
        finally:
            self._sock.close()
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self._logs.join(timeout_s)  # the child's last lines (its socket closed when it exited)


class _ForwardingHandler(logging.Handler):
    """The child's handler on the ``amqp_jms`` logger: each record, formatted, to the reader's
    process (:func:`_emit_forwarded`). A record that cannot be sent is dropped: logging never
    stops a receiver."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self._send_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields = dict(record.__dict__)
            fields["msg"] = record.getMessage()
            fields["args"] = None
            if record.exc_info:
                fields["exc_text"] = logging.Formatter().formatException(record.exc_info)
            fields["exc_info"] = None
            fields = {k: v for k, v in fields.items() if _plain(v)}
            with self._send_lock:
                _send(self._sock, fields)
        except Exception:
            pass


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool | dict | tuple | list)


def _emit_forwarded(sock: socket.socket, pid: int) -> None:
    """The reader's side: emit each record a receiver process forwards through the logger of
    its name here (the levels and handlers of this process decide), until the child exits."""
    try:
        while True:
            try:
                fields = _recv(sock)
            except (EOFError, OSError):
                return
            record = logging.makeLogRecord(fields)
            record.msg = f"receiver process {pid}: {record.msg}"
            logger = logging.getLogger(record.name)
            if logger.isEnabledFor(record.levelno):
                logger.handle(record)
    finally:
        sock.close()


def _forward_logs(sock: socket.socket, levels: dict[str, int]) -> None:
    """The child: its ``amqp_jms.*`` records go to the reader's process, none to stderr."""
    top = logging.getLogger("amqp_jms")
    top.addHandler(_ForwardingHandler(sock))
    top.propagate = False
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def _serve(sock: socket.socket) -> None:
    """The child: build the receiver on ``start``, then answer calls until ``stop`` or EOF."""
    from .receiver import SegmentReceiver
    from .wal import WriteAheadLog

    receiver: SegmentReceiver | None = None
    try:
        while True:
            try:
                call = _recv(sock)
            except (EOFError, OSError):
                return  # the reader's process is gone
            name, args = call[0], call[1:]
            try:
                if name == "start":
                    options, wal_path, available_now, rows_per_batch = args
                    receiver = SegmentReceiver(
                        options, WriteAheadLog(wal_path), available_now, rows_per_batch
                    )
                    value: Any = None
                elif receiver is None:
                    raise IllegalStateException("jms data source: receiver process not started")
                elif name == "latest":
                    value = receiver.latest(*args)
                elif name == "delete_through":
                    receiver.delete_through(*args)
                    value = None
                elif name == "wait_drained":
                    value = receiver.wait_drained(*args)
                elif name == "stop":
                    receiver.stop(*args)
                    _send(sock, ("ok", None))
                    return
                else:
                    raise IllegalStateException(f"jms data source: unknown receiver call {name!r}")
                reply: tuple[str, Any] = ("ok", value)
            except Exception as exc:
                reply = ("error", _picklable(exc))
            _send(sock, reply)
    finally:
        if receiver is not None:
            receiver.stop()


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return IllegalStateException(f"{type(exc).__name__}: {exc}")


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[1]))
    if len(argv) > 3:
        _forward_logs(socket.socket(fileno=int(argv[2])), json.loads(argv[3]))
    try:
        _serve(sock)
    finally:
        sock.close()


if __name__ == "__main__":
    main(sys.argv)
