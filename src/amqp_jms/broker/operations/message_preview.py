"""What an operator sees of a stored message: its JMS headers, typed properties and a body
preview, as plain values (strings, numbers, lists, maps) that travel in a management answer and
render in the console.

The message is read with the client's own mapping (``amqp_jms.mapping.decode``), so the console
shows a message exactly as a JMS consumer would get it: the six JMS body types, and any other
AMQP body as the JMS type the mapping gives it (an ``amqp-value`` of another type reads as an
ObjectMessage, ``data`` sections as a BytesMessage). A body is cut at ``max_body`` characters
(text) or bytes (binary), with the full size stated, so a page of large messages stays small.
"""

from __future__ import annotations

from typing import Any

from ...exceptions import JMSException
from ...mapping import decode
from ...message import (
    BytesMessage,
    JavaSerializedObject,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

__all__ = ["MAX_BODY", "preview"]

#: characters of text (bytes of binary) a preview shows of a body
MAX_BODY = 2048
#: entries of a map or stream body a preview lists
MAX_ITEMS = 50


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    name = type(value).__name__
    return {"int": "long", "float": "double", "str": "String", "bytes": "byte[]"}.get(name, name.lower())


def _text_of(value: Any, limit: int) -> str:
    if isinstance(value, bytes):
        shown = value[:limit].hex(" ")
        return shown + (f" … ({len(value)} bytes)" if len(value) > limit else "")
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):  # Byte, Short, Int, Long print as their numbers
        text = str(int(value))
    elif isinstance(value, float):
        text = repr(float(value))
    else:
        text = str(value)
    return text[:limit] + (f" … ({len(text)} characters)" if len(text) > limit else "")


def _body(msg: Message, max_body: int) -> tuple[str, str]:
    """``(kind, preview)`` of the body."""
    if isinstance(msg, TextMessage):
        text = msg.get_text()
        return "text", "(null)" if text is None else _text_of(text, max_body)
    if isinstance(msg, BytesMessage):
        data = msg.get_body(bytes) or b""
        return "bytes", _text_of(data, max_body)
    if isinstance(msg, MapMessage):
        names = list(msg.get_map_names())
        items = [f"{n} ({_type_name(msg.get_object(n))}) = {_text_of(msg.get_object(n), 200)}"
                 for n in names[:MAX_ITEMS]]
        more = [f"… {len(names) - MAX_ITEMS} more entries"] if len(names) > MAX_ITEMS else []
        return "map", "\n".join(items + more)
    if isinstance(msg, StreamMessage):
        items = []
        try:
            while len(items) < MAX_ITEMS:
                value = msg.read_object()
                items.append(f"({_type_name(value)}) {_text_of(value, 200)}")
        except JMSException:  # the end of the stream
            pass
        return "stream", "\n".join(items)
    if isinstance(msg, ObjectMessage):
        obj = msg.get_object()
        if isinstance(obj, JavaSerializedObject):
            return "object", f"Java-serialized object, {len(obj.data)} bytes"
        return "object", _text_of(repr(obj), max_body)
    return "message", ""


def preview(data: bytes, *, max_body: int = MAX_BODY) -> dict[str, Any]:
    """The headers, properties and body preview of an encoded message (a message the mapping
    cannot read gets ``error`` naming why, and its size)."""
    try:
        msg = decode(data)
    except Exception as exc:  # a stored message a peer sent: shown, never fatal
        return {"size": len(data), "error": f"{type(exc).__name__}: {exc}"}
    kind, body = _body(msg, max_body)
    dest = msg.get_jms_destination()
    reply_to = msg.get_jms_reply_to()
    return {
        "size": len(data),
        "messageId": msg.get_jms_message_id(),
        "correlationId": msg.get_jms_correlation_id(),
        "destination": None if dest is None else str(dest),
        "replyTo": None if reply_to is None else str(reply_to),
        "type": msg.get_jms_type(),
        "deliveryMode": "PERSISTENT" if msg.get_jms_delivery_mode() == 2 else "NON_PERSISTENT",
        "priority": msg.get_jms_priority(),
        "timestamp": msg.get_jms_timestamp(),
        "expiration": msg.get_jms_expiration(),
        "redelivered": msg.get_jms_redelivered(),
        "properties": {name: [_type_name(msg.get_object_property(name)),
                              _text_of(msg.get_object_property(name), 200)]
                       for name in msg.get_property_names()},
        "bodyType": kind,
        "body": body,
    }
