"""Unfinished large transfers (issue 26): what they hold is capped per connection and in total,
one that stops progressing is cut off, and their spool files sit where an operator sees them.

Raw frames: a sender that starts a multi-frame transfer (``more=true``) and never finishes it,
as a broken or hostile client does."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from hostile_helpers import read_until, round_trip
from test_broker_peer import AMQP_HEADER, ATTACH, BEGIN, DETACH, FLOW, OPEN, TRANSFER, frame

from amqp_jms.broker.limits import BrokerLimits, MiB
from amqp_jms.types import Described, UByte, UInt, ULong

PIECE = 60_000  # payload per transfer frame (under the broker's 64 KiB max-frame-size)


def _sender(url: str, address: str) -> socket.socket:
    host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.sendall(
        AMQP_HEADER
        + frame(OPEN, ["unfinished"])
        + frame(BEGIN, [None, UInt(0), UInt(1 << 20), UInt(1 << 20)])
        + frame(ATTACH, ["unfinished", UInt(0), False, UByte(0), UByte(0),
                         Described(ULong(0x28), []), Described(ULong(0x29), [address])])
    )
    read_until(sock, FLOW)
    return sock


def _start_transfer(sock: socket.socket, size: int) -> None:
    """Send ``size`` bytes of one delivery, all with more=true: it never finishes."""
    sent, first = 0, True
    body = b"\x00\x53\x75\xb0" + (1 << 30).to_bytes(4, "big")  # a data section "of 1 GiB"
    while sent < size:
        payload = (body if first else b"") + b"x" * PIECE
        # handle, delivery-id, tag, format, settled, more (the id and tag only on the first)
        more: list[Any] = [UInt(0), None, None, None, None, True]
        fields = [UInt(0), UInt(0), b"t", UInt(0), False, True] if first else more
        sock.sendall(frame(TRANSFER, fields, payload=payload))
        sent += len(payload)
        first = False


def _detach_error(sock: socket.socket, timeout: float = 10.0) -> str:
    frames = read_until(sock, DETACH, timeout=timeout)
    detach = next(f for code, _, f in frames if code == DETACH)
    return f"{detach[2].value[0]}: {detach[2].value[1]}"


def _spool_files(spill: Path) -> list[Path]:
    return sorted(spill.glob("incoming-*.part"))


def test_unfinished_transfers_spool_to_named_files_under_the_data_directory(
    broker_factory: Any, tmp_path: Path
) -> None:
    b = broker_factory(data_dir=tmp_path, limits=BrokerLimits(large_message_threshold=256 * 1024))
    sock = _sender(b.url, "big")
    try:
        _start_transfer(sock, 3 * MiB)
        spill = tmp_path / "spill"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and sum(p.stat().st_size for p in _spool_files(spill)) < 2 * MiB:
            time.sleep(0.05)
        files = _spool_files(spill)
        assert len(files) == 1 and files[0].stat().st_size >= 2 * MiB  # `du` sees it
    finally:
        sock.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _spool_files(tmp_path / "spill"):
        time.sleep(0.05)
    assert _spool_files(tmp_path / "spill") == []  # the connection went: so did its bytes


def test_a_connection_past_max_spool_per_connection_has_its_link_detached(
    broker_factory: Any, tmp_path: Path
) -> None:
    limits = BrokerLimits(large_message_threshold=256 * 1024, max_spool_per_connection=1 * MiB)
    b = broker_factory(data_dir=tmp_path, limits=limits)
    sock = _sender(b.url, "big")
    try:
        _start_transfer(sock, 2 * MiB)
        error = _detach_error(sock)
        assert error.startswith("amqp:resource-limit-exceeded")
        assert "max_spool_per_connection = 1048576" in error
        assert round_trip(b.url) < 2.0
    finally:
        sock.close()
    assert _spool_files(tmp_path / "spill") == []


def test_unfinished_transfers_past_max_spool_total_are_refused(broker_factory: Any, tmp_path: Path) -> None:
    limits = BrokerLimits(large_message_threshold=256 * 1024, max_spool_total=1 * MiB)
    b = broker_factory(data_dir=tmp_path, limits=limits)
    first, second = _sender(b.url, "a"), _sender(b.url, "b")
    try:
        _start_transfer(first, 700_000)
        time.sleep(0.5)  # taken in
        _start_transfer(second, 700_000)
        error = _detach_error(second)
        assert "max_spool_total = 1048576" in error
    finally:
        first.close()
        second.close()


def test_a_transfer_that_stops_progressing_is_cut_off_at_transfer_timeout(
    broker_factory: Any, tmp_path: Path
) -> None:
    limits = BrokerLimits(large_message_threshold=256 * 1024, transfer_timeout=1.0)
    b = broker_factory(data_dir=tmp_path, limits=limits)
    sock = _sender(b.url, "stalled")
    try:
        _start_transfer(sock, 600_000)
        started = time.monotonic()
        error = _detach_error(sock)
        assert time.monotonic() - started < 5
        assert error.startswith("amqp:resource-limit-exceeded") and "transfer_timeout" in error
        assert _spool_files(tmp_path / "spill") == []
    finally:
        sock.close()
