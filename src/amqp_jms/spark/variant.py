"""Typed properties as one Spark ``VARIANT``: an object whose values keep their JMS types.

Why: with ``typedPropertiesAs=variant`` the ``typed_properties`` column is queried with Spark 4's
variant syntax (``typed_properties:total::int``, ``variant_get``, ``schema_of_variant``) instead
of ``from_json`` over typed JSON. PySpark 4.3 carries a VARIANT through the Python data source's
Arrow path as a struct of ``value`` and ``metadata`` binaries (``pyspark.sql.pandas.types``), so
the executors write the Variant binary encoding (Spark's ``common/variant/README.md``) directly,
one object per message. Its primitive types hold every JMS property type exactly:

=======================  =====================  =======================================
JMS / AMQP type          variant type           back (a write with a VARIANT column)
=======================  =====================  =======================================
boolean                  boolean                boolean
byte, short, int, long   int8, int16, int32,    byte, short, int, long
                         int64
float, double            float, double          float, double
String, char, symbol     string                 String
ubyte, ushort, uint      int16, int32, int64    short, int, long
ulong                    int64 or decimal(20,0) long (a decimal: double)
timestamp                timestamp (UTC)        long (ms, as a JMS property can hold)
binary                   binary                 refused (not a JMS property type)
anything else            string (typed JSON)    String
=======================  =====================  =======================================

A VARIANT built by the user (``parse_json``) reads back the same way: JSON numbers with a fraction
are decimals in a variant, and become double properties.
"""

from __future__ import annotations

import json
import struct
import uuid
from collections.abc import Mapping
from typing import Any

from ..exceptions import MessageFormatException
from ..types import Byte, Char, Double, Float, Int, Long, Short, Symbol, Timestamp, UByte, UInt, ULong, UShort
from .typed_json import to_typed

__all__ = ["decode_properties", "encode_properties"]

_PRIMITIVE, _SHORT_STR, _OBJECT = 0, 1, 2
_NULL, _TRUE, _FALSE, _INT1, _INT2, _INT4, _INT8, _DOUBLE = 0, 1, 2, 3, 4, 5, 6, 7
_DECIMAL4, _DECIMAL8, _DECIMAL16, _TIMESTAMP, _FLOAT, _BINARY, _LONG_STR = 8, 9, 10, 12, 14, 15, 16
_VERSION = 1

_INT_WIDTH: dict[type, tuple[int, int]] = {
    Byte: (_INT1, 1),
    Short: (_INT2, 2),
    UByte: (_INT2, 2),
    Int: (_INT4, 4),
    UShort: (_INT4, 4),
    Long: (_INT8, 8),
    UInt: (_INT8, 8),
    int: (_INT8, 8),
}


def _primitive(type_id: int, payload: bytes = b"") -> bytes:
    return bytes([(type_id << 2) | _PRIMITIVE]) + payload


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) <= 0x3F:
        return bytes([(len(data) << 2) | _SHORT_STR]) + data
    return _primitive(_LONG_STR, len(data).to_bytes(4, "little") + data)


def _value(value: Any) -> bytes:
    """One property value in the variant encoding."""
    kind = type(value)
    if value is None:
        return _primitive(_NULL)
    if kind is bool:
        return _primitive(_TRUE if value else _FALSE)
    if kind is str or kind is Char or kind is Symbol:
        return _string(str(value))
    if kind is Float:
        return _primitive(_FLOAT, struct.pack("<f", value))
    if kind is float or kind is Double:
        return _primitive(_DOUBLE, struct.pack("<d", value))
    if kind is Timestamp:
        return _primitive(_TIMESTAMP, (int(value) * 1000).to_bytes(8, "little", signed=True))
    if kind is ULong or kind in _INT_WIDTH:
        type_id, width = _INT_WIDTH.get(kind, (_INT8, 8))
        number = int(value)
        if -(1 << 63) <= number < (1 << 63):
            return _primitive(type_id, number.to_bytes(width, "little", signed=True))
        return _primitive(_DECIMAL16, bytes([0]) + number.to_bytes(16, "little", signed=True))
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        return _primitive(_BINARY, len(data).to_bytes(4, "little") + data)
    if isinstance(value, uuid.UUID):
        return _string(str(value))
    return _string(json.dumps(to_typed(value), separators=(",", ":")))


def _size(largest: int) -> int:
    """Bytes for an unsigned integer up to ``largest`` (1 to 4)."""
    return 1 if largest <= 0xFF else 2 if largest <= 0xFFFF else 3 if largest <= 0xFFFFFF else 4


def _metadata(keys: list[str]) -> bytes:
    encoded = [k.encode("utf-8") for k in keys]
    total = sum(map(len, encoded))
    size = _size(max(total, len(keys)))
    out = bytearray([_VERSION | (1 << 4) | ((size - 1) << 6)])  # sorted, unique strings
    out += len(keys).to_bytes(size, "little")
    offset = 0
    for key in encoded:
        out += offset.to_bytes(size, "little")
        offset += len(key)
    out += offset.to_bytes(size, "little")
    for key in encoded:
        out += key
    return bytes(out)


def encode_properties(props: Mapping[str, Any]) -> tuple[bytes, bytes]:
    """``(value, metadata)`` of a variant object holding ``props`` (keys sorted, as the
    encoding requires; the dictionary is exactly those keys, so field id i is key i)."""
    keys = sorted(props)
    values = [_value(props[k]) for k in keys]
    data = b"".join(values)
    count = len(keys)
    large = count > 0xFF
    id_size = _size(max(count - 1, 0))
    offset_size = _size(len(data))
    header = (int(large) << 6) | ((id_size - 1) << 4) | ((offset_size - 1) << 2) | _OBJECT
    out = bytearray([header])
    out += count.to_bytes(4 if large else 1, "little")
    for i in range(count):
        out += i.to_bytes(id_size, "little")
    offset = 0
    for value in values:
        out += offset.to_bytes(offset_size, "little")
        offset += len(value)
    out += offset.to_bytes(offset_size, "little")
    out += data
    return bytes(out), _metadata(keys)


def _uint(data: bytes, pos: int, size: int) -> int:
    return int.from_bytes(data[pos : pos + size], "little")


def _key(metadata: bytes, field_id: int) -> str:
    size = ((metadata[0] >> 6) & 0x3) + 1
    count = _uint(metadata, 1, size)
    strings = 1 + (count + 2) * size
    start = _uint(metadata, 1 + (field_id + 1) * size, size)
    end = _uint(metadata, 1 + (field_id + 2) * size, size)
    return metadata[strings + start : strings + end].decode("utf-8")


def _decode_value(data: bytes, pos: int, name: str) -> Any:
    header = data[pos]
    basic, info = header & 0x3, header >> 2
    if basic == _SHORT_STR:
        return data[pos + 1 : pos + 1 + info].decode("utf-8")
    if basic != _PRIMITIVE:
        raise MessageFormatException(
            f"column 'typed_properties': property {name!r} is a variant object or array; a JMS "
            "property value is a boolean, a number or a string"
        )
    body = pos + 1
    if info == _NULL:
        return None
    if info in (_TRUE, _FALSE):
        return info == _TRUE
    ints = {_INT1: (Byte, 1), _INT2: (Short, 2), _INT4: (Int, 4), _INT8: (Long, 8)}
    if info in ints:
        ctor, width = ints[info]
        return ctor(int.from_bytes(data[body : body + width], "little", signed=True))
    if info == _FLOAT:
        return Float(struct.unpack_from("<f", data, body)[0])
    if info == _DOUBLE:
        return Double(struct.unpack_from("<d", data, body)[0])
    if info in (_DECIMAL4, _DECIMAL8, _DECIMAL16):
        width = {_DECIMAL4: 4, _DECIMAL8: 8, _DECIMAL16: 16}[info]
        scale = data[body]
        unscaled = int.from_bytes(data[body + 1 : body + 1 + width], "little", signed=True)
        if scale == 0 and -(1 << 63) <= unscaled < (1 << 63):
            return Long(unscaled)
        return Double(unscaled / 10**scale)
    if info == _TIMESTAMP:
        return Long(int.from_bytes(data[body : body + 8], "little", signed=True) // 1000)
    if info == _LONG_STR:
        length = _uint(data, body, 4)
        return data[body + 4 : body + 4 + length].decode("utf-8")
    raise MessageFormatException(
        f"column 'typed_properties': property {name!r} has variant type {info}, which no JMS "
        "property type holds (boolean, byte, short, int, long, float, double, String)"
    )


def decode_properties(value: bytes, metadata: bytes) -> dict[str, Any]:
    """A variant object's fields as JMS property values (see the table above)."""
    header = value[0]
    basic, info = header & 0x3, header >> 2
    if basic != _OBJECT:
        raise MessageFormatException(
            "column 'typed_properties' must be a variant object of property names to values"
        )
    large = (info >> 4) & 0x1
    id_size = ((info >> 2) & 0x3) + 1
    offset_size = (info & 0x3) + 1
    count_size = 4 if large else 1
    count = _uint(value, 1, count_size)
    ids = 1 + count_size
    offsets = ids + count * id_size
    data = offsets + (count + 1) * offset_size
    out: dict[str, Any] = {}
    for i in range(count):
        name = _key(metadata, _uint(value, ids + i * id_size, id_size))
        out[name] = _decode_value(value, data + _uint(value, offsets + i * offset_size, offset_size), name)
    return out
