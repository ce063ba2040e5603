"""Silent and slow connections (issue 26): a default idle timeout, a deadline for a frame that
arrives a byte at a time, and a limit on connections per source address."""

from __future__ import annotations

import socket
import time
from typing import Any

from hostile_helpers import read_until, round_trip
from test_broker_peer import AMQP_HEADER, BEGIN, CLOSE, OPEN, frame, parse_frames, read_available

from amqp_jms.broker.limits import BrokerLimits
from amqp_jms.types import UInt


def _open(url: str, source: str = "127.0.0.1") -> socket.socket:
    host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0))
    return sock


def test_the_broker_advertises_a_60_second_idle_timeout_by_default(broker: Any) -> None:
    sock = _open(broker.url)
    try:
        sock.sendall(AMQP_HEADER + frame(OPEN, ["silent-peer"]))
        frames = read_until(sock, OPEN)
        fields = next(f for code, _, f in frames if code == OPEN)
        # idle-time-out (the fifth field), in ms: half the broker's 60 s, so that a peer
        # heartbeating at that period is never late (AMQP 1.0 2.4.5)
        assert fields[4] == 30000
    finally:
        sock.close()


def test_idle_timeout_zero_turns_it_off(broker_factory: Any) -> None:
    b = broker_factory(idle_timeout_s=0)
    sock = _open(b.url)
    try:
        sock.sendall(AMQP_HEADER + frame(OPEN, ["silent-peer"]))
        fields = next(f for code, _, f in read_until(sock, OPEN) if code == OPEN)
        assert len(fields) <= 4 or fields[4] is None
    finally:
        sock.close()


def test_a_frame_trickled_a_byte_at_a_time_is_cut_off_at_frame_timeout(broker_factory: Any) -> None:
    """The idle timeout sees bytes arriving and keeps the connection; ``frame_timeout`` sees
    that no frame completes, and closes it with ``amqp:resource-limit-exceeded``."""
    b = broker_factory(idle_timeout_s=5, limits=BrokerLimits(frame_timeout=1.0))
    sock = _open(b.url)
    try:
        begin = frame(BEGIN, [None, UInt(0), UInt(64), UInt(64)])
        sock.sendall(AMQP_HEADER + frame(OPEN, ["trickler"]) + begin)
        read_until(sock, BEGIN)
        trickled = frame(OPEN, ["x" * 200])  # any frame: only its first bytes will come
        started = time.monotonic()
        data = b""
        sock.settimeout(0.2)
        for byte in trickled:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                break
            data += chunk
            if any(code == CLOSE for code, _, _ in parse_frames(AMQP_HEADER + data)):
                break
        closed_after = time.monotonic() - started
        rest, _ = read_available(sock, 1.0)
        data += rest
        assert 0.9 < closed_after < 4.0
        closes = [f for code, _, f in parse_frames(AMQP_HEADER + data) if code == CLOSE]
        assert closes and "frame_timeout" in str(closes[0]) and "resource-limit-exceeded" in str(closes[0])
        assert round_trip(b.url) < 2.0  # everyone else is served
    finally:
        sock.close()


def test_connections_beyond_max_connections_per_address_are_refused_at_accept(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(max_connections_per_address=3))
    held = [_open(b.url) for _ in range(3)]
    try:
        for s in held:
            s.sendall(AMQP_HEADER)
        time.sleep(0.2)  # accepted and counted
        extra = _open(b.url)
        data, closed = read_available(extra, 2.0)
        assert closed and data == b""  # closed before any byte
        extra.close()
        # another source address is not held back by this one's connections
        other = _open(b.url, source="127.0.0.2")
        other.sendall(AMQP_HEADER)
        data, closed = read_available(other, 1.0)
        assert data.startswith(AMQP_HEADER) and not closed
        other.close()
    finally:
        for s in held:
            s.close()
    # the address's count goes down as its connections close
    time.sleep(0.3)
    again = _open(b.url)
    again.sendall(AMQP_HEADER)
    data, _ = read_available(again, 1.0)
    assert data.startswith(AMQP_HEADER)
    again.close()
