"""A JMS message as a transfer's payload, and back: the provider's one door to the mapping.

Everything that turns a JMS message into transfer bytes and back goes through ``encode`` and
``decode`` here, so the provider never grows a codec of its own: both delegate to
``amqp_jms.mapping`` with a mapping context (the link's destination, the peer's address
prefixes, the producer's time to live) cached per combination. Only JMS messages go through:
frame-level tests that need raw bytes on the wire send them with the scripted peer
(``amqp_jms.testing.peer``) or proton, not through the client.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from ..destination import Destination
from ..mapping.context import MappingContext
from ..mapping.inbound import decode as _map_decode
from ..mapping.outbound import encode as _map_encode
from ..message import MessageData

__all__ = ["decode", "decoder", "encode"]


@lru_cache(maxsize=256)
def _context(
    consumer_destination: Destination | None,
    queue_prefix: str | None,
    topic_prefix: str | None,
    time_to_live: int,
) -> MappingContext:
    return MappingContext(
        consumer_destination=consumer_destination,
        queue_prefix=queue_prefix,
        topic_prefix=topic_prefix,
        time_to_live=time_to_live,
    )


def encode(
    message: MessageData, *, time_to_live: int = 0, queue_prefix: str | None = None,
    topic_prefix: str | None = None,
) -> bytes:
    """Transfer payload for a send's frozen data."""
    ctx = _context(None, queue_prefix, topic_prefix, time_to_live if time_to_live > 0 else 0)
    return _map_encode(message, context=ctx)


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
    return _map_decode(data, context=_context(consumer_destination, queue_prefix, topic_prefix, 0),
                       body=body)


def decoder(
    consumer_destination: Destination | None, *, queue_prefix: str | None = None,
    topic_prefix: str | None = None,
) -> Callable[..., Any]:
    """``decode`` for one consumer's settings, made once: a receiver that keeps it decodes each
    message without the per-call context lookup (hashing the destination and prefixes)."""
    return partial(_map_decode, context=_context(consumer_destination, queue_prefix, topic_prefix, 0))
