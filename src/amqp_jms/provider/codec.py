"""The provider's one door to the JMS<->AMQP mapping.

Everything that turns a JMS message into transfer bytes and back goes through ``encode`` and
``decode`` here, so the provider never grows a codec of its own: both delegate to
``amqp_jms.mapping``. Raw payloads (``bytes`` or a ``proton.Message``, as frame-level tests send
them) pass straight through ``encode``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..destination import Destination

__all__ = ["decode", "encode"]


@lru_cache(maxsize=256)
def _context(
    consumer_destination: Destination | None,
    queue_prefix: str | None,
    topic_prefix: str | None,
    time_to_live: int,
) -> Any:
    from ..mapping.context import MappingContext

    return MappingContext(
        consumer_destination=consumer_destination,
        queue_prefix=queue_prefix,
        topic_prefix=topic_prefix,
        time_to_live=time_to_live,
    )


_map_encode: Any = None
_map_decode: Any = None


def _bind() -> None:
    global _map_encode, _map_decode
    from ..mapping.inbound import decode as map_decode
    from ..mapping.outbound import encode as map_encode

    _map_encode, _map_decode = map_encode, map_decode


def encode(
    message: Any, *, time_to_live: int = 0, queue_prefix: str | None = None, topic_prefix: str | None = None
) -> bytes:
    """Transfer payload for ``message`` (a JMS message; bytes/proton.Message pass through)."""
    if hasattr(message, "_props"):  # a JMS message: the hot path
        if _map_encode is None:
            _bind()
        ctx = _context(None, queue_prefix, topic_prefix, time_to_live if time_to_live > 0 else 0)
        return _map_encode(message, context=ctx)
    if isinstance(message, bytes | bytearray | memoryview):
        return bytes(message)
    from proton import Message as ProtonMessage

    if isinstance(message, ProtonMessage):
        return bytes(message.encode())
    raise TypeError(f"not a JMS message: {type(message).__name__}")


def decode(
    data: bytes,
    consumer_destination: Destination | None = None,
    *,
    queue_prefix: str | None = None,
    topic_prefix: str | None = None,
    body: bool = True,
) -> Any:
    """The JMS message for transfer payload ``data`` (``body=False``: headers and properties
    only, see :func:`amqp_jms.mapping.decode`)."""
    if _map_decode is None:
        _bind()
    return _map_decode(data, context=_context(consumer_destination, queue_prefix, topic_prefix, 0), body=body)
