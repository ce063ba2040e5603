"""``max_value_depth`` applies to a frame's own fields too (issue 26): an Open whose properties
nest 5,000 levels deep was accepted. It is refused before proton decodes it: Close with
``amqp:decode-error`` naming the limit, and everyone else is served."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from hostile_helpers import read_until, round_trip
from test_broker_peer import AMQP_HEADER, ATTACH, BEGIN, CLOSE, OPEN, frame

from amqp_jms.types import Described, Symbol, UByte, UInt, ULong


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def _deep_open(depth: int) -> bytes:
    """An Open frame whose properties hold a list nested ``depth`` deep, encoded by hand (the
    project's encoder recurses, as a decoder would)."""
    value = b"\xa1\x06bottom"
    for _ in range(depth):
        value = b"\xd0" + (len(value) + 4).to_bytes(4, "big") + b"\x00\x00\x00\x01" + value
    props_body = b"\xa3\x04deep" + value
    props = b"\xd1" + (len(props_body) + 4).to_bytes(4, "big") + b"\x00\x00\x00\x02" + props_body
    items = b"\xa1\x04deep" + b"\x40" * 8 + props
    body = b"\x00\x53\x10\xd0" + (len(items) + 4).to_bytes(4, "big") + b"\x00\x00\x00\x0a" + items
    return (len(body) + 8).to_bytes(4, "big") + b"\x02\x00\x00\x00" + body


def _close_error(frames: list[tuple[int, int, list[Any]]]) -> str:
    close = next(f for code, _, f in frames if code == CLOSE)
    return f"{close[0].value[0]}: {close[0].value[1]}"


def _socket(url: str) -> socket.socket:
    host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


@pytest.mark.parametrize("depth", [150, 5000])
def test_an_open_nested_past_max_value_depth_is_refused(broker: Any, depth: int) -> None:
    sock = _socket(broker.url)
    try:
        sock.sendall(AMQP_HEADER + _deep_open(depth))
        error = _close_error(read_until(sock, CLOSE))
        assert error.startswith("amqp:decode-error") and "limit max_value_depth" in error
    finally:
        sock.close()
    assert round_trip(broker.url) < 2.0


def test_an_attach_filter_nested_past_max_value_depth_is_refused(broker: Any) -> None:
    sock = _socket(broker.url)
    try:
        sock.sendall(AMQP_HEADER + frame(OPEN, ["deep"]) + frame(BEGIN, [None, UInt(0), UInt(64), UInt(64)]))
        read_until(sock, BEGIN)
        nulls: list[Any] = [None] * 6
        source = Described(ULong(0x28), ["q", *nulls, {Symbol("f"): _nested(300)}])
        target = Described(ULong(0x29), [])
        sock.sendall(frame(ATTACH, ["deep", UInt(0), True, UByte(0), UByte(0), source, target]))
        error = _close_error(read_until(sock, CLOSE))
        assert error.startswith("amqp:decode-error") and "100 levels" in error
    finally:
        sock.close()


def test_fields_within_the_limit_are_accepted(broker: Any) -> None:
    sock = _socket(broker.url)
    try:
        props = {Symbol("fine"): _nested(50)}
        nulls: list[Any] = [None] * 8
        sock.sendall(AMQP_HEADER + frame(OPEN, ["fine", *nulls, props]))
        frames = read_until(sock, OPEN)
        assert not any(code == CLOSE for code, _, _ in frames)
    finally:
        sock.close()
