"""AMQP 1.0 value decoder: every encoding of every type, strictly bounds-checked.

``decode_value(buf, pos) -> (value, end)`` reads one value at ``pos``. Dispatch is a 256-entry
table indexed by the constructor byte; each entry reads its payload with a precompiled
``struct`` and returns the typed value of :mod:`amqp_jms.types` (built with ``int.__new__`` and
friends, skipping the range checks the wire format already guarantees).

Malformed input raises :class:`~amqp_jms.exceptions.MessageFormatException` naming the byte
offset and what was wrong. Internally the readers raise ``_Bad`` / ``IndexError`` /
``struct.error``; :func:`decode_value` converts them at this one seam, so the inner loops stay
free of ``try`` blocks.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from ...exceptions import MessageFormatException
from ...message._mutf8 import decode_java_utf8
from ...types import (
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

__all__ = ["Bad", "decode_value", "format_error", "skip_value"]

Reader = Callable[[bytes, int], tuple[Any, int]]

_u8 = struct.Struct(">B").unpack_from
_i8 = struct.Struct(">b").unpack_from
_u16 = struct.Struct(">H").unpack_from
_i16 = struct.Struct(">h").unpack_from
_u32 = struct.Struct(">I").unpack_from
_i32 = struct.Struct(">i").unpack_from
_u64 = struct.Struct(">Q").unpack_from
_i64 = struct.Struct(">q").unpack_from
_f32 = struct.Struct(">f").unpack_from
_f64 = struct.Struct(">d").unpack_from
_u8u8 = struct.Struct(">BB").unpack_from
_u32u32 = struct.Struct(">II").unpack_from

_new_int = int.__new__
_new_float = float.__new__
_new_str = str.__new__

#: Arrays of zero-width elements (null, true, uint0 ...) cannot be bounded by their size.
MAX_ZERO_WIDTH_COUNT = 1 << 16


class Bad(Exception):
    """Internal: malformed input at an offset."""

    def __init__(self, pos: int, what: str) -> None:
        super().__init__(what)
        self.pos = pos
        self.what = what


def format_error(e: BaseException, where: str) -> MessageFormatException:
    """Turn an internal decoding failure into the user-facing exception."""
    if isinstance(e, Bad):
        return MessageFormatException(f"malformed AMQP data in {where} at byte {e.pos}: {e.what}")
    if isinstance(e, (IndexError, struct.error)):
        return MessageFormatException(f"truncated AMQP data in {where}")
    if isinstance(e, UnicodeDecodeError):
        return MessageFormatException(f"invalid UTF-8/ASCII text in {where}: {e.reason}")
    if isinstance(e, RecursionError):
        return MessageFormatException(f"AMQP data in {where} is nested too deeply")
    if isinstance(e, TypeError):
        return MessageFormatException(f"malformed AMQP data in {where}: {e}")
    return MessageFormatException(f"malformed AMQP data in {where}: {e}")


def _java_str(raw: bytes, pos: int, key: Any = None) -> str:
    """A string that is not UTF-8: Java peers (ActiveMQ's transformer) write CESU-8 / modified
    UTF-8 in map values and property strings; anything else is malformed. Only reached after
    the fast ``bytes.decode()`` failed."""
    try:
        return decode_java_utf8(raw)
    except ValueError as e:
        what = "string" if key is None else f"string value of {key!r}"
        raise Bad(pos, f"{what} is neither UTF-8 nor Java's modified UTF-8: {e}") from None


def _need(buf: bytes, end: int, pos: int, what: str) -> None:
    if end > len(buf):
        raise Bad(pos, f"{what} runs past the end of the data ({end - len(buf)} bytes missing)")


# -- fixed-width scalars ------------------------------------------------------------------------


def _null(b: bytes, p: int) -> tuple[Any, int]:
    return None, p


def _true(b: bytes, p: int) -> tuple[Any, int]:
    return True, p


def _false(b: bytes, p: int) -> tuple[Any, int]:
    return False, p


def _boolean(b: bytes, p: int) -> tuple[Any, int]:
    v = b[p]
    if v > 1:
        raise Bad(p, f"boolean byte must be 0 or 1, not {v}")
    return v == 1, p + 1


def _ubyte(b: bytes, p: int) -> tuple[Any, int]:
    return _UBYTES[b[p]], p + 1


def _ushort(b: bytes, p: int) -> tuple[Any, int]:
    return _new_int(UShort, _u16(b, p)[0]), p + 2


def _uint(b: bytes, p: int) -> tuple[Any, int]:
    return _new_int(UInt, _u32(b, p)[0]), p + 4


def _smalluint(b: bytes, p: int) -> tuple[Any, int]:
    return _SMALL_UINTS[b[p]], p + 1


_UINT0 = _new_int(UInt, 0)
_ULONG0 = _new_int(ULong, 0)
# Building an int subclass costs more than a list lookup: the one-byte values are premade.
_UBYTES = [_new_int(UByte, v) for v in range(256)]
_SMALL_UINTS = [_new_int(UInt, v) for v in range(256)]
_SMALL_ULONGS = [_new_int(ULong, v) for v in range(256)]
_BYTES = [_new_int(Byte, v - 256 if v > 127 else v) for v in range(256)]  # by unsigned byte
_SMALL_INTS = [_new_int(Int, v - 256 if v > 127 else v) for v in range(256)]  # by unsigned byte


def _uint0(b: bytes, p: int) -> tuple[Any, int]:
    return _UINT0, p


def _ulong(b: bytes, p: int) -> tuple[Any, int]:
    return _new_int(ULong, _u64(b, p)[0]), p + 8


def _smallulong(b: bytes, p: int) -> tuple[Any, int]:
    return _SMALL_ULONGS[b[p]], p + 1


def _ulong0(b: bytes, p: int) -> tuple[Any, int]:
    return _ULONG0, p


def _byte(b: bytes, p: int) -> tuple[Any, int]:
    return _BYTES[b[p]], p + 1


def _short(b: bytes, p: int) -> tuple[Any, int]:
    return _new_int(Short, _i16(b, p)[0]), p + 2


def _int(b: bytes, p: int) -> tuple[Any, int]:
    return _new_int(Int, _i32(b, p)[0]), p + 4


def _smallint(b: bytes, p: int) -> tuple[Any, int]:
    return _SMALL_INTS[b[p]], p + 1


def _long(b: bytes, p: int) -> tuple[Any, int]:
    return _i64(b, p)[0], p + 8


def _smalllong(b: bytes, p: int) -> tuple[Any, int]:
    return _i8(b, p)[0], p + 1


def _float(b: bytes, p: int) -> tuple[Any, int]:
    return _new_float(Float, _f32(b, p)[0]), p + 4


def _double(b: bytes, p: int) -> tuple[Any, int]:
    return _f64(b, p)[0], p + 8


_CHARS: dict[int, Char] = {}


def _char(b: bytes, p: int) -> tuple[Any, int]:
    """An AMQP ``char``: a code point. A lone UTF-16 surrogate (0xD800-0xDFFF) is read as the
    one-character str Java reads: Java's ``char`` is a UTF-16 code unit, ``MapMessage.setChar``
    takes a lone surrogate and ActiveMQ writes it as such a ``char``. A *string* holding one is
    still refused (it is not UTF-8); past U+10FFFF is no character at all."""
    cp = _u32(b, p)[0]
    c = _CHARS.get(cp)
    if c is None:
        if cp > 0x10FFFF:
            raise Bad(p, f"char code point {cp:#x} is beyond U+10FFFF")
        c = _new_str(Char, chr(cp))
        if cp < 0x800:  # cache the common (two-byte UTF-8) range only: bounded
            _CHARS[cp] = c
    return c, p + 4


def _timestamp(b: bytes, p: int) -> tuple[Any, int]:
    return _new_int(Timestamp, _i64(b, p)[0]), p + 8


def _uuid(b: bytes, p: int) -> tuple[Any, int]:
    e = p + 16
    _need(b, e, p, "uuid")
    return uuid.UUID(bytes=bytes(b[p:e])), e


def _decimal(cls: type, n: int) -> Reader:
    def read(b: bytes, p: int) -> tuple[Any, int]:
        e = p + n
        _need(b, e, p, cls.__name__)
        return cls(bytes(b[p:e])), e

    return read


# -- variable width ----------------------------------------------------------------------------


def _vbin8(b: bytes, p: int) -> tuple[Any, int]:
    s = p + 1
    e = s + b[p]
    if e > len(b):
        _need(b, e, p, "binary")
    return bytes(b[s:e]), e


def _vbin32(b: bytes, p: int) -> tuple[Any, int]:
    s = p + 4
    e = s + _u32(b, p)[0]
    _need(b, e, p, "binary")
    return bytes(b[s:e]), e


def _str8(b: bytes, p: int) -> tuple[Any, int]:
    s = p + 1
    e = s + b[p]
    if e > len(b):
        _need(b, e, p, "string")
    try:
        return b[s:e].decode(), e
    except UnicodeDecodeError:
        return _java_str(b[s:e], s), e


def _str32(b: bytes, p: int) -> tuple[Any, int]:
    s = p + 4
    e = s + _u32(b, p)[0]
    _need(b, e, p, "string")
    try:
        return b[s:e].decode(), e
    except UnicodeDecodeError:
        return _java_str(b[s:e], s), e


def _sym8(b: bytes, p: int) -> tuple[Any, int]:
    s = p + 1
    e = s + b[p]
    if e > len(b):
        _need(b, e, p, "symbol")
    raw = b[s:e]
    sym = _SYMBOLS.get(raw)
    return (sym if sym is not None else _symbol(raw)), e


def _sym32(b: bytes, p: int) -> tuple[Any, int]:
    s = p + 4
    e = s + _u32(b, p)[0]
    _need(b, e, p, "symbol")
    return _new_str(Symbol, b[s:e].decode("ascii")), e


# -- compound ----------------------------------------------------------------------------------


def _symbol(raw: bytes) -> Symbol:
    """Symbols repeat (annotation keys, content types): intern them by their bytes."""
    sym = _SYMBOLS.get(raw)
    if sym is None:
        sym = _new_str(Symbol, raw.decode("ascii"))
        if len(_SYMBOLS) >= 4096:
            _SYMBOLS.clear()
        _SYMBOLS[raw] = sym
    return sym


_SYMBOLS: dict[bytes, Symbol] = {}


def _items(b: bytes, p: int, end: int, count: int, what: str) -> list[Any]:
    if count > end - p:
        raise Bad(p, f"{what} claims {count} elements in {end - p} bytes")
    dec = _DECODERS
    out: list[Any] = []
    append = out.append
    new_int, i64, symbols = _new_int, _i64, _SYMBOLS
    # The constructors of typical message fields are inlined: a call per value is the cost. An
    # element running past ``end`` is caught by the check after the loop (or an IndexError).
    for _ in range(count):
        c = b[p]
        if c == 0xA1:
            s = p + 2
            p = s + b[p + 1]
            try:
                append(b[s:p].decode())
            except UnicodeDecodeError:
                append(_java_str(b[s:p], s))
        elif c == 0x40:
            append(None)
            p += 1
        elif c == 0xA3:
            s = p + 2
            p = s + b[p + 1]
            raw = b[s:p]
            sym = symbols.get(raw)
            append(sym if sym is not None else _symbol(raw))
        elif c == 0x83:
            append(new_int(Timestamp, i64(b, p + 1)[0]))
            p += 9
        elif c == 0x51:
            append(_BYTES[b[p + 1]])
            p += 2
        elif c == 0x41:
            append(True)
            p += 1
        elif c == 0x42:
            append(False)
            p += 1
        elif c == 0x54:
            append(_SMALL_INTS[b[p + 1]])
            p += 2
        elif c == 0x52:
            append(_SMALL_UINTS[b[p + 1]])
            p += 2
        elif c == 0x55:
            v = b[p + 1]
            append(v - 256 if v > 127 else v)
            p += 2
        else:
            v, p = dec[c](b, p + 1)
            append(v)
    if p != end:
        raise Bad(p, f"{what} elements end at byte {p}, its size says {end}")
    return out


def _list0(b: bytes, p: int) -> tuple[Any, int]:
    return [], p


def _list8(b: bytes, p: int) -> tuple[Any, int]:
    end = p + 1 + b[p]
    if end > len(b):
        _need(b, end, p, "list8")
    return _items(b, p + 2, end, b[p + 1], "list8"), end


def _list32(b: bytes, p: int) -> tuple[Any, int]:
    size, count = _u32u32(b, p)
    end = p + 4 + size
    if end > len(b):
        _need(b, end, p, "list32")
    return _items(b, p + 8, end, count, "list32"), end


def _pairs(b: bytes, p: int, end: int, count: int, what: str) -> dict[Any, Any]:
    if count & 1:
        raise Bad(p, f"{what} has an odd number ({count}) of keys and values")
    if count > end - p:
        raise Bad(p, f"{what} claims {count} elements in {end - p} bytes")
    dec = _DECODERS
    out: dict[Any, Any] = {}
    k: Any
    v: Any
    f64, symbols = _f64, _SYMBOLS
    for _ in range(count >> 1):
        # keys: strings (application properties) and symbols (annotations) inline
        c = b[p]
        if c == 0xA1:
            s = p + 2
            p = s + b[p + 1]
            try:
                k = b[s:p].decode()
            except UnicodeDecodeError:
                k = _java_str(b[s:p], s)
        elif c == 0xA3:
            s = p + 2
            p = s + b[p + 1]
            raw = b[s:p]
            k = symbols.get(raw)
            if k is None:
                k = _symbol(raw)
        else:
            k, p = dec[c](b, p + 1)
        c = b[p]
        if c == 0xA1:
            s = p + 2
            p = s + b[p + 1]
            try:
                v = b[s:p].decode()
            except UnicodeDecodeError:
                v = _java_str(b[s:p], s, k)
        elif c == 0x54:
            v = _SMALL_INTS[b[p + 1]]
            p += 2
        elif c == 0x51:
            v = _BYTES[b[p + 1]]
            p += 2
        elif c == 0x41:
            v = True
            p += 1
        elif c == 0x42:
            v = False
            p += 1
        elif c == 0x82:
            v = f64(b, p + 1)[0]
            p += 9
        elif c == 0x55:
            v = b[p + 1]
            if v > 127:
                v -= 256
            p += 2
        else:
            v, p = dec[c](b, p + 1)
        try:
            out[k] = v
        except TypeError:
            raise Bad(p, f"{what} has an unhashable key") from None
    if p != end:
        raise Bad(p, f"{what} elements end at byte {p}, its size says {end}")
    return out


def _map8(b: bytes, p: int) -> tuple[Any, int]:
    end = p + 1 + b[p]
    if end > len(b):
        _need(b, end, p, "map8")
    return _pairs(b, p + 2, end, b[p + 1], "map8"), end


def _map32(b: bytes, p: int) -> tuple[Any, int]:
    size, count = _u32u32(b, p)
    end = p + 4 + size
    if end > len(b):
        _need(b, end, p, "map32")
    return _pairs(b, p + 8, end, count, "map32"), end


#: constructor code -> Python type standing for it, for Array.element_type
_ELEMENT_TYPES: dict[int, type] = {
    0x40: type(None), 0x56: bool, 0x41: bool, 0x42: bool,
    0x50: UByte, 0x60: UShort, 0x70: UInt, 0x52: UInt, 0x43: UInt,
    0x80: ULong, 0x53: ULong, 0x44: ULong, 0x51: Byte, 0x61: Short, 0x71: Int, 0x54: Int,
    0x81: int, 0x55: int, 0x72: Float, 0x82: float, 0x74: Decimal32, 0x84: Decimal64,
    0x94: Decimal128, 0x73: Char, 0x83: Timestamp, 0x98: uuid.UUID,
    0xA0: bytes, 0xB0: bytes, 0xA1: str, 0xB1: str, 0xA3: Symbol, 0xB3: Symbol,
    0x45: list, 0xC0: list, 0xD0: list, 0xC1: dict, 0xD1: dict, 0xE0: Array, 0xF0: Array,
}  # fmt: skip
_ZERO_WIDTH = {0x40, 0x41, 0x42, 0x43, 0x44, 0x45}


def _array_body(b: bytes, p: int, end: int, count: int, what: str) -> Array:
    descriptor = None
    if b[p] == 0x00:
        descriptor, p = decode_at(b, p + 1)
    code = b[p]
    p += 1
    etype = _ELEMENT_TYPES.get(code)
    if etype is None:
        raise Bad(p - 1, f"{what} has an invalid element constructor {code:#04x}")
    if code in _ZERO_WIDTH:
        if count > MAX_ZERO_WIDTH_COUNT:
            raise Bad(p, f"{what} of {count} zero-width elements is unreasonably large")
    elif count > end - p:
        raise Bad(p, f"{what} claims {count} elements in {end - p} bytes")
    read = _DECODERS[code]
    items = []
    for _ in range(count):
        v, p = read(b, p)
        items.append(v)
    if p != end:
        raise Bad(p, f"{what} elements end at byte {p}, its size says {end}")
    return Array(etype, items, descriptor)


def _array8(b: bytes, p: int) -> tuple[Any, int]:
    size, count = _u8u8(b, p)
    end = p + 1 + size
    _need(b, end, p, "array8")
    return _array_body(b, p + 2, end, count, "array8"), end


def _array32(b: bytes, p: int) -> tuple[Any, int]:
    size, count = _u32u32(b, p)
    end = p + 4 + size
    _need(b, end, p, "array32")
    return _array_body(b, p + 8, end, count, "array32"), end


def _described(b: bytes, p: int) -> tuple[Any, int]:
    descriptor, p = decode_at(b, p)
    value, p = decode_at(b, p)
    return Described(descriptor, value), p


def _invalid(b: bytes, p: int) -> tuple[Any, int]:
    raise Bad(p - 1, f"invalid constructor byte {b[p - 1]:#04x}")


_DECODERS: list[Reader] = [_invalid] * 256
for _code, _reader in {
    0x00: _described,
    0x40: _null, 0x41: _true, 0x42: _false, 0x56: _boolean,
    0x50: _ubyte, 0x60: _ushort, 0x70: _uint, 0x52: _smalluint, 0x43: _uint0,
    0x80: _ulong, 0x53: _smallulong, 0x44: _ulong0,
    0x51: _byte, 0x61: _short, 0x71: _int, 0x54: _smallint, 0x81: _long, 0x55: _smalllong,
    0x72: _float, 0x82: _double, 0x73: _char, 0x83: _timestamp, 0x98: _uuid,
    0x74: _decimal(Decimal32, 4), 0x84: _decimal(Decimal64, 8), 0x94: _decimal(Decimal128, 16),
    0xA0: _vbin8, 0xB0: _vbin32, 0xA1: _str8, 0xB1: _str32, 0xA3: _sym8, 0xB3: _sym32,
    0x45: _list0, 0xC0: _list8, 0xD0: _list32, 0xC1: _map8, 0xD1: _map32,
    0xE0: _array8, 0xF0: _array32,
}.items():  # fmt: skip
    _DECODERS[_code] = _reader
DECODERS = _DECODERS


def decode_at(b: bytes, p: int) -> tuple[Any, int]:
    """Internal: one value at ``p``; raises the internal errors (see module doc)."""
    return _DECODERS[b[p]](b, p + 1)


_DECODE_ERRORS = (Bad, IndexError, struct.error, UnicodeDecodeError, RecursionError, TypeError, ValueError)


def decode_value(buf: bytes, pos: int = 0, where: str = "value") -> tuple[Any, int]:
    """Decode one AMQP value at ``pos``: ``(value, end offset)``. Raises MessageFormatException."""
    try:
        return _DECODERS[buf[pos]](buf, pos + 1)
    except _DECODE_ERRORS as e:
        raise format_error(e, where) from None


# -- skipping (for sections a reader does not need decoded) -------------------------------------

_FIXED_WIDTH: dict[int, int] = {
    0x40: 0, 0x41: 0, 0x42: 0, 0x43: 0, 0x44: 0, 0x45: 0,
    0x50: 1, 0x51: 1, 0x52: 1, 0x53: 1, 0x54: 1, 0x55: 1, 0x56: 1,
    0x60: 2, 0x61: 2, 0x70: 4, 0x71: 4, 0x72: 4, 0x73: 4, 0x74: 4,
    0x80: 8, 0x81: 8, 0x82: 8, 0x83: 8, 0x84: 8, 0x94: 16, 0x98: 16,
}  # fmt: skip


def skip_at(b: bytes, p: int) -> int:
    """Internal: the offset just past the value at ``p``, without decoding it."""
    code = b[p]
    p += 1
    w = _FIXED_WIDTH.get(code)
    if w is not None:
        e = p + w
    elif code == 0x00:
        return skip_at(b, skip_at(b, p))
    elif code in (0xA0, 0xA1, 0xA3, 0xC0, 0xC1, 0xE0):
        e = p + 1 + b[p]
    elif code in (0xB0, 0xB1, 0xB3, 0xD0, 0xD1, 0xF0):
        e = p + 4 + _u32(b, p)[0]
    else:
        raise Bad(p - 1, f"invalid constructor byte {code:#04x}")
    if e > len(b):
        _need(b, e, p, f"value {code:#04x}")
    return e


def skip_value(buf: bytes, pos: int = 0, where: str = "value") -> int:
    """The offset just past the encoded value at ``pos``, without building it: the broker routes
    on a message's headers and must step over a body it never looks at. Malformed input raises
    MessageFormatException naming ``where``."""
    try:
        return skip_at(buf, pos)
    except _DECODE_ERRORS as e:
        raise format_error(e, where) from None
