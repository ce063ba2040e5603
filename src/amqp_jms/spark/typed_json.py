"""Typed values as JSON: how map bodies, stream bodies and typed properties travel in a row.

A Spark row has no column type that can hold "a byte 5 next to a float 1.5 next to a char", so
typed values are written as JSON objects that keep their JMS/AMQP type::

    {"type": "int", "value": 5}      {"type": "float", "value": 1.5}
    {"type": "char", "value": "x"}   {"type": "bytes", "value": "AAE="}   (base64)
    {"type": "null"}                 {"type": "list", "value": [...]}

``dumps_map`` writes ``{"name": <typed>, ...}`` (map bodies, typed properties), ``dumps_list``
writes ``[<typed>, ...]`` (stream bodies). ``loads_*`` read them back to the
:mod:`amqp_jms.types` representation, so a round trip through a row is lossless. Floats that JSON
cannot carry (NaN, ±Infinity) are written as the strings ``"NaN"``, ``"Infinity"``,
``"-Infinity"``.
"""

from __future__ import annotations

import base64
import json
import math
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ..exceptions import MessageFormatException
from ..types import (
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

__all__ = ["dumps_list", "dumps_map", "from_typed", "loads_list", "loads_map", "to_typed"]

_INTS: dict[type, str] = {
    Byte: "byte",
    Short: "short",
    Int: "int",
    Long: "long",
    int: "long",
    UByte: "ubyte",
    UShort: "ushort",
    UInt: "uint",
    ULong: "ulong",
    Timestamp: "timestamp",
}
_INT_CTORS: dict[str, Any] = {
    "byte": Byte,
    "short": Short,
    "int": Int,
    "long": int,
    "ubyte": UByte,
    "ushort": UShort,
    "uint": UInt,
    "ulong": ULong,
    "timestamp": Timestamp,
}
_DECIMALS: dict[type, str] = {Decimal32: "decimal32", Decimal64: "decimal64", Decimal128: "decimal128"}
_DECIMAL_CTORS: dict[str, Any] = {v: k for k, v in _DECIMALS.items()}


def _float_out(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float(value)


def _float_in(value: Any) -> float:
    if isinstance(value, str):
        return float({"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(value, value))
    return float(value)


def to_typed(value: Any) -> dict[str, Any]:
    """One value as a ``{"type", "value"}`` JSON-able dict."""
    if value is None:
        return {"type": "null"}
    kind = type(value)
    if kind is bool:
        return {"type": "boolean", "value": value}
    if kind in _INTS:
        return {"type": _INTS[kind], "value": int(value)}
    if kind is Float:
        return {"type": "float", "value": _float_out(value)}
    if kind is float or kind is Double:
        return {"type": "double", "value": _float_out(value)}
    if kind is Char:
        return {"type": "char", "value": str(value)}
    if kind is Symbol:
        return {"type": "symbol", "value": str(value)}
    if isinstance(value, str):
        return {"type": "string", "value": str(value)}
    if kind in _DECIMALS:
        return {"type": _DECIMALS[kind], "value": bytes(value).hex()}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"type": "bytes", "value": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, uuid.UUID):
        return {"type": "uuid", "value": str(value)}
    if isinstance(value, Described):
        return {"type": "described", "descriptor": to_typed(value.descriptor), "value": to_typed(value.value)}
    if isinstance(value, Mapping):
        return {"type": "map", "value": [[to_typed(k), to_typed(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return {"type": "list", "value": [to_typed(v) for v in value]}
    if isinstance(value, int):
        return {"type": "long", "value": int(value)}
    if isinstance(value, float):
        return {"type": "double", "value": _float_out(value)}
    raise MessageFormatException(f"cannot represent a {type(value).__name__} value as typed JSON")


def from_typed(item: Any) -> Any:
    """The inverse of :func:`to_typed`."""
    if not isinstance(item, dict) or "type" not in item:
        raise MessageFormatException(f"typed JSON value must be an object with a 'type', got {item!r}")
    kind = item["type"]
    value: Any = item.get("value")
    try:
        if kind == "null":
            return None
        if kind == "boolean":
            if not isinstance(value, bool):
                raise TypeError("boolean value must be true or false")
            return value
        if kind in _INT_CTORS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{kind} value must be an integer")
            return _INT_CTORS[kind](value)
        if kind == "float":
            return Float(_float_in(value))
        if kind == "double":
            return _float_in(value)
        if kind == "char":
            return Char(value)
        if kind == "symbol":
            return Symbol(value)
        if kind == "string":
            if not isinstance(value, str):
                raise TypeError("string value must be a string")
            return value
        if kind == "bytes":
            return base64.b64decode(value, validate=True)
        if kind in _DECIMAL_CTORS:
            return _DECIMAL_CTORS[kind](bytes.fromhex(value))
        if kind == "uuid":
            return uuid.UUID(value)
        if kind == "described":
            return Described(from_typed(item.get("descriptor")), from_typed(value))
        if kind == "map":
            return {from_typed(k): from_typed(v) for k, v in value}
        if kind == "list":
            return [from_typed(v) for v in value]
    except MessageFormatException:
        raise
    except (TypeError, ValueError, AttributeError) as exc:
        raise MessageFormatException(f"bad typed JSON {kind} value {value!r}: {exc}") from None
    raise MessageFormatException(f"unknown typed JSON type {kind!r}")


_quote = json.encoder.encode_basestring


def _dump_one(value: Any) -> str:
    """One typed value as compact JSON; the common scalar types without building dicts."""
    kind = type(value)
    if kind is str:
        return '{"type":"string","value":' + _quote(value) + "}"
    name = _INTS.get(kind)
    if name is not None:
        return '{"type":"' + name + '","value":' + int.__repr__(value) + "}"
    if kind is bool:
        return '{"type":"boolean","value":true}' if value else '{"type":"boolean","value":false}'
    return json.dumps(to_typed(value), separators=(",", ":"))


#: ``"name":`` for property and map keys seen (a stream repeats the same few names)
_KEYS: dict[str, str] = {}
#: ``{"type":"int","value":`` … for the integral types (what most typed values are)
_INT_PREFIXES = {kind: '{"type":"' + name + '","value":' for kind, name in _INTS.items()}


def dumps_map(values: Mapping[str, Any]) -> str:
    """``{"name": typed, ...}`` as compact JSON (same text as ``json.dumps`` of the typed dicts)."""
    parts = []
    keys = _KEYS
    ints = _INT_PREFIXES
    for k, v in values.items():
        key = keys.get(k) if type(k) is str else None
        if key is None:
            key = _quote(str(k)) + ":"
            if type(k) is str:
                if len(keys) >= 4096:
                    keys.clear()
                keys[k] = key
        kind = type(v)
        if kind is str:
            parts.append(key + '{"type":"string","value":' + _quote(v) + "}")
        elif kind in ints:
            parts.append(key + ints[kind] + int.__repr__(v) + "}")
        else:
            parts.append(key + _dump_one(v))
    return "{" + ",".join(parts) + "}"


def dumps_list(values: Sequence[Any]) -> str:
    """``[typed, ...]`` as compact JSON."""
    return "[" + ",".join(_dump_one(v) for v in values) + "]"


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise MessageFormatException(f"typed JSON does not parse: {exc}") from None


def loads_map(text: str) -> dict[str, Any]:
    data = _parse(text)
    if not isinstance(data, dict):
        raise MessageFormatException("typed JSON map must be a JSON object")
    return {str(k): from_typed(v) for k, v in data.items()}


def loads_list(text: str) -> list[Any]:
    data = _parse(text)
    if not isinstance(data, list):
        raise MessageFormatException("typed JSON list must be a JSON array")
    return [from_typed(v) for v in data]
