"""Destinations as AMQP addresses (5.1, 5.2): the one home of the prefix rule.

Brokers of the ActiveMQ family (ActiveMQ 5/6, Artemis with ``anycastPrefix``/``multicastPrefix``)
decide a node's type by its address prefix (``queue://x``, ``topic://x``) and ignore terminus
capabilities; they offer the prefixes as the Open properties ``queue-prefix``/``topic-prefix``.
As Qpid JMS does, every address the client writes (link source/target, ``to``, ``reply-to``)
carries the prefix of its kind (:func:`address_for`), and every address it reads loses it
(:func:`destination_from`), so ``JMSDestination`` reads ``Topic("t")`` again. Temporary
destinations are never prefixed: their name is the address the broker gave them. A name that
already starts with the prefix is not prefixed again.

Sent: the address and ``x-opt-jms-dest`` / ``x-opt-jms-reply-to`` as a byte (0 queue, 1 topic,
2 temporary queue, 3 temporary topic). Received: that byte, else the legacy ``x-opt-to-type`` /
``x-opt-reply-type`` strings of the early draft (comma-separated ``queue``, ``topic``,
``temporary``), else the kind whose prefix the address carries, else the type of the consumer's
destination, else ``Queue``; the prefix of the resulting type is stripped.
"""

from __future__ import annotations

from typing import Any

from ..destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from ..types import Byte, Symbol
from .context import MappingContext

__all__ = [
    "JMS_DEST",
    "JMS_REPLY_TO",
    "LEGACY_REPLY_TYPE",
    "LEGACY_TO_TYPE",
    "address_for",
    "address_of",
    "destination_from",
    "type_byte",
]

JMS_DEST = Symbol("x-opt-jms-dest")
JMS_REPLY_TO = Symbol("x-opt-jms-reply-to")
LEGACY_TO_TYPE = Symbol("x-opt-to-type")
LEGACY_REPLY_TYPE = Symbol("x-opt-reply-type")

_BY_BYTE: dict[int, type[Destination]] = {0: Queue, 1: Topic, 2: TemporaryQueue, 3: TemporaryTopic}
_BYTES: dict[type, Byte] = {cls: Byte(b) for b, cls in _BY_BYTE.items()}


def type_byte(d: Destination) -> Byte:
    """The ``x-opt-jms-dest`` value for a destination."""
    b = _BYTES.get(type(d))
    if b is not None:
        return b
    if d.is_temporary:
        return _BYTES[TemporaryTopic] if d.is_topic else _BYTES[TemporaryQueue]
    return _BYTES[Topic] if d.is_topic else _BYTES[Queue]


def address_for(d: Destination, queue_prefix: str | None, topic_prefix: str | None) -> str:
    """The AMQP address of ``d``: its name with the prefix of its kind (none for a temporary
    destination, none again when the name already carries it)."""
    name = d._name
    if d.is_temporary:
        return name
    prefix = topic_prefix if d.is_topic else queue_prefix
    if not prefix or name.startswith(prefix):
        return name
    return prefix + name


def address_of(d: Destination, ctx: MappingContext) -> str:
    """The ``to``/``reply-to`` address: :func:`address_for` with the context's prefixes."""
    return address_for(d, ctx.queue_prefix, ctx.topic_prefix)


def _prefixed_type(address: str, ctx: MappingContext) -> type[Destination] | None:
    """The kind whose prefix ``address`` carries (a message without a type annotation)."""
    tp, qp = ctx.topic_prefix, ctx.queue_prefix
    if tp and address.startswith(tp) and not (qp and len(qp) > len(tp) and address.startswith(qp)):
        return Topic
    if qp and address.startswith(qp):
        return Queue
    return None


def _legacy_type(text: Any) -> type[Destination] | None:
    if not isinstance(text, str):
        return None
    attrs = {a.strip().lower() for a in text.split(",")}
    temporary = "temporary" in attrs
    if "queue" in attrs:
        return TemporaryQueue if temporary else Queue
    if "topic" in attrs:
        return TemporaryTopic if temporary else Topic
    return None


def _consumer_type(ctx: MappingContext) -> type[Destination]:
    d = ctx.consumer_destination
    if d is None:
        return Queue
    return _BY_BYTE[int(type_byte(d))]


def destination_from(
    address: str | None,
    annotations: dict[Any, Any] | None,
    key: Symbol,
    legacy_key: Symbol,
    ctx: MappingContext,
) -> Destination | None:
    """The Destination for a received address and the message annotations."""
    if address is None:
        return None
    cls: type[Destination] | None = None
    if annotations:
        b = annotations.get(key)
        if type(b) is Byte:  # the usual case: a byte 0-3
            cls = _BY_BYTE.get(b)
        elif b is not None and type(b) is not bool and isinstance(b, int):
            cls = _BY_BYTE.get(int(b))
        if cls is None:
            cls = _legacy_type(annotations.get(legacy_key))
    if cls is None and (ctx.queue_prefix or ctx.topic_prefix):
        cls = _prefixed_type(address, ctx)
    if cls is None:
        cls = _consumer_type(ctx)
    if cls is Queue:
        prefix = ctx.queue_prefix
    elif cls is Topic:
        prefix = ctx.topic_prefix
    else:
        prefix = None
    cache_key = (cls, address, prefix)
    d = _CACHE.get(cache_key)
    if d is not None:
        return d
    if prefix and address.startswith(prefix) and len(address) > len(prefix):
        address = address[len(prefix) :]
    if not address:
        return None
    d = cls(address)
    if not d.is_temporary:  # temporary ones carry connection state once bound
        if len(_CACHE) >= 1024:
            _CACHE.clear()
        _CACHE[cache_key] = d
    return d


#: Destinations are immutable values, and messages name the same few again and again.
_CACHE: dict[tuple[type, str, str | None], Destination] = {}
