"""JMS properties: table 3.2 cell by cell, String parsing as Java does it, nulls, ranges, types."""

from __future__ import annotations

import math
from typing import Any

import pytest

from amqp_jms import (
    MessageFormatException,
    MessageNotWriteableException,
    NumberFormatException,
    TextMessage,
)
from amqp_jms.message import Message
from amqp_jms.message._seam import mark_received
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Char, Float, Int, Short, UInt

GET_TYPES = ["boolean", "byte", "short", "int", "long", "float", "double", "string"]

# Row: the set method and the value it is given. Expected: column -> value read back, or the
# exception. Unmarked cells of table 3.2 must raise MessageFormatException.
MFE = MessageFormatException
TABLE_3_2: dict[str, tuple[Any, dict[str, Any]]] = {
    "boolean": (True, {"boolean": True, "string": "true"}),
    "byte": (-5, {"byte": -5, "short": -5, "int": -5, "long": -5, "string": "-5"}),
    "short": (1234, {"short": 1234, "int": 1234, "long": 1234, "string": "1234"}),
    "int": (70000, {"int": 70000, "long": 70000, "string": "70000"}),
    "long": (2**40, {"long": 2**40, "string": "1099511627776"}),
    "float": (1.5, {"float": 1.5, "double": 1.5, "string": "1.5"}),
    "double": (2.25, {"double": 2.25, "string": "2.25"}),
}

CELLS = [(row, col) for row in TABLE_3_2 for col in GET_TYPES]


def _set(msg: Message, set_type: str, name: str, value: Any) -> None:
    getattr(msg, f"set_{set_type}_property")(name, value)


def _get(msg: Message, get_type: str, name: str) -> Any:
    return getattr(msg, f"get_{get_type}_property")(name)


@pytest.mark.parametrize(("set_type", "get_type"), CELLS)
def test_table_3_2_cell(set_type: str, get_type: str) -> None:
    value, allowed = TABLE_3_2[set_type]
    msg = Message()
    _set(msg, set_type, "p", value)
    if get_type in allowed:
        assert _get(msg, get_type, "p") == allowed[get_type]
    else:
        with pytest.raises(MessageFormatException):
            _get(msg, get_type, "p")


# String row: every column is marked; a String the column's valueOf accepts converts, one it does
# not gives NumberFormatException (never MessageFormatException).
STRING_GOOD = {
    "boolean": ("TRUE", True),
    "byte": ("-128", -128),
    "short": ("+32767", 32767),
    "int": ("-2147483648", -(2**31)),
    "long": ("9223372036854775807", 2**63 - 1),
    "float": ("1.5f", 1.5),
    "double": ("-2.5e3", -2500.0),
    "string": ("hello", "hello"),
}
STRING_BAD = {
    "byte": ["128", "1.0", "", " 1", "0x1", "1_0", "abc"],
    "short": ["32768", "1e3", "", "1 "],
    "int": ["2147483648", "", "++1", "-"],
    "long": ["9223372036854775808", "", "12L", "1_000"],
    "float": ["", "abc", "inf", "1e", "1.5x", "infinity", "nan", "1_0.0"],
    "double": ["", "abc", "Inf", "--1", "0x1.0"],
}


@pytest.mark.parametrize("get_type", GET_TYPES)
def test_string_row_converts_valid_strings(get_type: str) -> None:
    text, expected = STRING_GOOD[get_type]
    msg = Message()
    msg.set_string_property("p", text)
    assert _get(msg, get_type, "p") == expected


@pytest.mark.parametrize(
    ("get_type", "text"), [(t, s) for t, bad in STRING_BAD.items() for s in bad]
)
def test_string_row_bad_strings_are_number_format_errors(get_type: str, text: str) -> None:
    msg = Message()
    msg.set_string_property("p", text)
    with pytest.raises(NumberFormatException) as info:
        _get(msg, get_type, "p")
    assert not isinstance(info.value, MessageFormatException)
    assert isinstance(info.value, ValueError)


def test_string_to_boolean_is_boolean_value_of() -> None:
    msg = Message()
    for text, expected in [("true", True), ("True", True), ("tRuE", True), ("yes", False),
                           ("1", False), ("", False), (" true", False), ("false", False)]:
        msg.set_string_property("p", text)
        assert msg.get_boolean_property("p") is expected, text


def test_string_to_float_follows_java_syntax() -> None:
    msg = Message()
    cases = {" 1.5 ": 1.5, "1.": 1.0, ".5": 0.5, "1e3": 1000.0, "2D": 2.0, "0x1p3": 8.0,
             "-0x1.8p1": -3.0, "Infinity": math.inf, "-Infinity": -math.inf}
    for text, expected in cases.items():
        msg.set_string_property("p", text)
        assert msg.get_double_property("p") == expected, text
        assert msg.get_float_property("p") == expected, text
    msg.set_string_property("p", "NaN")
    assert math.isnan(msg.get_double_property("p"))
    msg.set_string_property("p", "1.1")
    assert msg.get_float_property("p") == Float(1.1)  # rounded to 32 bits
    msg.set_string_property("p", "1e39")
    assert msg.get_float_property("p") == math.inf  # Float.valueOf overflows to Infinity


def test_string_to_integral_accepts_unicode_digits_like_java() -> None:
    msg = Message()
    msg.set_string_property("p", "\u0661\u0662")  # Arabic-Indic 12: Character.digit accepts it
    assert msg.get_int_property("p") == 12


def test_numbers_to_string_use_java_formatting() -> None:
    msg = Message()
    msg.set_float_property("f", 1.1)
    assert msg.get_string_property("f") == "1.1"
    msg.set_double_property("d", 1e10)
    assert msg.get_string_property("d") == "1.0E10"
    msg.set_double_property("d", 0.001)
    assert msg.get_string_property("d") == "0.001"
    msg.set_double_property("d", 1e-4)
    assert msg.get_string_property("d") == "1.0E-4"
    msg.set_double_property("d", 100.0)
    assert msg.get_string_property("d") == "100.0"
    msg.set_double_property("d", -0.0)
    assert msg.get_string_property("d") == "-0.0"
    msg.set_double_property("d", math.nan)
    assert msg.get_string_property("d") == "NaN"
    msg.set_float_property("f", -math.inf)
    assert msg.get_string_property("f") == "-Infinity"
    msg.set_boolean_property("b", False)
    assert msg.get_string_property("b") == "false"


# ---------------------------------------------------------------- null / missing properties


def test_missing_property_reads_as_java_value_of_null() -> None:
    msg = Message()
    assert msg.get_boolean_property("nope") is False
    for get_type in ("byte", "short", "int", "long"):
        with pytest.raises(NumberFormatException):
            _get(msg, get_type, "nope")
    for get_type in ("float", "double"):  # Float/Double.valueOf(null): NullPointerException
        with pytest.raises(TypeError):
            _get(msg, get_type, "nope")
    assert msg.get_string_property("nope") is None
    assert msg.get_object_property("nope") is None
    assert not msg.property_exists("nope")


def test_null_string_property_behaves_like_a_missing_one() -> None:
    msg = Message()
    msg.set_string_property("s", None)
    assert msg.property_exists("s")
    assert msg.get_string_property("s") is None
    assert msg.get_boolean_property("s") is False
    with pytest.raises(NumberFormatException):
        msg.get_int_property("s")
    msg.set_object_property("o", None)
    assert msg.property_exists("o") and msg.get_object_property("o") is None


# ---------------------------------------------------------------- typed storage


def test_property_keeps_its_jms_type() -> None:
    msg = Message()
    msg.set_byte_property("b", 5)
    msg.set_short_property("s", 5)
    msg.set_int_property("i", 5)
    msg.set_long_property("l", 5)
    msg.set_float_property("f", 1.1)
    msg.set_double_property("d", 1.1)
    assert type(msg.get_object_property("b")) is Byte
    assert type(msg.get_object_property("s")) is Short
    assert type(msg.get_object_property("i")) is Int
    assert type(msg.get_object_property("l")) is int
    assert type(msg.get_object_property("f")) is Float
    assert type(msg.get_object_property("d")) is float
    assert msg.get_object_property("f") == 1.100000023841858  # stored as 32-bit
    assert msg.get_double_property("f") == 1.100000023841858  # widened exactly, as Java does
    assert msg.get_object_property("d") == 1.1
    # Widening reads return the wider JMS type.
    assert type(msg.get_short_property("b")) is Short
    assert type(msg.get_int_property("b")) is Int
    assert type(msg.get_long_property("b")) is int


def test_setters_widen_like_java_primitive_parameters() -> None:
    msg = Message()
    msg.set_long_property("l", Byte(3))
    assert type(msg.get_object_property("l")) is int
    msg.set_double_property("d", 5)
    assert msg.get_object_property("d") == 5.0 and type(msg.get_object_property("d")) is float
    msg.set_int_property("i", Short(7))
    assert type(msg.get_object_property("i")) is Int


@pytest.mark.parametrize(
    ("set_type", "value"),
    [("byte", 128), ("byte", -129), ("short", 2**15), ("short", -(2**15) - 1), ("int", 2**31),
     ("int", -(2**31) - 1), ("long", 2**63), ("long", -(2**63) - 1), ("float", 1e39),
     ("double", 10**400)],
)
def test_out_of_range_values_are_message_format_errors(set_type: str, value: Any) -> None:
    msg = Message()
    with pytest.raises(MessageFormatException):
        _set(msg, set_type, "p", value)
    assert not msg.property_exists("p")


@pytest.mark.parametrize(
    ("set_type", "value"),
    [("byte", True), ("int", "5"), ("int", 5.0), ("long", 1.5), ("float", "1.0"), ("boolean", 1),
     ("double", True), ("string", 5), ("string", b"x")],
)
def test_wrong_value_types_are_message_format_errors(set_type: str, value: Any) -> None:
    with pytest.raises(MessageFormatException):
        _set(Message(), set_type, "p", value)


@pytest.mark.parametrize("set_type", ["boolean", "byte", "short", "int", "long", "float", "double"])
def test_none_for_a_primitive_is_a_type_error(set_type: str) -> None:
    with pytest.raises(TypeError):
        _set(Message(), set_type, "p", None)


def test_float_property_accepts_nan_and_infinity() -> None:
    msg = Message()
    msg.set_float_property("f", math.inf)
    assert msg.get_float_property("f") == math.inf
    msg.set_float_property("f", math.nan)
    assert math.isnan(msg.get_float_property("f"))


# ---------------------------------------------------------------- object properties


@pytest.mark.parametrize(
    ("value", "expected_type"),
    [(True, bool), (Byte(1), Byte), (Short(2), Short), (Int(3), Int), (4, int), (Float(1.5), Float),
     (2.5, float), ("s", str)],
)
def test_set_object_property_keeps_the_type(value: Any, expected_type: type) -> None:
    msg = Message()
    msg.set_object_property("o", value)
    stored = msg.get_object_property("o")
    assert stored == value and type(stored) is expected_type


@pytest.mark.parametrize("value", [Char("c"), b"bytes", [1], {"a": 1}, UInt(1), object(), 2**64])
def test_set_object_property_rejects_other_types(value: Any) -> None:
    with pytest.raises(MessageFormatException):
        Message().set_object_property("o", value)


def test_object_property_conversions_match_typed_ones() -> None:
    msg = Message()
    msg.set_object_property("b", Byte(9))
    assert msg.get_long_property("b") == 9
    with pytest.raises(MessageFormatException):
        msg.get_float_property("b")


def test_vendor_values_written_by_the_mapping_are_readable() -> None:
    # The mapping writes AMQP-typed application properties straight into _props.
    msg = Message()
    msg = with_properties(msg, {"JMSXDeliveryCount": Int(2)})
    msg = with_properties(msg, {"JMS_AMQP_x": UInt(7)})
    assert msg.get_int_property("JMSXDeliveryCount") == 2
    assert msg.get_long_property("JMS_AMQP_x") == 7
    assert msg.get_string_property("JMS_AMQP_x") == "7"
    assert msg.get_property_names() == ["JMSXDeliveryCount", "JMS_AMQP_x"]


# ---------------------------------------------------------------- names, iteration, clearing


def test_property_names_exists_and_clear() -> None:
    msg = TextMessage("body")
    msg.set_int_property("a", 1)
    msg.set_string_property("b", "x")
    msg.set_int_property("a", 2)  # replacing keeps one entry
    assert msg.get_property_names() == ["a", "b"]
    assert msg.property_exists("a") and not msg.property_exists("c")
    msg.clear_properties()
    assert msg.get_property_names() == []
    assert msg.get_text() == "body"  # clearing properties leaves the body


def test_received_properties_are_read_only_until_cleared() -> None:
    msg = Message()
    msg.set_int_property("a", 1)
    mark_received(msg)
    assert msg.get_int_property("a") == 1
    for set_type, value in [("boolean", True), ("int", 1), ("string", "x"), ("object", 1)]:
        with pytest.raises(MessageNotWriteableException):
            _set(msg, set_type, "b", value)
    msg.clear_properties()
    msg.set_int_property("b", 2)
    assert msg.get_property_names() == ["b"]


def test_getters_do_not_validate_names() -> None:
    msg = Message()
    assert msg.get_string_property("not an identifier") is None
    assert not msg.property_exists("")
