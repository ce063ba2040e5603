"""The broker's only seam to AMQP message decoding: the shared codec of ``amqp_jms.mapping``.

The broker keeps each message as the bytes the producer sent. Routing needs only the header,
the annotations and the properties, which come first in a message, so :func:`inspect` decodes
those sections and stops before the application properties and body. Selectors read the
application properties lazily (:func:`selector_view`); redelivery rewrites only the header.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...exceptions import MessageFormatException
from ...mapping.codec import (
    APPLICATION_PROPERTIES,
    DATA,
    HEADER,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    decode_sections,
    decode_value,
    skip_value,
)
from ...mapping.destinations import JMS_DEST
from ...mapping.ids import from_amqp_correlation_id, from_amqp_message_id
from ...mapping.outbound import APP_CORRELATION_ID, DELIVERY_TIME, LEGACY_JMS_TYPE
from ...types import Described

__all__ = [
    "MessageInfo",
    "coordinator_request",
    "head",
    "header_rewrite",
    "inspect",
    "relay_address",
    "selector_view",
    "with_delivery_count",
]

_HEADER_START = bytes((0, 0x53, HEADER))


@dataclass(slots=True)
class MessageInfo:
    priority: int = 4  # AMQP's default, for a header without one
    durable: bool = False
    ttl: int = 0  # ms, 0 = none
    absolute_expiry: float = 0.0  # seconds since epoch, 0 = none
    delivery_time: int = 0  # ms since epoch, 0 = none
    delivery_delay: int = 0  # ms, 0 = none
    delivery_count: int = 0


def _int(v: Any) -> int:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else 0


def inspect(data: Any) -> MessageInfo:
    """Decode the routing fields of an encoded message; ``ValueError`` if they are malformed.

    The sections before the application properties are decoded by the shared codec (in C where
    the accelerator is built: this runs for every message a producer sends, on the broker's one
    loop); the application properties, however large, are not read here. A message
    the codec refuses (a field of a non-standard type, a malformed application-properties map)
    is still routed by what :func:`_walk` can read, as before: routing reads only four fields.
    The codec also reads a section named by its symbolic descriptor (``amqp:header:list``), as
    AMQP allows, where the walk stops.
    """
    try:
        end = _sections_before(data, APPLICATION_PROPERTIES)
        s = decode_sections(head(data) if end is None else data[:end], body=False)
    except (MessageFormatException, ValueError):
        return _walk(data)
    return _routing_info(s.header, s.message_annotations, s.properties)


def _routing_info(header: Sequence[Any] | None, annotations: dict[Any, Any] | None,
                  properties: Sequence[Any] | None) -> MessageInfo:
    """The routing fields of a header (a ``Header`` or its raw field list), the message
    annotations and the properties (a ``Properties`` or its raw field list)."""
    info = MessageInfo()
    if header is not None:
        n = len(header)
        if n > 0:
            info.durable = bool(header[0])
        if n > 1 and header[1] is not None:
            info.priority = _int(header[1])
        if n > 2:
            info.ttl = _int(header[2])
        if n > 4:
            info.delivery_count = _int(header[4])
    if annotations:
        for k, val in annotations.items():
            if k == DELIVERY_TIME:
                info.delivery_time = _int(val)
            elif k == "x-opt-delivery-delay":
                info.delivery_delay = _int(val)
    if properties is not None and len(properties) > 8 and properties[8] is not None:
        info.absolute_expiry = _int(properties[8]) / 1000.0
    return info


def _walk(data: Any) -> MessageInfo:
    """The routing fields read section by section, each decoded as a plain value without the
    codec's type checks; stops at the first section it does not know (a non-small descriptor)
    or after the properties."""
    header: list[Any] | None = None
    annotations: dict[Any, Any] | None = None
    properties: list[Any] | None = None
    p = 0
    n = len(data)
    try:
        while p < n:
            if data[p] != 0 or data[p + 1] != 0x53:
                break  # a non-small descriptor: not one of ours to read, stop routing decode
            code = data[p + 2]
            if code > PROPERTIES:
                break
            v, p = decode_value(data, p, "message section")
            fields = v.value if isinstance(v, Described) else None
            if code == HEADER and isinstance(fields, list):
                header = fields
            elif code == MESSAGE_ANNOTATIONS and isinstance(fields, dict):
                annotations = fields
            elif code == PROPERTIES and isinstance(fields, list):
                properties = fields
                break
    except (MessageFormatException, IndexError) as exc:
        raise ValueError(f"malformed AMQP message: {exc}") from exc
    return _routing_info(header, annotations, properties)


def head(data: Any) -> bytes:
    """The sections before the body, as ``bytes``: all a routing or selector decode reads.

    A large message is a mapped file (``large.py``); decoding it whole would copy it onto the
    heap, so only the header through the application properties are copied. A section with a
    descriptor that is not a small ulong stops the walk: then the whole message is copied (no
    client sends one, and the result stays right).
    """
    if type(data) is bytes:
        return data
    end = _sections_before(data, DATA)
    return bytes(data) if end is None else bytes(data[:end])


def _sections_before(data: Any, code: int) -> int | None:
    """Where the first section of ``code`` or later starts (the sections before it end), found
    by their sizes alone; None when a section's descriptor is not a small ulong, past which no
    section can be placed this way."""
    p, n = 0, len(data)
    try:
        while p + 3 <= n and data[p] == 0 and data[p + 1] == 0x53 and data[p + 2] < code:
            p = skip_value(data, p + 3, "message section")
    except MessageFormatException as exc:
        raise ValueError(f"malformed AMQP message: {exc}") from exc
    if p + 3 <= n and not (data[p] == 0 and data[p + 1] == 0x53):
        return None
    return p


def header_rewrite(data: Any, count: int) -> tuple[bytes, int]:
    """A large message redelivered: its header with ``delivery-count`` set to ``count``, and
    the offset where the rest of its bytes start (sent on unchanged from the mapped file)."""
    end = skip_value(data, 3, "message header") if data[:3] == _HEADER_START else 0
    return decode_sections(bytes(data[:end]), body=False).with_delivery_count(count), end


def relay_address(data: Any) -> tuple[str | None, int | None]:
    """The ``to`` address and the ``x-opt-jms-dest`` type annotation (anonymous relay)."""
    try:
        s = decode_sections(head(data), body=False)
    except MessageFormatException as exc:
        raise ValueError(str(exc)) from exc
    to = s.properties.to if s.properties is not None else None
    kind = (s.message_annotations or {}).get(JMS_DEST)
    return (str(to) if to else None, int(kind) if isinstance(kind, int) else None)


def with_delivery_count(data: Any, count: int) -> bytes:
    """The same message with its header's ``delivery-count`` set to ``count``."""
    return decode_sections(data, body=False).with_delivery_count(count)


def selector_view(data: Any) -> dict[str, Any]:
    """Selector identifiers of a message: application properties plus JMS header fields."""
    try:
        s = decode_sections(head(data), body=False)
    except (MessageFormatException, ValueError):
        return {}
    view: dict[str, Any] = dict(s.application_properties or {})
    ann = s.message_annotations or {}
    props = s.properties
    if props is not None:
        # the client's id rule (mapping/ids.py): a selector on these reads the same everywhere
        try:
            view["JMSMessageID"] = from_amqp_message_id(props.message_id)
        except MessageFormatException:  # an id of no AMQP id type: no JMSMessageID
            view["JMSMessageID"] = None
        cid = props.correlation_id
        if cid is not None:
            try:
                jms_cid = from_amqp_correlation_id(cid, ann.get(APP_CORRELATION_ID) is True)
            except MessageFormatException:
                jms_cid = None
            if isinstance(jms_cid, bytes):  # read as the message model reads it: ID:AMQP_BINARY:<HEX>
                jms_cid = from_amqp_message_id(jms_cid)
            view["JMSCorrelationID"] = jms_cid
        # a timestamp not set reads 0, as the message model reads it (JMS 3.4.4)
        view["JMSTimestamp"] = int(props.creation_time) if props.creation_time is not None else 0
        subject = props.subject
    else:
        view["JMSTimestamp"] = 0
        subject = None
    jtype = ann.get(LEGACY_JMS_TYPE)
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
