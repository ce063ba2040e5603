"""Helpers for the hostile-input tests (no tests here): an innocent client's round trip and raw
frames; the broker as a subprocess is :class:`amqp_jms.testing.broker_process.BrokerProcess`.
"""

from __future__ import annotations

import socket
import time
from typing import Any

from proton import Message
from proton.utils import BlockingConnection

from amqp_jms.testing.broker_process import BrokerProcess

SASL_HEADER = b"AMQP\x03\x01\x00\x00"
SASL_INIT = 0x41


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
