"""What the scripted peer (:mod:`amqp_jms.testing.peer`) reads from a client: a frozen record
per performative, as a test's ``check`` callable receives it, and a reader of the raw attach
frames for what proton's engine does not surface (a source's default outcome)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proton import Array, Data, Message

__all__ = ["Attach", "Closing", "Disposition", "Flow", "Open", "Transfer"]


def _syms(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, Array):
        return tuple(str(v) for v in value.elements)
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    return (str(value),)


def _data(d: Data) -> Any:
    d.rewind()
    return d.get_object() if d.next() else None


@dataclass(frozen=True)
class Open:
    container_id: str
    hostname: str | None
    desired_capabilities: tuple[str, ...]
    properties: dict[str, Any]
    user: str | None
    #: the max-frame-size the client's Open asked for
    max_frame_size: int = 0


@dataclass(frozen=True)
class Attach:
    name: str
    role: str  # the client's role: "sender" or "receiver"
    source_address: str | None
    target_address: str | None
    source_capabilities: tuple[str, ...]
    target_capabilities: tuple[str, ...]
    target_is_coordinator: bool
    outcomes: tuple[str, ...]
    filter: dict[str, Any] | None
    snd_settle_mode: int
    rcv_settle_mode: int
    durable: int
    expiry_policy: int
    distribution_mode: int
    dynamic: bool
    #: the source's default outcome as it arrived on the wire, ``(descriptor, fields)``, e.g.
    #: ``(0x27, [True])`` for modified{delivery-failed}: proton's engine does not surface it
    default_outcome: tuple[int, list[Any]] | None = None


@dataclass(frozen=True)
class Flow:
    link_name: str
    credit: int
    drain: bool


@dataclass(frozen=True)
class Transfer:
    link_name: str
    message: Message
    settled: bool
    state: int
    state_data: Any
    tag: str
    #: the message bytes as they arrived: every AMQP type exactly as the client encoded it
    #: (``message`` is proton's reading, which folds some types into Python ones)
    payload: bytes = b""


@dataclass(frozen=True)
class Disposition:
    link_name: str
    tag: str
    state: int
    state_data: Any
    settled: bool
    failed: bool
    undeliverable: bool


@dataclass(frozen=True)
class Closing:
    kind: str  # detach / end / close
    name: str | None
    closed: bool
    condition: str | None


class _AttachSniffer:
    """Reads the attach performatives in a connection's incoming bytes, for what proton's
    engine does not surface (a source's default outcome)."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.default_outcomes: dict[str, tuple[int, list[Any]] | None] = {}

    def feed(self, data: bytes) -> None:
        from ..mapping.codec import decode_value
        from ..types import Described as TypedDescribed

        buf = self._buf
        buf += data
        pos = 0
        while len(buf) - pos >= 8:
            if buf[pos : pos + 4] == b"AMQP":
                pos += 8
                continue
            size = int.from_bytes(buf[pos : pos + 4], "big")
            if size < 8 or len(buf) - pos < size:
                break
            doff = buf[pos + 4] * 4
            if buf[pos + 5] == 0 and size > doff:
                try:
                    value, _ = decode_value(bytes(buf[pos + doff : pos + size]))
                except Exception:
                    value = None
                if isinstance(value, TypedDescribed) and value.descriptor == 0x12 and len(value.value) > 5:
                    source = value.value[5]
                    outcome = None
                    if isinstance(source, TypedDescribed) and len(source.value) > 8:
                        o = source.value[8]
                        if isinstance(o, TypedDescribed) and isinstance(o.descriptor, int):
                            outcome = (int(o.descriptor), list(o.value or []))
                    self.default_outcomes[str(value.value[0])] = outcome
            pos += size
        del buf[:pos]
