"""Helpers for the broker tests: raw python-qpid-proton peers (no tests here).

Link options for termini the blocking API has no keyword for (capabilities, selectors,
no-local, durable subscriptions, null sources).
"""

from __future__ import annotations

import socket
from typing import Any

from proton import UNDESCRIBED, Array, Data, Described, Terminus, symbol, ulong
from proton.reactor import LinkOption


class Caps(LinkOption):
    """Set capabilities on the source (receivers) or target (senders)."""

    def __init__(self, *caps: str) -> None:
        self.caps = caps

    def apply(self, link: Any) -> None:
        term = link.source if link.is_receiver else link.target
        term.capabilities.put_object(Array(UNDESCRIBED, Data.SYMBOL, *[symbol(c) for c in self.caps]))  # type: ignore[arg-type]


class Selector(LinkOption):
    def __init__(self, text: str, *, no_local: bool = False) -> None:
        self.text = text
        self.no_local = no_local

    def apply(self, link: Any) -> None:
        f: dict[Any, Any] = {}
        if self.text:
            f[symbol("jms-selector")] = Described(ulong(0x0000468C00000004), self.text)
        if self.no_local:
            f[symbol("no-local")] = Described(ulong(0x0000468C00000003), [])
        link.source.filter.put_object(f)


class Durable(LinkOption):
    def apply(self, link: Any) -> None:
        link.source.durability = Terminus.DELIVERIES
        link.source.expiry_policy = Terminus.EXPIRE_NEVER


class NullSource(LinkOption):
    def apply(self, link: Any) -> None:
        link.source.type = Terminus.UNSPECIFIED


class Browse(LinkOption):
    def apply(self, link: Any) -> None:
        link.source.distribution_mode = Terminus.DIST_MODE_COPY


def raw_socket(url: str) -> socket.socket:
    host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


# -- raw AMQP frames (built and read with the project's codec, not proton's) --------------------
AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
OPEN, BEGIN, ATTACH, FLOW, TRANSFER, DISPOSITION, DETACH, END, CLOSE = range(0x10, 0x19)


def frame(performative: int, fields: list[Any], channel: int = 0, payload: bytes = b"") -> bytes:
    """One AMQP frame: the described performative list, then the payload (for transfers)."""
    from amqp_jms.mapping.codec import encode_value
    from amqp_jms.types import Described as TDescribed
    from amqp_jms.types import ULong

    body = encode_value(TDescribed(ULong(performative), fields)) + payload
    return (len(body) + 8).to_bytes(4, "big") + bytes([2, 0]) + channel.to_bytes(2, "big") + body


def parse_frames(data: bytes) -> list[tuple[int, int, list[Any]]]:
    """``(performative code, channel, fields)`` of every frame after the protocol header."""
    from amqp_jms.mapping.codec import decode_value

    assert data.startswith(AMQP_HEADER), data[:16]
    pos, out = len(AMQP_HEADER), []
    while pos + 8 <= len(data):
        size = int.from_bytes(data[pos:pos + 4], "big")
        doff = data[pos + 4] * 4
        channel = int.from_bytes(data[pos + 6:pos + 8], "big")
        if size > doff:  # not an empty (heartbeat) frame
            value, _ = decode_value(data[:pos + size], pos + doff)
            out.append((int(value.descriptor), channel, list(value.value)))
        pos += size
    return out


def read_available(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """Everything the peer writes within ``timeout`` seconds; True if it closed the socket."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        return data, False
    return data, True


def close_error(data: bytes) -> str | None:
    """The error condition of the Close frame in ``data`` (None: no Close, or one without error)."""
    for code, _, fields in parse_frames(data):
        if code == CLOSE:
            err = fields[0] if fields else None
            return str(err.value[0]) if err is not None else None
    raise AssertionError(f"no Close frame in {data!r}")
