"""The provider's one door to the JMS<->AMQP mapping.

Everything that turns a JMS message into transfer bytes and back goes through ``encode`` and
``decode``, so the provider never grows a codec of its own: these delegate to
``amqp_jms.mapping`` once it provides ``encode``/``decode``; until then (and for raw payloads in
frame-level tests) a ``proton.Message`` or ``bytes`` passes straight through.
"""

from __future__ import annotations

from typing import Any

from ..destination import Destination

__all__ = ["MappingUnavailable", "decode", "encode"]


class MappingUnavailable(RuntimeError):
    pass


def _mapping() -> Any:
    try:
        from .. import mapping
    except ImportError:  # pragma: no cover - only while the mapping package is being written
        return None
    return mapping if hasattr(mapping, "encode") and hasattr(mapping, "decode") else None


def encode(message: Any, destination: Destination | None = None) -> bytes:
    """Transfer payload for ``message`` (a JMS message; bytes/proton.Message pass through)."""
    if isinstance(message, bytes | bytearray | memoryview):
        return bytes(message)
    from proton import Message

    if isinstance(message, Message):
        return bytes(message.encode())
    m = _mapping()
    if m is None:
        raise MappingUnavailable("amqp_jms.mapping.encode is not available yet")
    return bytes(m.encode(message))


def decode(data: bytes, consumer_destination: Destination | None = None) -> Any:
    """The JMS message for transfer payload ``data`` (a proton.Message without the mapping)."""
    m = _mapping()
    if m is None:
        from proton import Message

        msg = Message()
        msg.decode(data)
        return msg
    return m.decode(data, consumer_destination)
