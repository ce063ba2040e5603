"""The AMQP value codec against proton's codec, both directions, and its handling of bad input."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mapping_proton_oracle import amqp_values, proton_decode_value, proton_encode_value, typed

from amqp_jms.exceptions import MessageFormatException
from amqp_jms.mapping.codec import Array, decode_value, encode_value, skip_value
from amqp_jms.types import (
    Byte,
    Char,
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


@settings(max_examples=200, deadline=None)
@given(amqp_values)
def test_our_encoding_decodes_with_proton_to_the_same_typed_value(v: Any) -> None:
    assert typed(proton_decode_value(encode_value(v))) == typed(v)


@settings(max_examples=200, deadline=None)
@given(amqp_values)
def test_proton_encoding_decodes_with_ours_to_the_same_typed_value(v: Any) -> None:
    data = proton_encode_value(v)
    decoded, end = decode_value(data)
    assert end == len(data)
    assert typed(decoded) == typed(v)
    assert skip_value(data) == len(data)


@settings(max_examples=100, deadline=None)
@given(amqp_values)
def test_round_trip_is_exact(v: Any) -> None:
    data = encode_value(v)
    assert typed(decode_value(data)[0]) == typed(v)
    assert encode_value(decode_value(data)[0]) == data


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (None, "40"),
        (True, "41"),
        (False, "42"),
        (UInt(0), "43"),
        (UInt(7), "5207"),
        (UInt(300), "700000012c"),
        (ULong(0), "44"),
        (ULong(255), "53ff"),
        (5, "5505"),
        (-200, "81ffffffffffffff38"),
        (Int(-1), "54ff"),
        (Byte(-2), "51fe"),
        (Short(3), "610003"),
        (UByte(9), "5009"),
        (UShort(9), "600009"),
        (Char("é"), "73000000e9"),
        (Symbol("ab"), "a3026162"),
        ("ab", "a1026162"),
        (b"\x01", "a00101"),
        ([], "45"),
        ([None], "c0020140"),
        ({Symbol("a"): Byte(1)}, "c10602a301615101"),
        (Timestamp(1), "830000000000000001"),
        (Float(1.5), "723fc00000"),
        (1.5, "823ff8000000000000"),
    ],
)
def test_smallest_encodings_are_written(value: Any, wire: str) -> None:
    assert encode_value(value).hex() == wire


def test_long_strings_and_containers_switch_to_32_bit_encodings() -> None:
    assert encode_value("x" * 256)[:5] == bytes.fromhex("b100000100")
    assert encode_value(Symbol("s" * 300))[:1] == b"\xb3"
    assert encode_value(b"\0" * 256)[:1] == b"\xb0"
    assert encode_value(["x" * 253])[:1] == b"\xd0"
    assert encode_value({str(i): i for i in range(200)})[:1] == b"\xd1"
    assert typed(proton_decode_value(encode_value(["x" * 253]))) == typed(["x" * 253])


@pytest.mark.parametrize(
    ("wire", "value"),
    [
        ("56 01", True),
        ("70 00000005", UInt(5)),
        ("80 0000000000000005", ULong(5)),
        ("71 ffffffff", Int(-1)),
        ("81 0000000000000003", 3),
        ("b1 00000002 6869", "hi"),
        ("b3 00000002 6869", Symbol("hi")),
        ("b0 00000001 ff", b"\xff"),
        ("d0 00000005 00000001 40", [None]),
        ("d1 0000000a 00000002 a10161 a10162", {"a": "b"}),
        ("e0 04 02 54 01 02", Array(Int, [Int(1), Int(2)])),
        ("f0 0000000d 00000002 71 00000001 00000002", Array(Int, [Int(1), Int(2)])),
        ("00 a3 01 78 a1 01 79", Described(Symbol("x"), "y")),
        ("00 53 05 45", Described(ULong(5), [])),
    ],
)
def test_every_encoding_is_read(wire: str, value: Any) -> None:
    data = bytes.fromhex(wire.replace(" ", ""))
    v, end = decode_value(data)
    assert end == len(data)
    assert typed(v) == typed(value)


def test_described_array_round_trips_through_proton() -> None:
    arr = Array(Symbol, [Symbol("a"), Symbol("b")], descriptor=ULong(9))
    assert typed(proton_decode_value(encode_value(arr))) == typed(arr)
    assert typed(decode_value(proton_encode_value(arr))[0]) == typed(arr)


def test_uuid_and_char_round_trip() -> None:
    u = uuid.uuid4()
    assert decode_value(encode_value(u))[0] == u
    assert decode_value(encode_value(Char("😀")))[0] == Char("😀")


@pytest.mark.parametrize(
    ("wire", "what"),
    [
        ("", "truncated"),
        ("a1 05 6869", "past the end"),
        ("b1 00000010 6869", "past the end"),
        ("c0 05 03 40 40", "past the end"),
        ("c0 02 03 40", "claims 3 elements"),
        ("c1 02 01 40", "odd number"),
        ("c1 04 02 40 40 40", "elements end"),
        ("ff", "invalid constructor"),
        ("56 07", "boolean"),
        ("73 00110000", "code point"),
        ("a1 02 c328", "UTF-8"),
        ("a3 01 ff", "ASCII"),
        ("e0 03 01 ff 00", "element constructor"),
        ("f0 00000005 ffffffff 40", "zero-width"),
        ("c1 03 02 45 40", "unhashable"),
        ("71 0000", "truncated"),
    ],
)
def test_malformed_values_raise_message_format_exception_saying_what(wire: str, what: str) -> None:
    with pytest.raises(MessageFormatException, match=what):
        decode_value(bytes.fromhex(wire.replace(" ", "")))


def test_deep_nesting_is_refused_not_a_crash() -> None:
    data = b"\xc0\x01\x01" * 5000  # lists inside lists, truncated at the bottom
    with pytest.raises(MessageFormatException):
        decode_value(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_garbage_raises_only_message_format_exception(data: bytes) -> None:
    try:
        decode_value(data)
    except MessageFormatException:
        pass


@pytest.mark.parametrize(
    "value",
    [object(), 2**64, UInt(5).__class__, {1: object()}, Array(object, [1])],
)
def test_values_without_an_amqp_encoding_raise(value: Any) -> None:
    with pytest.raises(MessageFormatException):
        encode_value(value)


def test_float_is_binary32_on_the_wire() -> None:
    assert decode_value(encode_value(Float(1.1)))[0] == Float(1.1)
    assert type(decode_value(encode_value(Float(1.1)))[0]) is Float


def test_public_names_are_exported() -> None:
    import amqp_jms.mapping as mapping
    import amqp_jms.mapping.codec as codec

    for module in (mapping, codec):
        assert sorted(module.__all__) == sorted(set(module.__all__))
        for name in module.__all__:
            assert getattr(module, name) is not None, name
    assert {"encode", "decode", "MappingContext"} <= set(mapping.__all__)
    assert list(mapping.MappingContext.__dataclass_fields__) == [
        "consumer_destination",
        "queue_prefix",
        "topic_prefix",
        "time_to_live",
        "now_ms",
    ]
