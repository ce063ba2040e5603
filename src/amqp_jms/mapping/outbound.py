"""JMS message -> AMQP payload bytes (3.2, 4, 5.1, 6.1), as the producer transfers it.

Built straight into bytes with the codec's section builders: the header, the message
annotations (type, destination and reply-to bytes, delivery time, app-correlation-id, and any
annotations a received message carried in ``_extra``), the properties, the application
properties (every property except the ones the mapping moves into AMQP fields), and the body.
Every field has the AMQP type Qpid JMS gives it (``x-opt-jms-msg-type``/``-dest``/``-reply-to``
byte, ``x-opt-delivery-time`` long, ``ttl``/``group-sequence`` uint, ``priority`` ubyte,
``creation-time``/``absolute-expiry-time`` timestamp, ``user-id`` binary, ``content-type``
symbol): peers such as ActiveMQ cast by type.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from ..destination import Destination
from ..exceptions import MessageFormatException
from ..message import Message, MessageData
from ..message._data import BodyKind, message_class, view
from ..types import Symbol, UByte, UInt
from .body import MSG_TYPE, OCTET_STREAM, encode_body
from .codec._encode import (
    _ENCODERS,
    _STRINGS,
    _encode_str,
    _fallback,
    compound,
    encode_map_body,
    encode_str,
    encode_symbol,
    encode_value,
)
from .codec.sections import _list_of
from .codec.sections import encode_plain as _encode_plain
from .context import MappingContext, resolve_context
from .destinations import _BYTES as _DEST_BYTES
from .destinations import (
    JMS_DEST,
    JMS_REPLY_TO,
    LEGACY_REPLY_TYPE,
    LEGACY_TO_TYPE,
    address_of,
    type_byte,
)
from .ids import to_amqp_correlation_id, to_amqp_id

__all__ = ["APP_CORRELATION_ID", "DELIVERY_TIME", "MAPPED_PROPERTIES", "encode"]

APP_CORRELATION_ID = Symbol("x-opt-app-correlation-id")
DELIVERY_TIME = Symbol("x-opt-delivery-time")
#: The early draft's JMSType annotation (read, never sent).
LEGACY_JMS_TYPE = Symbol("x-opt-jms-type")
#: The key under ``MessageData.extra`` holding received message annotations the mapping does not
#: interpret; they are sent again with the message.
EXTRA_ANNOTATIONS = "message_annotations"

TTL = "JMS_AMQP_TTL"
FIRST_ACQUIRER = "JMS_AMQP_FIRST_ACQUIRER"
CONTENT_TYPE = "JMS_AMQP_CONTENT_TYPE"
CONTENT_ENCODING = "JMS_AMQP_CONTENT_ENCODING"
REPLY_TO_GROUP_ID = "JMS_AMQP_REPLY_TO_GROUP_ID"
USER_ID = "JMSXUserID"
GROUP_ID = "JMSXGroupID"
GROUP_SEQ = "JMSXGroupSeq"
DELIVERY_COUNT = "JMSXDeliveryCount"
#: Properties that travel in AMQP fields instead of application-properties.
MAPPED_PROPERTIES = _MAPPED = frozenset(
    {TTL, FIRST_ACQUIRER, CONTENT_TYPE, CONTENT_ENCODING, REPLY_TO_GROUP_ID, USER_ID, GROUP_ID,
     GROUP_SEQ, DELIVERY_COUNT}
)  # fmt: skip

_MAX_TTL = 2**32 - 1
_HEADER = b"\x00\x53\x70"
_MA = b"\x00\x53\x72"
_PROPS = b"\x00\x53\x73"
_AP = b"\x00\x53\x74"
_DURABLE_HEADER = _HEADER + b"\xc0\x02\x01\x41"
_TRUE = b"\x41"

_MA_ENTRY: dict[tuple[Symbol, int], bytes] = {
    (key, v): encode_symbol(key) + bytes((0x51, v))
    for key in (MSG_TYPE, JMS_DEST, JMS_REPLY_TO)
    for v in range(6)
}
_MSG_TYPE_ENTRY = [_MA_ENTRY[MSG_TYPE, v] for v in range(6)]
_DEST_ENTRY = [_MA_ENTRY[JMS_DEST, v] for v in range(4)]
_REPLY_TO_ENTRY = [_MA_ENTRY[JMS_REPLY_TO, v] for v in range(4)]
_APP_CORRELATION = encode_symbol(APP_CORRELATION_ID) + _TRUE
_NULL = b"\x40"
_pack_q = struct.Struct(">Bq").pack
_DELIVERY_TIME_KEY = encode_symbol(DELIVERY_TIME)


def _prop_str(props: Mapping[str, Any], name: str) -> str | None:
    v = props.get(name)
    if v is None or isinstance(v, str):
        return v
    raise MessageFormatException(f"{name} must be a String property, not {type(v).__name__}")


def _ttl(props: Mapping[str, Any] | None, ctx: MappingContext) -> int | None:
    if props and TTL in props:
        v = props[TTL]
        if type(v) is bool or not isinstance(v, int) or not 0 <= v <= _MAX_TTL:
            raise MessageFormatException(f"{TTL} must be a long from 0 to 2^32-1, not {v!r}")
        return int(v) or None
    ttl = ctx.time_to_live
    return ttl if 0 < ttl <= _MAX_TTL else None


def _header(delivery_mode: int, priority: int, props: Mapping[str, Any] | None, ctx: MappingContext) -> bytes:
    durable = delivery_mode == 2
    ttl = _ttl(props, ctx) if props or ctx.time_to_live else None
    first = props.get(FIRST_ACQUIRER) is True if props else False
    if priority == 4 and ttl is None and not first:
        return _DURABLE_HEADER if durable else b""
    key = (durable, priority, ttl, first)
    out = _HEADERS.get(key)
    if out is None:
        out = _HEADER + _list_of(
            [
                True if durable else None,
                None if priority == 4 else UByte(priority),
                None if ttl is None else UInt(ttl),
                True if first else None,
            ]
        )
        if len(_HEADERS) >= 1024:
            _HEADERS.clear()
        _HEADERS[key] = out
    return out


#: Producers send with the same few header settings: their encodings, by value.
_HEADERS: dict[tuple[bool, int, int | None, bool], bytes] = {}


def encode(message: Message | MessageData, *, context: MappingContext | None = None) -> bytes:
    """The AMQP encoding of ``message`` exactly as the producer transfers it: a send's frozen
    ``MessageData``, or a JMS ``Message`` (encoded as it is now)."""
    if type(message) is not MessageData:
        if not isinstance(message, Message):
            raise TypeError(f"encode needs a JMS Message, not {type(message).__name__}")
        message = view(message)  # encoded at once: no copy needed
    ctx = resolve_context(context)
    try:
        return _encode(message, ctx)
    except MessageFormatException:
        raise
    except (ValueError, TypeError, OverflowError, UnicodeError) as e:
        raise MessageFormatException(f"cannot encode {message_class(message.kind).jms_type}: {e}") from None


_MA_SECTIONS: dict[tuple[int, int, int, bool], bytes] = {}


def _annotations(
    key: tuple[int, int, int, bool], delivery_time: int, extra: Mapping[str, Any] | None
) -> bytes:
    """The message-annotations section: type, destination and reply-to bytes, app-correlation-id,
    delivery time, and annotations a received message carried (``_extra``)."""
    code, dest, reply_to, app_specific = key
    ma = [_MSG_TYPE_ENTRY[code]]
    if dest >= 0:
        ma.append(_DEST_ENTRY[dest])
    if reply_to >= 0:
        ma.append(_REPLY_TO_ENTRY[reply_to])
    if app_specific:
        ma.append(_APP_CORRELATION)
    plain = True
    if delivery_time:
        # a long, as Qpid JMS sends it: ActiveMQ casts the annotation to a number and stores a
        # message whose delivery time is a timestamp raw (no delay, properties unread)
        ma.append(_DELIVERY_TIME_KEY + _pack_q(0x81, delivery_time))
        plain = False
    count = 2 * len(ma)
    if extra is not None and extra.get(EXTRA_ANNOTATIONS):
        more = {k: v for k, v in extra[EXTRA_ANNOTATIONS].items() if k not in _SET_BY_US}
        if more:
            body_more, n = encode_map_body(more)
            ma.append(body_more)
            count += n
            plain = False
    section = _MA + compound(0xC1, b"".join(ma), count)
    if plain:
        _MA_SECTIONS[key] = section  # at most 6 * 5 * 5 * 2 keys
    return section


_ADDRESSES: dict[tuple[type, str, str | None, str | None], bytes] = {}


def _address(d: Destination, ctx: MappingContext) -> bytes:
    """The encoded ``to``/``reply-to`` string (cached: producers send to the same few)."""
    key = (type(d), d._name, ctx.queue_prefix, ctx.topic_prefix)
    out = _ADDRESSES.get(key)
    if out is None:
        out = encode_str(address_of(d, ctx))
        if len(_ADDRESSES) >= 1024:
            _ADDRESSES.clear()
        _ADDRESSES[key] = out
    return out


def _message_id(value: str) -> bytes:
    if value.startswith("ID:") and not value.startswith("ID:AMQP_"):
        return _encode_str(value)  # the usual JMSMessageID: the string as it is
    return _id(to_amqp_id(value))


def _id(value: Any) -> bytes:
    # ids are unique per message: not worth the string-encoding cache
    return _encode_str(value) if type(value) is str else encode_value(value)


#: A producer's plain messages (no properties, no correlation, reply-to, subject or expiry, not
#: delayed, a usual JMSMessageID and a timestamp) differ only in message-id, creation-time and
#: body. Their shape's fixed bytes, made by ``_encode``'s full path the first time: the header
#: and message-annotations sections, and the properties fields between message-id and
#: creation-time. Keyed by the destination's and context's identity (checked, with the content
#: type the body gives: a key's objects may be gone and their ids reused), kind, delivery mode
#: and priority.
_SHAPES: dict[tuple[int, int, int, int, int],
              tuple[object, object, Symbol | None, bytes, bytes]] = {}  # (compared by identity)
_PLAIN_FIELDS = 10  # message-id .. creation-time: none trailing null
#: the kinds whose plain messages the C accelerator assembles (``sections.encode_plain``), with
#: the content type their shape has (``encode_body``'s)
_PLAIN_C_KINDS: dict[int, Symbol | None] = {int(BodyKind.TEXT): None, int(BodyKind.BYTES): OCTET_STREAM}
_NOT_PLAIN_C = object()


def _encode(message: MessageData, ctx: MappingContext) -> bytes:
    # one unpacking instead of a lookup per field (this runs for every message sent)
    (kind, body_value, props, message_id, timestamp, correlation_id, reply_to, dest, delivery_mode,
     _redelivered, subject, expiration, delivery_time, priority, extra) = message
    code = int(kind)  # a plain int: it keys the section caches (an enum hashes slowly)
    plain = (dest is not None and not props and extra is None and correlation_id is None
             and reply_to is None and subject is None and not expiration and timestamp
             and (not delivery_time or delivery_time == timestamp) and type(message_id) is str
             and message_id.startswith("ID:") and not message_id.startswith("ID:AMQP_"))
    shape = None
    if plain:
        shape_key = (code, id(dest), id(ctx), delivery_mode, priority)
        shape = _SHAPES.get(shape_key)
        if shape is not None and (shape[0] is not dest or shape[1] is not ctx):
            shape = None  # (a key whose objects are gone, their ids reused)
        if (shape is not None and _encode_plain is not None
                and shape[2] is _PLAIN_C_KINDS.get(code, _NOT_PLAIN_C)):
            # the same bytes assembled in C (a text or bytes body); None: the path below
            fast = _encode_plain(shape[3], message_id, shape[4], timestamp, code, body_value)  # type: ignore[arg-type]
            if fast is not None:
                return fast
    body, content_type = encode_body(code, body_value)
    if shape is not None and shape[2] is content_type:
        props_body = _encode_str(message_id) + shape[4] + _pack_q(0x83, timestamp)  # type: ignore[arg-type]
        return b"".join((shape[3], _PROPS, compound(0xC0, props_body, _PLAIN_FIELDS), body))

    # message annotations (the usual combinations come from a cache of whole sections)
    app_specific = False
    if correlation_id is not None:
        if type(correlation_id) is str and correlation_id.startswith("ID:"):
            if correlation_id.startswith("ID:AMQP_"):
                correlation_id = to_amqp_id(correlation_id, "JMSCorrelationID")
        else:
            correlation_id, app_specific = to_amqp_correlation_id(correlation_id)
    delayed = bool(delivery_time) and delivery_time != timestamp
    key = (
        code,
        -1 if dest is None else _DEST_BYTES.get(type(dest), -1),
        -1 if reply_to is None else _DEST_BYTES.get(type(reply_to), -1),
        app_specific,
    )
    if (key[1] == -1 and dest is not None) or (key[2] == -1 and reply_to is not None):  # subclasses
        key = (code, -1 if dest is None else type_byte(dest), -1 if reply_to is None else type_byte(reply_to),
               app_specific)  # fmt: skip
    ma_section = _MA_SECTIONS.get(key)
    if ma_section is None or delayed or (extra is not None and extra.get(EXTRA_ANNOTATIONS)):
        ma_section = _annotations(key, delivery_time if delayed else 0, extra)

    # properties, each field encoded as it is known to be typed
    fields = [
        _NULL if message_id is None else _message_id(message_id),
        _NULL,
        _NULL if dest is None else _address(dest, ctx),
        _NULL if subject is None else encode_str(subject),
        _NULL if reply_to is None else _address(reply_to, ctx),
        _NULL if correlation_id is None else _id(correlation_id),
        _NULL if content_type is None else encode_symbol(content_type),
        _NULL,
        _pack_q(0x83, expiration) if expiration else _NULL,
        _pack_q(0x83, timestamp) if timestamp else _NULL,
    ]
    vendor = bool(props) and not _MAPPED.isdisjoint(props)
    if vendor:
        _vendor_fields(props, fields)
    while fields and fields[-1] is _NULL:
        fields.pop()
    props_section = _PROPS + compound(0xC0, b"".join(fields), len(fields)) if fields else b""
    out = [_header(delivery_mode, priority, props if vendor else None, ctx), ma_section, props_section]
    if plain and len(fields) == _PLAIN_FIELDS:
        if len(_SHAPES) >= 1024:
            _SHAPES.clear()
        _SHAPES[shape_key] = (dest, ctx, content_type, out[0] + ma_section, b"".join(fields[1:-1]))

    # application properties
    if props:
        app = [k for k in props if k not in _MAPPED] if vendor else props
        if app:
            enc = _ENCODERS
            strings = _STRINGS
            parts: list[bytes] = []
            append = parts.append
            for k in app:
                v = props[k]
                kb = strings.get(k)
                append(kb if kb is not None else encode_str(k))
                f = enc.get(type(v))
                append(f(v) if f is not None else _fallback(v))
            out.append(_AP + compound(0xC1, b"".join(parts), 2 * len(app)))
    out.append(body)
    return b"".join(out)


def _vendor_fields(props: Mapping[str, Any], fields: list[bytes]) -> None:
    """Fill the properties fields that come from JMSX / JMS_AMQP_* properties."""
    ct = _prop_str(props, CONTENT_TYPE)
    if ct is not None:
        fields[6] = encode_symbol(ct)
    ce = _prop_str(props, CONTENT_ENCODING)
    if ce is not None:
        fields[7] = encode_symbol(ce)
    user_id = _prop_str(props, USER_ID)
    if user_id is not None:
        fields[1] = encode_value(user_id.encode())
    fields.extend((_NULL, _NULL, _NULL))
    group_id = _prop_str(props, GROUP_ID)
    if group_id is not None:
        fields[10] = encode_str(group_id)
    group_seq = props.get(GROUP_SEQ)
    if group_seq is not None:
        if type(group_seq) is bool or not isinstance(group_seq, int) or not -(2**31) <= group_seq < 2**32:
            raise MessageFormatException(f"{GROUP_SEQ} must be an int, not {group_seq!r}")
        fields[11] = encode_value(UInt(group_seq & 0xFFFFFFFF))
    reply_group = _prop_str(props, REPLY_TO_GROUP_ID)
    if reply_group is not None:
        fields[12] = encode_str(reply_group)


#: Annotations this module writes itself, or that must never be sent (the legacy ones).
_SET_BY_US = frozenset(
    {MSG_TYPE, JMS_DEST, JMS_REPLY_TO, APP_CORRELATION_ID, DELIVERY_TIME, LEGACY_TO_TYPE,
     LEGACY_REPLY_TYPE, LEGACY_JMS_TYPE}
)  # fmt: skip
