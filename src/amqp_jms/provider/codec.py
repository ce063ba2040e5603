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


def encode(
    message: Any, *, time_to_live: int = 0, queue_prefix: str | None = None, topic_prefix: str | None = None
) -> bytes:
    """Transfer payload for ``message`` (a JMS message; bytes/proton.Message pass through)."""
    if isinstance(message, bytes | bytearray | memoryview):
        return bytes(message)
    from proton import Message as ProtonMessage

    if isinstance(message, ProtonMessage):
        return bytes(message.encode())
    from ..mapping.outbound import encode as map_encode

    ctx = _context(None, queue_prefix, topic_prefix, max(time_to_live, 0))
    return map_encode(message, context=ctx)


def decode(
    data: bytes,
    consumer_destination: Destination | None = None,
    *,
    queue_prefix: str | None = None,
    topic_prefix: str | None = None,
) -> Any:
    """The JMS message for transfer payload ``data``."""
    from ..mapping.inbound import decode as map_decode

    return map_decode(data, context=_context(consumer_destination, queue_prefix, topic_prefix, 0))
