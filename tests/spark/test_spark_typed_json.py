"""Typed JSON keeps every JMS/AMQP type of map bodies, stream bodies and properties."""

from __future__ import annotations

import math
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.exceptions import MessageFormatException
from amqp_jms.spark.typed_json import dumps_list, dumps_map, loads_list, loads_map
from amqp_jms.types import Byte, Char, Double, Float, Int, Long, Short, Symbol, Timestamp, UInt, ULong


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return type(a) is type(b) and math.isnan(b)  # type: ignore[arg-type]
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_each_jms_type_round_trips_with_its_type() -> None:
    values = {
        "b": Byte(-5),
        "s": Short(300),
        "i": Int(70000),
        "l": 2**40,
        "f": Float(1.5),
        "d": 2.25,
        "c": Char("x"),
        "t": "text",
        "x": b"\x00\x01",
        "z": True,
        "n": None,
        "u": UInt(7),
        "ul": ULong(2**64 - 1),
        "ts": Timestamp(1700000000000),
        "sym": Symbol("a:b"),
        "id": uuid.UUID(int=5),
        "nan": float("nan"),
        "inf": Float(float("-inf")),
    }
    back = loads_map(dumps_map(values))
    assert set(back) == set(values)
    for name, value in values.items():
        assert _same(value, back[name]), name


def test_list_keeps_order_and_types() -> None:
    values = [Int(1), 1, Double(1.0), Float(1.0), "1", Char("1"), b"1", None]
    back = loads_list(dumps_list(values))
    assert [type(v) for v in back] == [Int, int, float, Float, str, Char, bytes, type(None)]
    assert back == [1, 1, 1.0, 1.0, "1", "1", b"1", None]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"type": "byte", "value": 300}}',
        '{"a": {"type": "wat"}}',
        '{"a": 5}',
        "[",
        '{"a": {"type": "int"}}',
    ],
)
def test_malformed_typed_json_is_a_message_format_exception(text: str) -> None:
    with pytest.raises(MessageFormatException):
        loads_map(text)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-128, 127).map(Byte),
    st.integers(-(2**15), 2**15 - 1).map(Short),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
    st.characters().map(Char),
    st.floats(width=32, allow_nan=False).map(Float),
    st.integers(-(2**63), 2**63 - 1).map(Long),
)


@settings(max_examples=150)
@given(st.dictionaries(st.text(min_size=1), _scalars))
def test_any_property_map_round_trips(values: dict[str, object]) -> None:
    back = loads_map(dumps_map(values))
    for name, value in values.items():
        expected = int(value) if type(value) is Long else value
        assert _same(expected, back[name]) or (type(value) is Long and back[name] == value)
