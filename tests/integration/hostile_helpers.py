"""Helpers for the hostile-input tests (no tests here): the broker as a subprocess with its
defaults, its memory from ``/proc/<pid>/status``, an innocent client's round trip, raw frames.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from proton import Message
from proton.utils import BlockingConnection

SASL_HEADER = b"AMQP\x03\x01\x00\x00"
SASL_INIT = 0x41


class BrokerProcess:
    """``python -m amqp_jms.broker --port 0`` (plus ``args``); ``url``, ``pid``, memory readings."""

    def __init__(self, *args: str) -> None:
        # the log goes to a file: a pipe nobody reads would block a broker that logs a lot
        self._log = tempfile.TemporaryFile("w+")
        self._stopped: str | None = None
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "amqp_jms.broker", "--port", "0", "-q", *args],
            stdout=subprocess.PIPE, stderr=self._log, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"(amqp://\S+)", line)
        if not m:
            raise AssertionError(f"broker did not start: {line!r} {self.stop()}")
        self.url = m.group(1)
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


def round_trip(url: str, address: str = "innocent", timeout: float = 10.0) -> float:
    """Seconds an innocent client takes to connect, send one message and receive it back."""
    t0 = time.monotonic()
    c = BlockingConnection(url, timeout=timeout)
    try:
        c.create_sender(address).send(Message(body="innocent"))
        r = c.create_receiver(address)
        assert r.receive(timeout=timeout).body == "innocent"
        r.accept()
    finally:
        c.close()
    return time.monotonic() - t0


def sasl_frame(performative: int, fields: list[Any]) -> bytes:
    """One SASL frame (type 1) carrying a described performative list."""
    from amqp_jms.mapping.codec import encode_value
    from amqp_jms.types import Described, ULong

    body = encode_value(Described(ULong(performative), fields))
    return (len(body) + 8).to_bytes(4, "big") + b"\x02\x01\x00\x00" + body


def drain(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """Everything the broker writes within ``timeout``; True if it closed the socket."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                return data, True
            data += chunk
    except TimeoutError:
        return data, False
    except ConnectionResetError:
        return data, True
    return data, False


def raw_sender(proc: BrokerProcess, address: str, *, settled: bool = False) -> socket.socket:
    """A raw connection (no SASL) with one sending link to ``address``, its credit granted."""
    from test_broker_peer import AMQP_HEADER, ATTACH, BEGIN, FLOW, OPEN, frame

    from amqp_jms.types import Described, UByte, UInt, ULong

    sock = proc.socket()
    sock.sendall(
        AMQP_HEADER
        + frame(OPEN, ["hostile-peer"])
        + frame(BEGIN, [None, UInt(0), UInt(1 << 20), UInt(1 << 20)])
        + frame(ATTACH, ["hostile", UInt(0), False, UByte(1 if settled else 0), UByte(0),
                         Described(ULong(0x28), []), Described(ULong(0x29), [address])])
    )
    read_until(sock, FLOW)
    return sock


def transfer(delivery_id: int, payload: bytes, *, more: bool = False, settled: bool = False) -> bytes:
    from test_broker_peer import TRANSFER, frame

    from amqp_jms.types import UInt

    return frame(TRANSFER, [UInt(0), UInt(delivery_id), str(delivery_id).encode(), UInt(0), settled,
                            more], payload=payload)


def read_until(sock: socket.socket, *codes: int, timeout: float = 5.0) -> list[tuple[int, int, list[Any]]]:
    """Read frames until one with a performative in ``codes``; all the frames read."""
    from test_broker_peer import AMQP_HEADER, parse_frames

    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk = sock.recv(1 << 20)
        assert chunk, f"socket closed before performative {codes}"
        data += chunk
        try:
            frames = parse_frames(data if data.startswith(AMQP_HEADER) else AMQP_HEADER + data)
        except Exception:
            continue
        if any(f[0] in codes for f in frames):
            return frames
    raise AssertionError(f"no performative {codes} within {timeout}s")


def raw_receiver(proc: BrokerProcess, address: str, *, credit: int) -> socket.socket:
    """A raw connection with one receiving link from ``address`` granted ``credit``; the caller
    then need not read the socket (a consumer that stalls)."""
    from test_broker_peer import AMQP_HEADER, ATTACH, BEGIN, FLOW, OPEN, frame

    from amqp_jms.types import Described, UByte, UInt, ULong

    sock = proc.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    sock.sendall(
        AMQP_HEADER
        + frame(OPEN, ["stalled-peer"])
        + frame(BEGIN, [None, UInt(0), UInt(1 << 31), UInt(1 << 31)])
        + frame(ATTACH, ["stalled", UInt(0), True, UByte(0), UByte(0),
                         Described(ULong(0x28), [address]), Described(ULong(0x29), [])])
        + frame(FLOW, [UInt(0), UInt(1 << 31), UInt(0), UInt(1 << 31), UInt(0), UInt(0), UInt(credit)])
    )
    return sock
