"""Test helper: conversions between proton's Python values and amqp_jms typed values, and
hypothesis strategies for typed AMQP values. proton's codec is the reference oracle."""

from __future__ import annotations

import math
import uuid
from typing import Any

import proton
from hypothesis import strategies as st

from amqp_jms.mapping.codec import Array
from amqp_jms.types import (
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

_TO_OURS: list[tuple[type, type]] = [
    (proton.symbol, Symbol),
    (proton.char, Char),
    (proton.ubyte, UByte),
    (proton.ushort, UShort),
    (proton.uint, UInt),
    (proton.ulong, ULong),
    (proton.byte, Byte),
    (proton.short, Short),
    (proton.int32, Int),
    (proton.timestamp, Timestamp),
    (proton.float32, Float),
]
_DECIMALS_FROM = {proton.decimal32: Decimal32, proton.decimal64: Decimal64, proton.decimal128: Decimal128}

_PROTON_ARRAY_TYPE: dict[type, int] = {
    bool: proton.Data.BOOL,
    UByte: proton.Data.UBYTE,
    UShort: proton.Data.USHORT,
    UInt: proton.Data.UINT,
    ULong: proton.Data.ULONG,
    Byte: proton.Data.BYTE,
    Short: proton.Data.SHORT,
    Int: proton.Data.INT,
    int: proton.Data.LONG,
    Float: proton.Data.FLOAT,
    float: proton.Data.DOUBLE,
    Char: proton.Data.CHAR,
    Timestamp: proton.Data.TIMESTAMP,
    uuid.UUID: proton.Data.UUID,
    bytes: proton.Data.BINARY,
    str: proton.Data.STRING,
    Symbol: proton.Data.SYMBOL,
    list: proton.Data.LIST,
    dict: proton.Data.MAP,
}
_FROM_PROTON_ARRAY_TYPE = {v: k for k, v in _PROTON_ARRAY_TYPE.items()}


def from_proton(v: Any) -> Any:
    """A value decoded by proton as the amqp_jms typed value it stands for."""
    if isinstance(v, memoryview):
        return bytes(v)
    if isinstance(v, proton.Array):
        return Array(
            _FROM_PROTON_ARRAY_TYPE[v.type],
            [from_proton(x) for x in v.elements],
            None if v.descriptor is proton.UNDESCRIBED else from_proton(v.descriptor),
        )
    if isinstance(v, proton.Described):
        return Described(from_proton(v.descriptor), from_proton(v.value))
    dec = _DECIMALS_FROM.get(type(v))
    if dec is not None:
        return dec(bytes(v) if isinstance(v, bytes) else int(v).to_bytes(dec.size, "big"))
    for pt, ours in _TO_OURS:
        if isinstance(v, pt):
            return ours(v)
    if isinstance(v, dict):
        return {from_proton(k): from_proton(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_proton(x) for x in v]
    return v


_TO_PROTON: dict[type, Any] = {
    Symbol: proton.symbol,
    Char: proton.char,
    UByte: proton.ubyte,
    UShort: proton.ushort,
    UInt: proton.uint,
    ULong: proton.ulong,
    Byte: proton.byte,
    Short: proton.short,
    Int: proton.int32,
    Timestamp: proton.timestamp,
    Float: proton.float32,
    Decimal32: lambda v: proton.decimal32(int.from_bytes(v, "big")),
    Decimal64: lambda v: proton.decimal64(int.from_bytes(v, "big")),
    Decimal128: lambda v: proton.decimal128(bytes(v)),
}


def to_proton(v: Any) -> Any:
    """An amqp_jms typed value as the proton value that encodes to the same AMQP type."""
    if isinstance(v, Array):
        d: Any = proton.UNDESCRIBED if v.descriptor is None else to_proton(v.descriptor)
        return proton.Array(d, _PROTON_ARRAY_TYPE[v.element_type], *[to_proton(x) for x in v])
    if isinstance(v, Described):
        return proton.Described(to_proton(v.descriptor), to_proton(v.value))
    f = _TO_PROTON.get(type(v))
    if f is not None:
        return f(v)
    if isinstance(v, dict):
        return {to_proton(k): to_proton(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_proton(x) for x in v]
    return v


def typed(v: Any) -> Any:
    """A type-exact comparison key (``Byte(1) == 1`` in Python, but not on the wire)."""
    if isinstance(v, Array):
        return ("array", v.element_type.__name__, typed(v.descriptor), [typed(x) for x in v])
    if isinstance(v, Described):
        return ("described", typed(v.descriptor), typed(v.value))
    if isinstance(v, dict):
        return ("map", sorted(((repr(typed(k)), typed(x)) for k, x in v.items()), key=lambda kv: kv[0]))
    if isinstance(v, list):
        return ("list", [typed(x) for x in v])
    if isinstance(v, float) and math.isnan(v):
        return (type(v).__name__, "nan")
    return (type(v).__name__, v)


def proton_encode_value(v: Any) -> bytes:
    d = proton.Data()
    d.put_object(to_proton(v))
    return bytes(d.encode())


def proton_decode_value(b: bytes) -> Any:
    d = proton.Data()
    d.decode(b)
    d.rewind()
    d.next()
    return from_proton(d.get_object())


# -- strategies --------------------------------------------------------------------------------

_f32 = st.floats(width=32, allow_nan=False).map(Float)
SCALARS: dict[type, st.SearchStrategy[Any]] = {
    bool: st.booleans(),
    UByte: st.integers(0, 255).map(UByte),
    UShort: st.integers(0, 2**16 - 1).map(UShort),
    UInt: st.one_of(st.integers(0, 300), st.integers(0, 2**32 - 1)).map(UInt),
    ULong: st.one_of(st.integers(0, 300), st.integers(0, 2**64 - 1)).map(ULong),
    Byte: st.integers(-128, 127).map(Byte),
    Short: st.integers(-(2**15), 2**15 - 1).map(Short),
    Int: st.one_of(st.integers(-200, 200), st.integers(-(2**31), 2**31 - 1)).map(Int),
    int: st.one_of(st.integers(-200, 200), st.integers(-(2**63), 2**63 - 1)),
    Float: _f32,
    float: st.floats(allow_nan=False),
    Char: st.characters(exclude_categories=["Cs"]).map(Char),
    Timestamp: st.integers(-(2**63), 2**63 - 1).map(Timestamp),
    uuid.UUID: st.uuids(),
    bytes: st.binary(max_size=300),
    str: st.text(max_size=300),
    Symbol: st.text(st.characters(max_codepoint=127), max_size=40).map(Symbol),
}
_DECIMALS = st.one_of(
    st.binary(min_size=4, max_size=4).map(Decimal32),
    st.binary(min_size=8, max_size=8).map(Decimal64),
    st.binary(min_size=16, max_size=16).map(Decimal128),
)
scalar_values = st.one_of(st.none(), *SCALARS.values(), _DECIMALS)
hashable_keys = st.one_of(
    st.text(max_size=20), st.integers(-(2**63), 2**63 - 1), SCALARS[Symbol], SCALARS[ULong], SCALARS[Int]
)


@st.composite
def arrays(draw: st.DrawFn) -> Array:
    t = draw(st.sampled_from(sorted(SCALARS, key=lambda c: c.__name__)))
    return Array(t, draw(st.lists(SCALARS[t], max_size=6)))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=6),
        st.dictionaries(hashable_keys, children, max_size=6),
        # proton's Python binding misreads a described value directly inside another one
        st.builds(
            Described,
            st.one_of(SCALARS[ULong], SCALARS[Symbol]),
            children.filter(lambda x: not isinstance(x, Described)),
        ),
    )


amqp_values = st.recursive(st.one_of(scalar_values, arrays()), _extend, max_leaves=20)
