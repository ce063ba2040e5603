"""``MessageData``: a message's data as one typed, immutable record — what a send hands on.

``Message`` is the JMS face an application holds and may change at any time; what the producer
passes below the JMS layer is a snapshot of it taken during ``send`` (``snapshot``). Everything
that keeps a message past ``send`` — the failover provider's queue of sends owed across a
reconnect, a send re-made after a lost outcome — keeps this record, never the application's
object, so a message changed or re-sent the moment ``send`` returns cannot change what was sent
(JMS 2.0 §7.3; Qpid JMS copies such sends). The mapping encodes from it, and mypy checks every
field it reads.

The record is a ``NamedTuple``: building one costs about as much as a call, it cannot be
assigned to, and its containers (properties, a map or stream body) are copies nobody else
holds. A changed record is a new one (``data._replace(destination=...)``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..destination import Destination

if TYPE_CHECKING:
    from ._base import Message

__all__ = [
    "BodyKind",
    "MessageData",
    "message_class",
    "receive",
    "received",
    "record",
    "restore",
    "snapshot",
    "view",
]


class BodyKind(enum.IntEnum):
    """Which of the six JMS message types the data is (the values are the mapping's
    ``x-opt-jms-msg-type`` bytes, so the mapping writes the kind as it is)."""

    MESSAGE = 0
    OBJECT = 1
    MAP = 2
    BYTES = 3
    STREAM = 4
    TEXT = 5


class MessageData(NamedTuple):
    """A JMS message's headers, typed properties and body, frozen.

    ``body`` by ``kind``: TEXT ``str | None``; BYTES ``bytes``; MAP ``dict[str, typed value]``;
    STREAM ``list[typed value]``; OBJECT an AMQP-typed value or a ``JavaSerializedObject``;
    MESSAGE ``None``. Property and body values are the typed values of ``amqp_jms.types``.
    ``extra`` is what the mapping keeps that the JMS model has no place for (``Message._extra``).
    """

    kind: BodyKind
    body: Any
    properties: Mapping[str, Any]
    message_id: str | None
    timestamp: int
    correlation_id: str | bytes | None
    reply_to: Destination | None
    destination: Destination | None
    delivery_mode: int
    redelivered: bool
    type: str | None
    expiration: int
    delivery_time: int
    priority: int
    extra: Mapping[str, Any] | None


def snapshot(message: Message) -> MessageData:
    """The data of ``message`` as it is now: later changes to ``message`` do not reach it."""
    extra = message._extra
    return _record(message, message._body_snapshot(), dict(message._props),
                   None if extra is None else dict(extra))


def view(message: Message) -> MessageData:
    """The data of ``message`` without copying its containers: for a caller that uses the record
    at once and lets it go (``amqp_jms.mapping.encode`` of a Message), never for one that keeps
    it (a send keeps a ``snapshot``)."""
    return _record(message, message._body_view(), message._props, message._extra)


def _record(message: Message, body: Any, props: Mapping[str, Any], extra: Mapping[str, Any] | None
            ) -> MessageData:
    return _new(MessageData, (
        message._body_kind,
        body,
        props,
        message._message_id,
        message._timestamp,
        message._correlation_id,
        message._reply_to,
        message._destination,
        message._delivery_mode,
        message._redelivered,
        message._type,
        message._expiration,
        message._delivery_time,
        message._priority,
        extra,
    ))


#: builds the record without NamedTuple's keyword-handling ``__new__`` (a send takes one each)
_new = tuple.__new__


def restore(data: MessageData) -> Message:
    """A new, writable message of the data's type holding a copy of it (what ``received``
    and a tool that turns a record back into a JMS message use)."""
    msg = message_class(data.kind)._blank()
    msg._props = dict(data.properties)
    msg._extra = None if data.extra is None else dict(data.extra)
    msg._message_id = data.message_id
    msg._timestamp = data.timestamp
    msg._correlation_id = data.correlation_id
    msg._reply_to = data.reply_to
    msg._destination = data.destination
    msg._delivery_mode = data.delivery_mode
    msg._redelivered = data.redelivered
    msg._type = data.type
    msg._expiration = data.expiration
    msg._delivery_time = data.delivery_time
    msg._priority = data.priority
    msg._restore_body(data.body)
    return msg


def record(
    kind: BodyKind,
    body: Any = None,
    properties: Mapping[str, Any] | None = None,
    *,
    message_id: str | None = None,
    timestamp: int = 0,
    correlation_id: str | bytes | None = None,
    reply_to: Destination | None = None,
    destination: Destination | None = None,
    delivery_mode: int = 2,
    redelivered: bool = False,
    type: str | None = None,
    expiration: int = 0,
    delivery_time: int = 0,
    priority: int = 4,
    extra: Mapping[str, Any] | None = None,
) -> MessageData:
    """A record with the JMS defaults for every header not given (PERSISTENT, priority 4, no
    ids, no expiry): what a decoder or a test builds a message's data with."""
    return _new(MessageData, (
        kind, body, {} if properties is None else properties, message_id, timestamp,
        correlation_id, reply_to, destination, delivery_mode, redelivered, type, expiration,
        delivery_time, priority, extra,
    ))


def received(data: MessageData) -> Message:
    """The read-only message a consumer would receive holding a copy of ``data`` (a tool or a
    test that turns a record into a delivered message; a decoder uses ``receive``)."""
    msg = restore(data)
    msg._mark_received()
    return msg


def receive(
    kind: BodyKind,
    body: Any,
    properties: dict[str, Any],
    message_id: str | None,
    timestamp: int,
    correlation_id: str | bytes | None,
    reply_to: Destination | None,
    destination: Destination | None,
    delivery_mode: int,
    redelivered: bool,
    type: str | None,
    expiration: int,
    delivery_time: int,
    priority: int,
    extra: dict[str, Any] | None,
) -> Message:
    """The read-only message a consumer receives with these fields (``MessageData``'s, in its
    order): a decoder's one way to make a message. It takes the containers (``properties``, a
    map or stream body, ``extra``) as they are, uncopied: they must be the decoder's own.
    Properties and body are read-only until ``clear_properties()`` / ``clear_body()``.

    The fields are parameters rather than a ``MessageData`` so that decoding, tens of thousands
    of messages a second, builds no intermediate record; mypy checks each one all the same."""
    cls = _classes[kind] if _classes else message_class(kind)
    msg = cls.__new__(cls)
    msg._props = properties
    msg._props_ro = True
    msg._body_ro = True
    msg._ack_callback = None
    msg._extra = extra
    msg._message_id = message_id
    msg._timestamp = timestamp
    msg._correlation_id = correlation_id
    msg._reply_to = reply_to
    msg._destination = destination
    msg._delivery_mode = delivery_mode
    msg._redelivered = redelivered
    msg._type = type
    msg._expiration = expiration
    msg._delivery_time = delivery_time
    msg._priority = priority
    msg._validate_names = True
    msg._adopt_received_body(body)
    return msg


#: the class of each kind, by ``BodyKind`` value (filled on first use: the classes import this)
_classes: list[type[Message]] = []


def message_class(kind: BodyKind) -> type[Message]:
    """The JMS message class of a kind."""
    if _classes:
        return _classes[kind]
    from ._bytes import BytesMessage
    from ._map import MapMessage
    from ._object import ObjectMessage
    from ._stream import StreamMessage
    from ._text import TextMessage

    if not _classes:
        from ._base import Message

        _classes.extend([Message, ObjectMessage, MapMessage, BytesMessage, StreamMessage, TextMessage])
    if kind == BodyKind.TEXT:
        return TextMessage
    if kind == BodyKind.BYTES:
        return BytesMessage
    if kind == BodyKind.MAP:
        return MapMessage
    if kind == BodyKind.STREAM:
        return StreamMessage
    if kind == BodyKind.OBJECT:
        return ObjectMessage
    from ._base import Message

    return Message
