"""Test helper: a reference implementation of the receive side of the AMQP JMS mapping, written
over proton's decoder and object model (``proton.Message``), independent of amqp_jms.mapping.

``reference_view(pm, consumer, now)`` and ``jms_view(message)`` both give a plain dict (class
name, every header, the properties with their types, the body) so tests can compare our decoder
with this one on proton-built messages."""

from __future__ import annotations

import uuid
from typing import Any

import proton
from mapping_proton_oracle import from_proton, typed

from amqp_jms.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.types import Int

CLASSES = ["Message", "ObjectMessage", "MapMessage", "BytesMessage", "StreamMessage", "TextMessage"]
DEST_CLASSES = [Queue, Topic, TemporaryQueue, TemporaryTopic]
RESERVED = ("AMQP_UUID:", "AMQP_ULONG:", "AMQP_BINARY:", "AMQP_STRING:", "AMQP_NO_PREFIX:")
TEXTUAL_APP = {"xml", "xml-dtd", "json", "javascript", "ecmascript"}


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def _id_string(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, str):
        if not v.startswith("ID:"):
            return "ID:AMQP_NO_PREFIX:" + v
        if v[3:].startswith(RESERVED):
            return "ID:AMQP_STRING:" + v
        return v
    if isinstance(v, uuid.UUID):
        return f"ID:AMQP_UUID:{v}"
    if isinstance(v, (bytes, memoryview)):
        return "ID:AMQP_BINARY:" + bytes(v).hex().upper()
    return f"ID:AMQP_ULONG:{int(v)}"


def _dest(address: str | None, type_byte: Any, legacy: Any, consumer: Destination | None) -> Any:
    if address is None:
        return None
    cls = None
    if isinstance(type_byte, int) and not isinstance(type_byte, bool) and 0 <= type_byte <= 3:
        cls = DEST_CLASSES[type_byte]
    elif isinstance(legacy, str):
        parts = [p.strip().lower() for p in legacy.split(",")]
        if "queue" in parts:
            cls = TemporaryQueue if "temporary" in parts else Queue
        elif "topic" in parts:
            cls = TemporaryTopic if "temporary" in parts else Topic
    if cls is None:
        cls = type(consumer) if consumer is not None else Queue
    return (cls.__name__, address) if address else None


def _content_type(pm: proton.Message) -> str | None:
    ct = pm.content_type
    # proton reads an absent content-type as symbol('None')
    if ct is None or ct == proton.symbol("None"):
        return None
    return str(ct)


def _textual(ct: str) -> tuple[bool, str]:
    mime, _, params = ct.partition(";")
    mime = mime.strip().lower()
    charset = "utf-8"
    for p in params.split(";"):
        k, _, v = p.partition("=")
        if k.strip().lower() == "charset":
            charset = v.strip().strip('"')
    top, _, sub = mime.partition("/")
    textual = top == "text" or (
        top == "application" and (sub in TEXTUAL_APP or sub.endswith("+xml") or sub.endswith("+json"))
    )
    return textual, charset


def _body_kind(pm: proton.Message) -> tuple[str | None, Any]:
    body = pm.body
    if isinstance(body, memoryview):
        body = bytes(body)
    if body is None:
        return None, None
    if pm.inferred and isinstance(body, bytes):
        return "data", body
    if pm.inferred and isinstance(body, list):
        return "sequence", from_proton(body)
    return "value", from_proton(body)


def reference_view(pm: proton.Message, consumer: Destination | None = None, now: int = 0) -> dict[str, Any]:
    ann = {str(k): from_proton(v) for k, v in (pm.annotations or {}).items()}
    ct = _content_type(pm)
    kind, body = _body_kind(pm)
    code = ann.get("x-opt-jms-msg-type")
    if code is None:
        if kind == "value":
            code = 5 if body is None or isinstance(body, str) else 3 if isinstance(body, bytes) else 1
        elif kind == "sequence":
            code = 1
        elif ct is None:
            code = 3
        elif ct.split(";")[0].strip().lower() == "application/x-java-serialized-object":
            code = 1
        else:
            code = 5 if _textual(ct)[0] else 3
    cls = CLASSES[code]
    if cls == "TextMessage":
        out_body: Any = body.decode(_textual(ct or "")[1]) if kind == "data" else body
    elif cls == "BytesMessage":
        out_body = body if body is not None else b""
    elif cls == "MapMessage":
        out_body = body if body is not None else {}
    elif cls == "StreamMessage":
        out_body = body if body is not None else []
    elif cls == "ObjectMessage":
        out_body = ("java", body) if kind == "data" and ct == "application/x-java-serialized-object" else body
    else:
        out_body = None

    props: dict[str, Any] = {k: from_proton(v) for k, v in _properties(pm).items()}
    props["JMSXDeliveryCount"] = Int(min(pm.delivery_count + 1, 2**31 - 1))
    if pm.first_acquirer:
        props["JMS_AMQP_FIRST_ACQUIRER"] = True
    if pm.user_id:
        props["JMSXUserID"] = bytes(pm.user_id).decode()
    if ct is not None:
        props["JMS_AMQP_CONTENT_TYPE"] = ct
    if pm.content_encoding not in (None, proton.symbol("None")):
        props["JMS_AMQP_CONTENT_ENCODING"] = str(pm.content_encoding)
    if pm.group_id is not None:
        props["JMSXGroupID"] = pm.group_id
    if pm.group_sequence:
        seq = pm.group_sequence
        props["JMSXGroupSeq"] = Int(seq - 2**32 if seq >= 2**31 else seq)
    if pm.reply_to_group_id is not None:
        props["JMS_AMQP_REPLY_TO_GROUP_ID"] = pm.reply_to_group_id

    correlation = pm.correlation_id
    if isinstance(correlation, str) and (
        ann.get("x-opt-app-correlation-id") is True or not correlation.startswith("ID:")
    ):
        jms_corr: Any = correlation
    else:
        jms_corr = _id_string(correlation)

    timestamp = _ms(pm.creation_time) or 0
    expiry = _ms(pm.expiry_time)
    if not expiry and pm.ttl:
        expiry = now + _ms(pm.ttl)  # type: ignore[operator]
    delivery_time = ann.get("x-opt-delivery-time")
    to = pm.address
    return {
        "class": cls,
        "message_id": _id_string(pm.id),
        "correlation_id": jms_corr,
        "destination": _dest(to, ann.get("x-opt-jms-dest"), ann.get("x-opt-to-type"), consumer)
        if to is not None
        else ((type(consumer).__name__, consumer.name) if consumer else None),
        "reply_to": _dest(pm.reply_to, ann.get("x-opt-jms-reply-to"), ann.get("x-opt-reply-type"), consumer),
        "delivery_mode": 2 if pm.durable else 1,
        "priority": min(pm.priority, 9),
        "redelivered": pm.delivery_count > 0,
        "type": ann["x-opt-jms-type"] if isinstance(ann.get("x-opt-jms-type"), str) else pm.subject,
        "timestamp": timestamp,
        "expiration": expiry or 0,
        "delivery_time": int(delivery_time) if isinstance(delivery_time, int) else timestamp,
        "properties": typed(props),
        "body": typed(out_body),
    }


def jms_view(m: Message) -> dict[str, Any]:
    if isinstance(m, TextMessage):
        body: Any = view(m).body
    elif isinstance(m, BytesMessage):
        body = view(m).body
    elif isinstance(m, MapMessage):
        body = view(m).body
    elif isinstance(m, StreamMessage):
        body = view(m).body
    elif isinstance(m, ObjectMessage):
        obj = view(m).body
        body = ("java", obj.data) if type(obj).__name__ == "JavaSerializedObject" else obj
    else:
        body = None
    props = dict(view(m).properties)
    if "JMS_AMQP_SUBJECT" in props:
        props.pop("JMS_AMQP_SUBJECT")
    d, r = m.get_jms_destination(), m.get_jms_reply_to()
    return {
        "class": type(m).__name__,
        "message_id": m.get_jms_message_id(),
        "correlation_id": m.get_jms_correlation_id(),
        "destination": (type(d).__name__, d.name) if d is not None else None,
        "reply_to": (type(r).__name__, r.name) if r is not None else None,
        "delivery_mode": m.get_jms_delivery_mode(),
        "priority": m.get_jms_priority(),
        "redelivered": m.get_jms_redelivered(),
        "type": m.get_jms_type(),
        "timestamp": m.get_jms_timestamp(),
        "expiration": m.get_jms_expiration(),
        "delivery_time": m.get_jms_delivery_time(),
        "properties": typed(props),
        "body": typed(body),
    }


def _properties(pm: proton.Message) -> dict[str, Any]:
    """The application properties proton parsed (its stubs leave the type open)."""
    return dict(pm.properties or {})
