"""AMQP 1.0 value encoder over the typed values of :mod:`amqp_jms.types`.

Why not proton's codec: proton's Python binding crosses into C once per field and builds a
``Data`` object per message, which makes it the bottleneck of the mapping. This encoder is a
dict lookup on ``type(value)`` and one precompiled ``struct`` call per scalar, and always
chooses the smallest encoding (``uint0``/``smalluint``, ``str8``/``sym8``, ``list0``/``list8``,
``map8``) so the bytes are what proton itself writes.

``encode_value(v) -> bytes`` is the whole interface; :mod:`.sections` builds sections with it.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from ...exceptions import MessageFormatException
from ...types import (
    Byte,
    Char,
    Decimal32,
    Decimal64,
    Decimal128,
    Described,
    Double,
    Float,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
)
from ._array import Array

__all__ = ["encode_str", "encode_symbol", "encode_value"]

_B = struct.Struct(">B").pack
_b = struct.Struct(">Bb").pack
_BB = struct.Struct(">BB").pack
_BBB = struct.Struct(">BBB").pack
_BH = struct.Struct(">BH").pack
_Bh = struct.Struct(">Bh").pack
_BI = struct.Struct(">BI").pack
_BII = struct.Struct(">BII").pack
_Bi = struct.Struct(">Bi").pack
_BQ = struct.Struct(">BQ").pack
_Bq = struct.Struct(">Bq").pack
_Bf = struct.Struct(">Bf").pack
_Bd = struct.Struct(">Bd").pack
_I = struct.Struct(">I").pack
_II = struct.Struct(">II").pack

NULL = b"\x40"
TRUE = b"\x41"
FALSE = b"\x42"


# One-byte encodings, premade (a list lookup beats a struct call).
_SMALL_LONGS = [_b(0x55, v - 256 if v > 127 else v) for v in range(256)]  # by v & 0xff
_SMALL_INTS = [_b(0x54, v - 256 if v > 127 else v) for v in range(256)]
_SMALL_UINTS = [b"\x43"] + [_BB(0x52, v) for v in range(1, 256)]
_SMALL_ULONGS = [b"\x44"] + [_BB(0x53, v) for v in range(1, 256)]


def _long(v: int) -> bytes:
    if -128 <= v <= 127:
        return _SMALL_LONGS[v & 0xFF]
    return _Bq(0x81, v)


def _int(v: int) -> bytes:
    if -128 <= v <= 127:
        return _SMALL_INTS[v & 0xFF]
    return _Bi(0x71, v)


def _uint(v: int) -> bytes:
    if 0 <= v < 256:
        return _SMALL_UINTS[v]
    return _BI(0x70, v)


def _ulong(v: int) -> bytes:
    if 0 <= v < 256:
        return _SMALL_ULONGS[v]
    return _BQ(0x80, v)


_STRINGS: dict[str, bytes] = {}


def encode_str(v: str) -> bytes:
    """``str8`` or ``str32`` UTF-8. Short strings repeat (property names, addresses, subjects):
    their encodings are cached."""
    hit = _STRINGS.get(v)
    if hit is not None:
        return hit
    if len(v) <= 64:
        out = _encode_str(v)
        if len(_STRINGS) >= 4096:
            _STRINGS.clear()
        _STRINGS[v] = out
        return out
    return _encode_str(v)


def _encode_str(v: str) -> bytes:
    try:
        raw = v.encode()
    except UnicodeEncodeError as e:
        raise MessageFormatException(f"string {v[:40]!r} is not encodable as UTF-8: {e}") from None
    n = len(raw)
    if n < 256:
        return _BB(0xA1, n) + raw
    return _BI(0xB1, n) + raw


def encode_symbol(v: str) -> bytes:
    """``sym8`` or ``sym32`` ASCII."""
    try:
        raw = v.encode("ascii")
    except UnicodeEncodeError:
        raise MessageFormatException(f"symbol {v[:40]!r} is not ASCII") from None
    n = len(raw)
    if n < 256:
        return _BB(0xA3, n) + raw
    return _BI(0xB3, n) + raw


def _binary(v: bytes) -> bytes:
    n = len(v)
    if n < 256:
        return _BB(0xA0, n) + v
    return _BI(0xB0, n) + v


def _char(v: str) -> bytes:
    # a lone surrogate is a Java char (see _decode._char): written as its code point, as Java is
    return b"\x73" + v.encode("utf-32-be", "surrogatepass")


def _uuid(v: uuid.UUID) -> bytes:
    return b"\x98" + v.bytes


def compound(code: int, body: bytes, count: int) -> bytes:
    """A list (``code`` 0xC0) or map (0xC1) of ``count`` encoded items ``body``: the 8-bit form
    when its size and count fit, else the 32-bit one (0xD0, 0xD1). The one home of that rule,
    for values and for the message's sections alike."""
    if len(body) < 255 and count < 256:
        return _BBB(code, len(body) + 1, count) + body
    return _BII(code + 0x10, len(body) + 4, count) + body


def _list(v: list[Any] | tuple[Any, ...]) -> bytes:
    if not v:
        return b"\x45"
    enc = _ENCODERS
    parts = []
    for x in v:
        f = enc.get(type(x))
        parts.append(f(x) if f is not None else _fallback(x))
    return compound(0xC0, b"".join(parts), len(v))


def encode_map_body(v: dict[Any, Any]) -> tuple[bytes, int]:
    enc = _ENCODERS
    parts = []
    for k, x in v.items():
        f = enc.get(type(k))
        parts.append(f(k) if f is not None else _fallback(k))
        f = enc.get(type(x))
        parts.append(f(x) if f is not None else _fallback(x))
    return b"".join(parts), 2 * len(v)


def _map(v: dict[Any, Any]) -> bytes:
    body, n = encode_map_body(v)
    return compound(0xC1, body, n)


def _described(v: Described) -> bytes:
    return b"\x00" + encode_value(v.descriptor) + encode_value(v.value)


# -- arrays: every element shares one constructor, so each type needs its wide form ----------

_FIXED_ARRAY: dict[type, tuple[int, Callable[[Any], bytes]]] = {
    bool: (0x56, lambda x: b"\x01" if x else b"\x00"),
    UByte: (0x50, struct.Struct(">B").pack),
    UShort: (0x60, struct.Struct(">H").pack),
    UInt: (0x70, struct.Struct(">I").pack),
    ULong: (0x80, struct.Struct(">Q").pack),
    Byte: (0x51, struct.Struct(">b").pack),
    Short: (0x61, struct.Struct(">h").pack),
    Int: (0x71, struct.Struct(">i").pack),
    int: (0x81, struct.Struct(">q").pack),
    Long: (0x81, struct.Struct(">q").pack),
    Float: (0x72, struct.Struct(">f").pack),
    float: (0x82, struct.Struct(">d").pack),
    Double: (0x82, struct.Struct(">d").pack),
    Char: (0x73, lambda x: x.encode("utf-32-be", "surrogatepass")),
    Timestamp: (0x83, struct.Struct(">q").pack),
    uuid.UUID: (0x98, lambda x: x.bytes),
    Decimal32: (0x74, bytes),
    Decimal64: (0x84, bytes),
    Decimal128: (0x94, bytes),
}


def _variable_array(elements: list[bytes], code8: int) -> tuple[bytes, bytes]:
    if all(len(e) < 256 for e in elements):
        return bytes((code8,)), b"".join(bytes((len(e),)) + e for e in elements)
    return bytes((code8 + 0x10,)), b"".join(_I(len(e)) + e for e in elements)


def _array_payload(arr: Array) -> tuple[bytes, bytes]:
    """(constructor, element bytes) for an array's elements."""
    t = arr.element_type
    fixed = _FIXED_ARRAY.get(t)
    if fixed is not None:
        code, pack = fixed
        try:
            return bytes((code,)), b"".join(pack(t(x) if t is Float else x) for x in arr)
        except (struct.error, TypeError, ValueError, AttributeError) as e:
            raise MessageFormatException(f"array of {t.__name__} holds a bad element: {e}") from None
    if t is type(None):
        return b"\x40", b""
    if t is str:
        return _variable_array([x.encode() for x in arr], 0xA1)
    if t is Symbol:
        return _variable_array([x.encode("ascii") for x in arr], 0xA3)
    if t is bytes:
        return _variable_array([bytes(x) for x in arr], 0xA0)
    if t is list:
        parts = []
        for x in arr:
            body = b"".join(encode_value(e) for e in x)
            parts.append(_II(len(body) + 4, len(x)) + body)
        return b"\xd0", b"".join(parts)
    if t is dict:
        parts = []
        for x in arr:
            body, n = encode_map_body(x)
            parts.append(_II(len(body) + 4, n) + body)
        return b"\xd1", b"".join(parts)
    if t is Array:
        parts = []
        for x in arr:
            ctor, payload = _array_payload(x)
            body = ctor + payload
            parts.append(_II(len(body) + 4, len(x)) + body)
        return b"\xf0", b"".join(parts)
    raise MessageFormatException(f"arrays of {t.__name__} cannot be encoded")


def _array(arr: Array) -> bytes:
    ctor, payload = _array_payload(arr)
    if arr.descriptor is not None:
        ctor = b"\x00" + encode_value(arr.descriptor) + ctor
    n = len(arr)
    size = len(ctor) + len(payload)
    if size + 1 < 256 and n < 256:
        return _BBB(0xE0, size + 1, n) + ctor + payload
    return _BII(0xF0, size + 4, n) + ctor + payload


_ENCODERS: dict[type, Callable[[Any], bytes]] = {
    type(None): lambda v: NULL,
    bool: lambda v: TRUE if v else FALSE,
    int: _long,
    Long: _long,
    Int: _int,
    Short: lambda v: _Bh(0x61, v),
    Byte: lambda v: _b(0x51, v),
    UByte: lambda v: _BB(0x50, v),
    UShort: lambda v: _BH(0x60, v),
    UInt: _uint,
    ULong: _ulong,
    float: lambda v: _Bd(0x82, v),
    Double: lambda v: _Bd(0x82, v),
    Float: lambda v: _Bf(0x72, v),
    Timestamp: lambda v: _Bq(0x83, v),
    str: encode_str,
    Symbol: encode_symbol,
    Char: _char,
    bytes: _binary,
    bytearray: lambda v: _binary(bytes(v)),
    memoryview: lambda v: _binary(bytes(v)),
    uuid.UUID: _uuid,
    Decimal32: lambda v: b"\x74" + bytes(v),
    Decimal64: lambda v: b"\x84" + bytes(v),
    Decimal128: lambda v: b"\x94" + bytes(v),
    list: _list,
    tuple: _list,
    dict: _map,
    Described: _described,
    Array: _array,
}


def _fallback(v: Any) -> bytes:
    """Subclasses of the supported types (and nothing else)."""
    for t in type(v).__mro__[1:]:
        f = _ENCODERS.get(t)
        if f is not None:
            return f(v)
    raise MessageFormatException(f"a value of type {type(v).__name__} has no AMQP encoding: {v!r:.60}")


def encode_value(v: Any) -> bytes:
    """The AMQP encoding of one typed value (see :mod:`amqp_jms.types` for the type table)."""
    f = _ENCODERS.get(type(v))
    if f is None:
        return _fallback(v)
    try:
        return f(v)
    except struct.error as e:
        raise MessageFormatException(f"{v!r:.60} is out of range for its AMQP type: {e}") from None
