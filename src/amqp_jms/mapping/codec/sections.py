"""AMQP message sections: decode a transfer payload into its sections, encode sections to bytes.

This is the layer the broker and Spark use directly, without building a JMS message:

* :func:`decode_sections` parses the payload once into a :class:`Sections` view: the decoded
  ``header`` (:class:`Header`), ``delivery_annotations``, ``message_annotations``,
  ``properties`` (:class:`Properties`), ``application_properties``, body and ``footer``, plus the
  byte span of every section. ``body=False`` leaves the body undecoded (only its span is
  checked), which is what a router needs.
* :meth:`Sections.with_delivery_count` / :meth:`Sections.with_header` return new payload bytes
  with only the header re-encoded and every other byte reused: the broker's redelivery path.
* :func:`encode_sections` builds a payload from section values; ``encode_header``,
  ``encode_properties``, ``encode_annotations`` and ``encode_body_*`` build single sections.

Wrong section order, duplicate sections, wrong types in the header or properties fields and
truncated/garbage bytes all raise :class:`~amqp_jms.exceptions.MessageFormatException`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, NamedTuple

from ..._accel import load_accelerator
from ...exceptions import MessageFormatException
from ...types import (
    UUID,
    Byte,
    Char,
    Decimal32,
    Decimal64,
    Decimal128,
    Described,
    Float,
    Int,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
)
from ._array import Array
from ._decode import _DECODE_ERRORS, DECODERS, Bad, format_error, skip_at
from ._encode import _ENCODERS, _fallback, compound, encode_map_body, encode_value

__all__ = [
    "AMQP_SEQUENCE",
    "AMQP_VALUE",
    "APPLICATION_PROPERTIES",
    "DATA",
    "DELIVERY_ANNOTATIONS",
    "FOOTER",
    "HEADER",
    "MESSAGE_ANNOTATIONS",
    "PROPERTIES",
    "SECTION_NAMES",
    "Header",
    "Properties",
    "Sections",
    "decode_sections",
    "encode_annotations",
    "encode_application_properties",
    "encode_body_data",
    "encode_body_sequence",
    "encode_body_value",
    "encode_header",
    "encode_properties",
    "encode_sections",
]

HEADER = 0x70
DELIVERY_ANNOTATIONS = 0x71
MESSAGE_ANNOTATIONS = 0x72
PROPERTIES = 0x73
APPLICATION_PROPERTIES = 0x74
DATA = 0x75
AMQP_SEQUENCE = 0x76
AMQP_VALUE = 0x77
FOOTER = 0x78

SECTION_NAMES = {
    HEADER: "header",
    DELIVERY_ANNOTATIONS: "delivery-annotations",
    MESSAGE_ANNOTATIONS: "message-annotations",
    PROPERTIES: "properties",
    APPLICATION_PROPERTIES: "application-properties",
    DATA: "data",
    AMQP_SEQUENCE: "amqp-sequence",
    AMQP_VALUE: "amqp-value",
    FOOTER: "footer",
}

# Body sections that may repeat: the Python type each one must hold, as named in errors.
_REPEATED_BODY: dict[int, tuple[type, str]] = {DATA: (bytes, "binary"), AMQP_SEQUENCE: (list, "a list")}
_SYMBOLIC = {
    "amqp:header:list": HEADER,
    "amqp:delivery-annotations:map": DELIVERY_ANNOTATIONS,
    "amqp:message-annotations:map": MESSAGE_ANNOTATIONS,
    "amqp:properties:list": PROPERTIES,
    "amqp:application-properties:map": APPLICATION_PROPERTIES,
    "amqp:data:binary": DATA,
    "amqp:amqp-sequence:list": AMQP_SEQUENCE,
    "amqp:amqp-value:*": AMQP_VALUE,
    "amqp:footer:map": FOOTER,
}


class Header(NamedTuple):
    """The ``header`` section. Defaults are the AMQP defaults (absent field = default).
    Immutable (decoded headers are shared, cached by their bytes): ``h._replace(...)`` or build
    a new one to change it."""

    durable: bool = False
    priority: int = 4
    ttl: int | None = None
    first_acquirer: bool = False
    delivery_count: int = 0


class Properties(NamedTuple):
    """The ``properties`` section; ``None`` = absent. Types as on the wire (``Timestamp``,
    ``Symbol``, ``UInt`` ...); ids are ``str``/``ULong``/``UUID``/``bytes``."""

    message_id: Any = None
    user_id: bytes | None = None
    to: str | None = None
    subject: str | None = None
    reply_to: str | None = None
    correlation_id: Any = None
    content_type: str | None = None
    content_encoding: str | None = None
    absolute_expiry_time: int | None = None
    creation_time: int | None = None
    group_id: str | None = None
    group_sequence: int | None = None
    reply_to_group_id: str | None = None


_NONES: list[list[None]] = [[None] * n for n in range(14)]
_new_tuple = tuple.__new__


_ID_TYPES = frozenset({str, ULong, UUID, bytes})
_PROPERTY_TYPES: tuple[tuple[str, frozenset[type]], ...] = (
    ("message-id", _ID_TYPES),
    ("user-id", frozenset({bytes})),
    ("to", frozenset({str})),
    ("subject", frozenset({str})),
    ("reply-to", frozenset({str})),
    ("correlation-id", _ID_TYPES),
    ("content-type", frozenset({Symbol})),
    ("content-encoding", frozenset({Symbol})),
    ("absolute-expiry-time", frozenset({Timestamp})),
    ("creation-time", frozenset({Timestamp})),
    ("group-id", frozenset({str})),
    ("group-sequence", frozenset({UInt})),
    ("reply-to-group-id", frozenset({str})),
)
_HEADER_TYPES: tuple[tuple[str, type], ...] = (
    ("durable", bool),
    ("priority", UByte),
    ("ttl", UInt),
    ("first-acquirer", bool),
    ("delivery-count", UInt),
)
_NOT_SIMPLE = (list, dict, Array, Described)
_STR = frozenset({str})
#: The decoder's types for the AMQP primitive (non-compound) types.
_SIMPLE = frozenset(
    {type(None), bool, UByte, UShort, UInt, ULong, Byte, Short, Int, int, Float, float, Char,
     Timestamp, UUID, bytes, str, Symbol, Decimal32, Decimal64, Decimal128}
)  # fmt: skip


class Sections:
    """A decoded AMQP message payload. ``data`` is the payload; ``spans[code]`` is the
    ``(start, end)`` byte range of each section present (for the body: all body sections).

    ``body_type`` is ``DATA``/``AMQP_SEQUENCE``/``AMQP_VALUE`` or ``None`` (no body). ``body`` is
    the list of binaries for ``DATA``, the list of lists for ``AMQP_SEQUENCE``, the value for
    ``AMQP_VALUE`` (``None`` when there is no body or it was not decoded)."""

    __slots__ = (
        "application_properties",
        "body",
        "body_decoded",
        "body_type",
        "data",
        "delivery_annotations",
        "footer",
        "header",
        "message_annotations",
        "properties",
        "spans",
    )

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.header: Header | None = None
        self.delivery_annotations: dict[Any, Any] | None = None
        self.message_annotations: dict[Any, Any] | None = None
        self.properties: Properties | None = None
        self.application_properties: dict[str, Any] | None = None
        self.body_type: int | None = None
        self.body: Any = None
        self.body_decoded = True
        self.footer: dict[Any, Any] | None = None
        self.spans: dict[int, tuple[int, int]] = {}

    def raw(self, code: int) -> bytes:
        """The encoded bytes of one section (``b""`` when absent)."""
        span = self.spans.get(code)
        return self.data[span[0] : span[1]] if span else b""

    @property
    def bare_message(self) -> bytes:
        """Properties through body: the immutable part every hop must forward unchanged."""
        start = len(self.data)
        end = 0
        for code, (s, e) in self.spans.items():
            if PROPERTIES <= code <= AMQP_VALUE:
                start = min(start, s)
                end = max(end, e)
        return self.data[start:end] if end else b""

    def with_header(self, header: Header | None) -> bytes:
        """The payload with its header replaced (or removed for ``None``); the other bytes are
        reused as they are."""
        span = self.spans.get(HEADER)
        rest = self.data[span[1] :] if span else self.data
        return (encode_header(header) if header is not None else b"") + rest

    def with_delivery_count(self, count: int) -> bytes:
        """The payload with ``header.delivery-count = count`` (a header is added if absent)."""
        h = self.header
        new = (
            Header(h.durable, h.priority, h.ttl, h.first_acquirer, count)
            if h is not None
            else Header(delivery_count=count)
        )
        return self.with_header(new)

    def decode_body(self) -> None:
        """Decode a body skipped with ``decode_sections(..., body=False)``."""
        if self.body_decoded:
            return
        span = self.spans.get(self.body_type or 0)
        if span is not None:
            try:
                _read_body(self, self.data, span[0], span[1])
            except _DECODE_ERRORS as e:
                raise format_error(e, SECTION_NAMES[self.body_type or 0]) from None
        self.body_decoded = True

    def __repr__(self) -> str:
        present = ", ".join(SECTION_NAMES[c] for c in sorted(self.spans))
        return f"<Sections {present} ({len(self.data)} bytes)>"


def _descriptor(b: bytes, p: int) -> tuple[int, int]:
    """Read ``0x00 descriptor`` of a section at ``p``: ``(section code, offset of value)``."""
    if b[p] != 0x00:
        raise Bad(p, f"expected a described section (0x00), found {b[p]:#04x}")
    c = b[p + 1]
    if c == 0x53:
        return b[p + 2], p + 3
    d, q = DECODERS[c](b, p + 2)
    if type(d) is ULong:
        if d >> 32 == 0 and HEADER <= d & 0xFFFFFFFF <= FOOTER:
            return int(d), q
        raise Bad(p, f"unknown section descriptor {int(d):#x}")
    if type(d) is Symbol and d in _SYMBOLIC:
        return _SYMBOLIC[d], q
    raise Bad(p, f"unknown section descriptor {d!r:.60}")


def _check_header(v: Any, p: int) -> Header:
    if type(v) is not list:
        raise Bad(p, f"header must be a list, not {type(v).__name__}")
    if len(v) > 5:
        raise Bad(p, f"header has {len(v)} fields, at most 5 are defined")
    for x, (name, t) in zip(v, _HEADER_TYPES):
        if x is not None and type(x) is not t:
            raise Bad(p, f"header field {name} must be {t.__name__}, not {type(x).__name__}")
    f: list[Any] = [False, 4, None, False, 0]
    for i, x in enumerate(v):
        if x is not None:
            f[i] = x
    return Header(*f)


def _check_properties(v: Any, p: int) -> Properties:
    if type(v) is not list:
        raise Bad(p, f"properties must be a list, not {type(v).__name__}")
    if len(v) > 13:
        raise Bad(p, f"properties has {len(v)} fields, at most 13 are defined")
    shape = tuple(map(type, v))
    if shape not in _GOOD_PROPERTY_SHAPES:  # a few shapes recur: check each one once
        for x, (name, ts) in zip(v, _PROPERTY_TYPES):
            if x is not None and type(x) not in ts:
                raise Bad(p, f"properties field {name} has the wrong type {type(x).__name__}")
        if len(_GOOD_PROPERTY_SHAPES) < 1024:
            _GOOD_PROPERTY_SHAPES.add(shape)
    if len(v) < 13:
        v += _NONES[13 - len(v)]
    return _new_tuple(Properties, v)


_GOOD_PROPERTY_SHAPES: set[tuple[type, ...]] = set()


def _check_annotations(v: Any, p: int, code: int) -> dict[Any, Any]:
    if type(v) is not dict:
        raise Bad(p, f"{SECTION_NAMES[code]} must be a map, not {type(v).__name__}")
    for k in v:
        if type(k) is not Symbol and type(k) is not ULong:
            raise Bad(p, f"{SECTION_NAMES[code]} key {k!r:.40} is not a symbol or ulong")
    return v


def _check_application_properties(v: Any, p: int) -> dict[str, Any]:
    if type(v) is not dict:
        raise Bad(p, f"application-properties must be a map, not {type(v).__name__}")
    if _STR.issuperset(map(type, v)) and _SIMPLE.issuperset(map(type, v.values())):
        return v
    for k, x in v.items():
        if type(k) is not str:
            raise Bad(p, f"application-properties key {k!r:.40} is not a string")
        if isinstance(x, _NOT_SIMPLE):
            raise Bad(p, f"application-properties value of {k!r:.40} is a {type(x).__name__}, not simple")
    return v


def _read_body(s: Sections, b: bytes, p: int, end: int) -> None:
    """Decode the body sections between ``p`` and ``end`` into ``s.body``."""
    dec = DECODERS
    kind = s.body_type
    parts: list[Any] = []
    while p < end:
        _, q = _descriptor(b, p)
        v, p = dec[b[q]](b, q + 1)
        if kind == DATA:
            if type(v) is not bytes:
                raise Bad(q, f"data section holds a {type(v).__name__}, not binary")
        elif kind == AMQP_SEQUENCE and type(v) is not list:
            raise Bad(q, f"amqp-sequence section holds a {type(v).__name__}, not a list")
        parts.append(v)
    s.body = parts[0] if kind == AMQP_VALUE else parts


_HEADERS: dict[bytes, Header] = {}
_ANNOTATIONS: dict[bytes, dict[Any, Any]] = {}
_CACHE_SIZE = 1024


def _remember(cache: dict[bytes, Any], raw: bytes, value: Any) -> None:
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[raw] = value


def decode_sections_py(data: bytes | bytearray | memoryview, *, body: bool = True) -> Sections:
    """Parse a transfer payload into :class:`Sections` (see the module doc). The pure-Python
    twin of the C accelerator ``_csections`` (which hands it the rare forms and every error)."""
    b = data if type(data) is bytes else bytes(data)
    s = Sections(b)
    n = len(b)
    p = 0
    last = 0
    body_start = -1
    code = 0
    dec = DECODERS
    spans = s.spans
    try:
        while p < n:
            start = p
            if b[p] == 0 and b[p + 1] == 0x53:
                code = b[p + 2]
                q = p + 3
                if not HEADER <= code <= FOOTER:
                    raise Bad(p, f"unknown section descriptor {code:#x}")
            else:
                code, q = _descriptor(b, p)
            if code > last:
                if last >= DATA and code <= AMQP_VALUE:
                    raise Bad(p, f"{SECTION_NAMES[code]} section mixed with {SECTION_NAMES[last]} body")
            elif code != last or not (code == DATA or code == AMQP_SEQUENCE):
                if code == last:
                    raise Bad(p, f"duplicate {SECTION_NAMES[code]} section")
                raise Bad(p, f"{SECTION_NAMES[code]} section after {SECTION_NAMES[last]}")
            last = code
            if DATA <= code <= AMQP_VALUE:
                if body_start < 0:
                    body_start = start
                    s.body_type = code
                if not body:
                    p = skip_at(b, q)
                    spans[code] = (body_start, p)
                    s.body_decoded = False
                    continue
            if code == HEADER or code == MESSAGE_ANNOTATIONS:
                # Producers repeat these byte for byte (same flags, same JMS annotations):
                # a cache keyed by the encoded value saves decoding them again.
                p = skip_at(b, q)
                raw = b[q:p]
                if code == HEADER:
                    h = _HEADERS.get(raw)
                    if h is None:
                        h = _check_header(dec[b[q]](b, q + 1)[0], q)
                        _remember(_HEADERS, raw, h)
                    s.header = h
                else:
                    ma = _ANNOTATIONS.get(raw)
                    if ma is None:
                        ma = _check_annotations(dec[b[q]](b, q + 1)[0], q, code)
                        _remember(_ANNOTATIONS, raw, ma)
                    s.message_annotations = ma.copy()
                spans[code] = (start, p)
                continue
            v, p = dec[b[q]](b, q + 1)
            if code == PROPERTIES:
                s.properties = _check_properties(v, q)
            elif code == APPLICATION_PROPERTIES:
                s.application_properties = _check_application_properties(v, q)
            elif code == DATA or code == AMQP_SEQUENCE:
                # Both repeat: the body is the list of sections, and its span covers them all.
                kind, what = _REPEATED_BODY[code]
                if type(v) is not kind:
                    raise Bad(q, f"{SECTION_NAMES[code]} section holds a {type(v).__name__}, not {what}")
                if s.body is None:
                    s.body = [v]
                else:
                    s.body.append(v)
                spans[code] = (body_start, p)
                continue
            elif code == AMQP_VALUE:
                s.body = v
            elif code == DELIVERY_ANNOTATIONS:
                s.delivery_annotations = _check_annotations(v, q, code)
            else:
                s.footer = _check_annotations(v, q, code)
            spans[code] = (start, p)
    except _DECODE_ERRORS as e:
        raise format_error(e, f"the {SECTION_NAMES.get(code, 'first')} section") from None
    return s


decode_sections = decode_sections_py
_accel = load_accelerator("amqp_jms.mapping.codec._csections")
if _accel is not None:
    _accel.init(
        Sections,
        Header,
        Properties,
        UByte,
        UShort,
        UInt,
        ULong,
        Byte,
        Short,
        Int,
        Float,
        Timestamp,
        Symbol,
        lambda raw: UUID(bytes=raw),
        decode_sections_py,
    )
    decode_sections = _accel.decode_sections  # (the same function, in C)

#: ``encode_plain(head, message_id, fields, timestamp, kind, body)``: the C assembly of a
#: producer's plain message from its shape (``mapping.outbound._encode``), or None where the
#: accelerator is not built; it returns None itself for what it does not encode
encode_plain: Callable[[bytes, str, bytes, int, int, Any], bytes | None] | None = (
    None if _accel is None else _accel.encode_plain)


# -- encoding ---------------------------------------------------------------------------------

_PRE = {code: bytes((0x00, 0x53, code)) for code in SECTION_NAMES}


def _list_of(fields: list[Any]) -> bytes:
    while fields and fields[-1] is None:
        fields.pop()
    if not fields:
        return b"\x45"
    enc = _ENCODERS
    body = b"".join([enc[type(x)](x) if type(x) in enc else _fallback(x) for x in fields])
    return compound(0xC0, body, len(fields))


def encode_header(h: Header) -> bytes:
    """The header section, defaults left out (``durable=False``, ``priority=4``, ...)."""
    return _PRE[HEADER] + _list_of(
        [
            True if h.durable else None,
            UByte(h.priority) if h.priority != 4 else None,
            UInt(h.ttl) if h.ttl is not None else None,
            True if h.first_acquirer else None,
            UInt(h.delivery_count) if h.delivery_count else None,
        ]
    )


def encode_properties(p: Properties) -> bytes:
    """The properties section. Field values must already have their AMQP types."""
    return _PRE[PROPERTIES] + _list_of(
        [
            p.message_id,
            p.user_id,
            p.to,
            p.subject,
            p.reply_to,
            p.correlation_id,
            None if p.content_type is None else Symbol(p.content_type),
            None if p.content_encoding is None else Symbol(p.content_encoding),
            None if p.absolute_expiry_time is None else Timestamp(p.absolute_expiry_time),
            None if p.creation_time is None else Timestamp(p.creation_time),
            p.group_id,
            None if p.group_sequence is None else UInt(p.group_sequence),
            p.reply_to_group_id,
        ]
    )


def _map_section(code: int, m: dict[Any, Any]) -> bytes:
    body, n = encode_map_body(m)
    return _PRE[code] + compound(0xC1, body, n)


def encode_annotations(code: int, annotations: dict[Any, Any]) -> bytes:
    """A delivery-annotations, message-annotations or footer section. Plain ``str`` keys are
    sent as symbols (annotation keys must be symbols or ulongs)."""
    m = {(Symbol(k) if type(k) is str else k): v for k, v in annotations.items()}
    return _map_section(code, m)


def encode_application_properties(props: dict[str, Any]) -> bytes:
    """An application-properties section. Keys stay strings (not symbols, unlike annotations):
    the JMS properties a selector reads by name."""
    return _map_section(APPLICATION_PROPERTIES, props)


def encode_body_value(value: Any) -> bytes:
    """One amqp-value body section: how TextMessage and MapMessage bodies travel; the
    x-opt-jms-msg-type annotation, not this section, says which JMS class reads it back."""
    return _PRE[AMQP_VALUE] + encode_value(value)


def encode_body_data(chunk: bytes) -> bytes:
    """One data section (opaque binary; any buffer is accepted and copied to bytes). Data sections
    may repeat and a receiver joins them, so a large body can be written chunk by chunk."""
    return _PRE[DATA] + encode_value(bytes(chunk))


def encode_body_sequence(items: list[Any]) -> bytes:
    """One amqp-sequence section (a list of typed values; any sequence is accepted). Sequence
    sections may repeat like data; a receiver concatenates them into one list."""
    return _PRE[AMQP_SEQUENCE] + encode_value(list(items))


def encode_sections(
    *,
    header: Header | None = None,
    delivery_annotations: dict[Any, Any] | None = None,
    message_annotations: dict[Any, Any] | None = None,
    properties: Properties | None = None,
    application_properties: dict[str, Any] | None = None,
    body_type: int | None = None,
    body: Any = None,
    footer: dict[Any, Any] | None = None,
) -> bytes:
    """A whole payload. ``body`` is a list of binaries for ``DATA``, a list of lists for
    ``AMQP_SEQUENCE``, any value for ``AMQP_VALUE``; ``body_type=None`` sends no body."""
    out = []
    try:
        if header is not None:
            out.append(encode_header(header))
        if delivery_annotations is not None:
            out.append(encode_annotations(DELIVERY_ANNOTATIONS, delivery_annotations))
        if message_annotations is not None:
            out.append(encode_annotations(MESSAGE_ANNOTATIONS, message_annotations))
        if properties is not None:
            out.append(encode_properties(properties))
        if application_properties is not None:
            out.append(encode_application_properties(application_properties))
        if body_type == DATA:
            out.extend(encode_body_data(c) for c in body)
        elif body_type == AMQP_SEQUENCE:
            out.extend(encode_body_sequence(c) for c in body)
        elif body_type == AMQP_VALUE:
            out.append(encode_body_value(body))
        elif body_type is not None:
            raise MessageFormatException(f"unknown body section type {body_type!r}")
        if footer is not None:
            out.append(encode_annotations(FOOTER, footer))
    except (ValueError, TypeError, OverflowError, struct.error) as e:
        raise MessageFormatException(f"cannot encode message: {e}") from None
    return b"".join(out)
