"""The broker's only seam to AMQP message decoding: the shared codec of ``amqp_jms.mapping``.

The broker keeps each message as the bytes the producer sent. Routing needs only the header,
the annotations and the properties, which come first in a message, so :func:`inspect` decodes
those sections and stops before the application properties and body. Selectors read the
application properties lazily (:func:`selector_view`); redelivery rewrites only the header.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..exceptions import MessageFormatException
from ..mapping.codec import decode_sections, decode_value
from ..types import UUID, Described

__all__ = [
    "MessageInfo",
    "coordinator_request",
    "inspect",
    "relay_address",
    "selector_view",
    "with_delivery_count",
]

_HEADER = 0x70
_DELIVERY_ANNOTATIONS = 0x71
_MESSAGE_ANNOTATIONS = 0x72
_PROPERTIES = 0x73


@dataclass(slots=True)
class MessageInfo:
    priority: int | None = None
    durable: bool = False
    ttl: int = 0  # ms, 0 = none
    absolute_expiry: float = 0.0  # seconds since epoch, 0 = none
    delivery_time: int = 0  # ms since epoch, 0 = none
    delivery_delay: int = 0  # ms, 0 = none
    delivery_count: int = 0


def _int(v: Any) -> int:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else 0


def inspect(data: bytes) -> MessageInfo:
    """Decode the routing fields of an encoded message; ``ValueError`` if they are malformed."""
    info = MessageInfo()
    p = 0
    n = len(data)
    try:
        while p < n:
            if data[p] != 0 or data[p + 1] != 0x53:
                break  # a non-small descriptor: not one of ours to read, stop routing decode
            code = data[p + 2]
            if code > _PROPERTIES:
                break
            v, p = decode_value(data, p, "message section")
            fields = v.value if isinstance(v, Described) else None
            if code == _HEADER and isinstance(fields, list):
                if len(fields) > 0:
                    info.durable = bool(fields[0])
                if len(fields) > 1 and fields[1] is not None:
                    info.priority = _int(fields[1])
                if len(fields) > 2:
                    info.ttl = _int(fields[2])
                if len(fields) > 4:
                    info.delivery_count = _int(fields[4])
            elif code == _MESSAGE_ANNOTATIONS and isinstance(fields, dict):
                for k, val in fields.items():
                    if k == "x-opt-delivery-time":
                        info.delivery_time = _int(val)
                    elif k == "x-opt-delivery-delay":
                        info.delivery_delay = _int(val)
            elif code == _PROPERTIES and isinstance(fields, list):
                if len(fields) > 8 and fields[8] is not None:
                    info.absolute_expiry = _int(fields[8]) / 1000.0
                break
    except (MessageFormatException, IndexError) as exc:
        raise ValueError(f"malformed AMQP message: {exc}") from exc
    return info


def relay_address(data: bytes) -> tuple[str | None, int | None]:
    """The ``to`` address and the ``x-opt-jms-dest`` type annotation (anonymous relay)."""
    try:
        s = decode_sections(data, body=False)
    except MessageFormatException as exc:
        raise ValueError(str(exc)) from exc
    to = s.properties.to if s.properties is not None else None
    kind = (s.message_annotations or {}).get("x-opt-jms-dest")
    return (str(to) if to else None, int(kind) if isinstance(kind, int) else None)


def with_delivery_count(data: bytes, count: int) -> bytes:
    """The same message with its header's ``delivery-count`` set to ``count``."""
    return decode_sections(data, body=False).with_delivery_count(count)


def _jms_id(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, UUID):
        return f"ID:AMQP_UUID:{value}"
    if isinstance(value, bytes):
        return "ID:AMQP_BINARY:" + value.hex().upper()
    if isinstance(value, int):
        return f"ID:AMQP_ULONG:{value}"
    return str(value)


def selector_view(data: bytes) -> dict[str, Any]:
    """Selector identifiers of a message: application properties plus JMS header fields."""
    try:
        s = decode_sections(data, body=False)
    except MessageFormatException:
        return {}
    view: dict[str, Any] = dict(s.application_properties or {})
    ann = s.message_annotations or {}
    props = s.properties
    if props is not None:
        view["JMSMessageID"] = _jms_id(props.message_id)
        cid = props.correlation_id
        view["JMSCorrelationID"] = cid if isinstance(cid, str) else _jms_id(cid)
        view["JMSTimestamp"] = int(props.creation_time) if props.creation_time is not None else None
        subject = props.subject
    else:
        subject = None
    jtype = ann.get("x-opt-jms-type")
    view["JMSType"] = str(jtype) if jtype is not None else subject
    return view


def coordinator_request(data: bytes) -> Described | None:
    """The declare/discharge body of a message sent to a transaction coordinator.

    ``None`` when the bytes do not decode or the body is not a described value: the caller
    rejects the transfer with ``amqp:decode-error``.
    """
    try:
        body = decode_sections(data).body
    except MessageFormatException:
        return None
    return body if isinstance(body, Described) else None
