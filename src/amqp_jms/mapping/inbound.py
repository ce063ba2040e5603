"""AMQP payload bytes -> the JMS message a consumer receives (3.3, 4, 5.1).

The right message class with its body (see :mod:`.body`), every header set per 3.3 (ids per
:mod:`.ids`, destinations per :mod:`.destinations`, expiration from ``absolute-expiry-time`` or
else ``ttl`` + now, delivery time from ``x-opt-delivery-time`` or else the timestamp, redelivered
and ``JMSXDeliveryCount`` from ``delivery-count``), the application properties with their AMQP
types, the JMSX and ``JMS_AMQP_*`` properties of the mapped fields, and read-only properties
and body. Message annotations the mapping does not interpret are kept in
``MessageData.extra["message_annotations"]`` (sent again if the message is forwarded);
delivery annotations and the footer in ``extra["delivery_annotations"]`` / ``extra["footer"]``.
The decoder gathers the message's ``MessageData`` fields and makes the message with
``message._data.receive`` (no reach into the message's slots).
"""

from __future__ import annotations

import time
from typing import Any

from ..exceptions import MessageFormatException
from ..message import Message
from ..message._data import receive
from ..message._mutf8 import decode_java_utf8
from ..types import Int
from .body import MSG_TYPE, body_of, headers_only_body
from .codec import Sections, decode_sections
from .context import MappingContext, resolve_context
from .destinations import JMS_DEST, JMS_REPLY_TO, LEGACY_REPLY_TYPE, LEGACY_TO_TYPE, destination_from
from .ids import from_amqp_correlation_id, from_amqp_message_id
from .outbound import (
    APP_CORRELATION_ID,
    CONTENT_ENCODING,
    CONTENT_TYPE,
    DELIVERY_COUNT,
    DELIVERY_TIME,
    EXTRA_ANNOTATIONS,
    FIRST_ACQUIRER,
    GROUP_ID,
    GROUP_SEQ,
    LEGACY_JMS_TYPE,
    REPLY_TO_GROUP_ID,
    USER_ID,
)

__all__ = ["decode", "message_from_sections"]

JMS_AMQP_SUBJECT = "JMS_AMQP_SUBJECT"
_KNOWN_ANNOTATIONS = frozenset(
    {MSG_TYPE, JMS_DEST, JMS_REPLY_TO, APP_CORRELATION_ID, DELIVERY_TIME, LEGACY_TO_TYPE,
     LEGACY_REPLY_TYPE, LEGACY_JMS_TYPE}
)  # fmt: skip
_DELIVERY_COUNTS = [Int(n + 1) for n in range(16)]
_PRIORITIES = list(range(10))
_MAX_INT = 2**31 - 1


def decode(
    data: bytes | bytearray | memoryview, *, context: MappingContext | None = None, body: bool = True
) -> Message:
    """The JMS message a consumer receives for this AMQP payload (read-only, headers set).

    ``body=False``: headers and properties only, on a plain :class:`Message` (the body's
    sections are checked for framing, its type annotation vetted, its content not decoded):
    what a receiver that stores the bytes needs to vet a message (expiry, delivery count,
    selector) without paying for a body someone else decodes."""
    return message_from_sections(decode_sections(data, body=body), context=context, body=body)


def message_from_sections(
    s: Sections, *, context: MappingContext | None = None, body: bool = True
) -> Message:
    """As :func:`decode`, for a payload already parsed with ``decode_sections``. The message
    takes ownership of the section values (do not reuse ``s`` afterwards)."""
    ctx = context if type(context) is MappingContext else resolve_context(context)
    ma = s.message_annotations
    if body:
        if not s.body_decoded:
            s.decode_body()
        kind, value = body_of(s, ma)
    else:
        kind, value = headers_only_body(ma)
    ap = s.application_properties
    props: dict[str, Any] = ap if ap is not None else {}

    h = s.header
    priority = 4
    redelivered = False
    if h is None:
        delivery_mode = 1
        props[DELIVERY_COUNT] = _DELIVERY_COUNTS[0]
    else:
        delivery_mode = 2 if h.durable else 1
        priority = h.priority
        priority = _PRIORITIES[priority] if priority <= 9 else 9
        count = h.delivery_count
        if count:
            redelivered = True
            props[DELIVERY_COUNT] = _DELIVERY_COUNTS[count] if count < 15 else Int(min(count + 1, _MAX_INT))
        else:
            props[DELIVERY_COUNT] = _DELIVERY_COUNTS[0]
        if h.first_acquirer:
            props[FIRST_ACQUIRER] = True

    p = s.properties
    ttl = h.ttl if h is not None else None
    message_id: str | None = None
    destination = reply = None
    jms_type: str | None = None
    correlation: str | bytes | None = None
    expiration = timestamp = 0
    if p is not None:
        (amqp_id, user_id, to, subject, reply_to, correlation_id, content_type, content_encoding,
         expiry, creation, group_id, group_seq, reply_group) = p  # fmt: skip
        if amqp_id is not None:
            message_id = from_amqp_message_id(amqp_id)
        if user_id is not None:
            try:
                props[USER_ID] = decode_java_utf8(user_id)
            except ValueError as e:
                raise MessageFormatException(f"properties user-id (JMSXUserID) is not UTF-8: {e}") from None
        if to is not None:
            destination = destination_from(to, ma, JMS_DEST, LEGACY_TO_TYPE, ctx)
        else:
            destination = ctx.consumer_destination
        if reply_to is not None:
            reply = destination_from(reply_to, ma, JMS_REPLY_TO, LEGACY_REPLY_TYPE, ctx)
        jms_type = subject
        if correlation_id is not None:
            app_specific = ma is not None and ma.get(APP_CORRELATION_ID) is True
            correlation = from_amqp_correlation_id(correlation_id, app_specific)
        if content_type is not None:
            props[CONTENT_TYPE] = str(content_type)
        if content_encoding is not None:
            props[CONTENT_ENCODING] = str(content_encoding)
        if expiry is not None:
            expiration = int(expiry)
            ttl = None
        if creation is not None:
            timestamp = int(creation)
        if group_id is not None:
            props[GROUP_ID] = group_id
        if group_seq is not None:
            seq = int(group_seq)
            props[GROUP_SEQ] = Int(seq - 2**32 if seq > _MAX_INT else seq)
        if reply_group is not None:
            props[REPLY_TO_GROUP_ID] = reply_group
    else:
        destination = ctx.consumer_destination
    if ttl:
        now = ctx.now_ms if ctx.now_ms is not None else int(time.time() * 1000)
        expiration = now + int(ttl)

    delivery_time = None
    extra: dict[str, Any] | None = None
    if ma:
        delivery_time = ma.get(DELIVERY_TIME)
        if LEGACY_JMS_TYPE in ma:
            legacy_type = ma[LEGACY_JMS_TYPE]
            if isinstance(legacy_type, str):
                if jms_type is not None:
                    props[JMS_AMQP_SUBJECT] = jms_type
                jms_type = str(legacy_type)
        if not _KNOWN_ANNOTATIONS.issuperset(ma):
            extra = {EXTRA_ANNOTATIONS: {k: v for k, v in ma.items() if k not in _KNOWN_ANNOTATIONS}}
    if delivery_time is not None and type(delivery_time) is not bool and isinstance(delivery_time, int):
        delivery_time = int(delivery_time)
    else:
        delivery_time = timestamp
    if s.delivery_annotations is not None or s.footer is not None:
        if extra is None:
            extra = {}
        if s.delivery_annotations is not None:
            extra["delivery_annotations"] = s.delivery_annotations
        if s.footer is not None:
            extra["footer"] = s.footer
    return receive(kind, value, props, message_id, timestamp, correlation, reply, destination,
                   delivery_mode, redelivered, jms_type, expiration, delivery_time, priority, extra)
