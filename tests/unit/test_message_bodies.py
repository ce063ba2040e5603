"""Message bodies: table 3.7 for MapMessage and StreamMessage cell by cell, StreamMessage and
BytesMessage reading rules, modified UTF-8, ObjectMessage values and ``get_body``."""

from __future__ import annotations

import math
import uuid
from typing import Any

import pytest

from amqp_jms import (
    BytesMessage,
    JavaSerializedObject,
    MapMessage,
    Message,
    MessageEOFException,
    MessageFormatException,
    NumberFormatException,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from amqp_jms.message._data import view
from amqp_jms.message._seam import mark_received
from amqp_jms.testing.messages import with_fields
from amqp_jms.types import Byte, Char, Described, Float, Int, Short, Symbol, Timestamp, ULong

MFE = MessageFormatException
READ_TYPES = ["boolean", "byte", "short", "char", "int", "long", "float", "double", "string", "bytes"]

# Row: the write type and value; the dict gives each column that must convert and its value.
TABLE_3_7: dict[str, tuple[Any, dict[str, Any]]] = {
    "boolean": (True, {"boolean": True, "string": "true"}),
    "byte": (-5, {"byte": -5, "short": -5, "int": -5, "long": -5, "string": "-5"}),
    "short": (1234, {"short": 1234, "int": 1234, "long": 1234, "string": "1234"}),
    "char": ("c", {"char": "c", "string": "c"}),
    "int": (70000, {"int": 70000, "long": 70000, "string": "70000"}),
    "long": (2**40, {"long": 2**40, "string": "1099511627776"}),
    "float": (1.5, {"float": 1.5, "double": 1.5, "string": "1.5"}),
    "double": (2.25, {"double": 2.25, "string": "2.25"}),
    "bytes": (b"\x01\x02", {"bytes": b"\x01\x02"}),
}
CELLS = [(row, col) for row in TABLE_3_7 for col in READ_TYPES]

STRING_GOOD = {
    "boolean": ("True", True),
    "byte": ("12", 12),
    "short": ("-300", -300),
    "int": ("123456", 123456),
    "long": ("-9223372036854775808", -(2**63)),
    "float": ("2.5", 2.5),
    "double": ("1e300", 1e300),
    "string": ("text", "text"),
}
STRING_BAD = {"byte": "300", "short": "x", "int": "1.5", "long": "", "float": "one", "double": "1,5"}


def _map_with(write_type: str, value: Any) -> MapMessage:
    msg = MapMessage()
    getattr(msg, f"set_{write_type}")("k", value)
    return msg


def _stream_with(write_type: str, value: Any) -> StreamMessage:
    msg = StreamMessage()
    getattr(msg, f"write_{write_type}")(value)
    msg.reset()
    return msg


def _stream_read(msg: StreamMessage, read_type: str) -> Any:
    if read_type == "bytes":
        buf = bytearray(16)
        count = msg.read_bytes(buf)
        return bytes(buf[:count])
    return getattr(msg, f"read_{read_type}")()


# ---------------------------------------------------------------- table 3.7, MapMessage


@pytest.mark.parametrize(("write_type", "read_type"), CELLS)
def test_table_3_7_map_cell(write_type: str, read_type: str) -> None:
    value, allowed = TABLE_3_7[write_type]
    msg = _map_with(write_type, value)
    getter = getattr(msg, f"get_{read_type}")
    if read_type in allowed:
        assert getter("k") == allowed[read_type]
    else:
        with pytest.raises(MessageFormatException):
            getter("k")


@pytest.mark.parametrize("read_type", READ_TYPES)
def test_table_3_7_map_string_row(read_type: str) -> None:
    if read_type in ("char", "bytes"):  # unmarked: String cannot be read as char or byte[]
        with pytest.raises(MessageFormatException):
            getattr(_map_with("string", "x"), f"get_{read_type}")("k")
        return
    text, expected = STRING_GOOD[read_type]
    assert getattr(_map_with("string", text), f"get_{read_type}")("k") == expected
    if read_type in STRING_BAD:
        with pytest.raises(NumberFormatException):
            getattr(_map_with("string", STRING_BAD[read_type]), f"get_{read_type}")("k")


def test_map_missing_and_null_items_read_as_java_value_of_null() -> None:
    msg = MapMessage()
    msg.set_string("null", None)
    msg.set_bytes("nullbytes", None)
    for name in ("missing", "null", "nullbytes"):
        assert msg.get_boolean(name) is False
        for numeric in ("byte", "short", "int", "long"):
            with pytest.raises(NumberFormatException):
                getattr(msg, f"get_{numeric}")(name)
        for npe in ("float", "double", "char"):
            with pytest.raises(TypeError):
                getattr(msg, f"get_{npe}")(name)
        assert msg.get_string(name) is None
        assert msg.get_bytes(name) is None
        assert msg.get_object(name) is None
    assert msg.item_exists("null") and not msg.item_exists("missing")


def test_map_values_keep_types_and_bytes_are_copied() -> None:
    source = bytearray(b"abcdef")
    msg = MapMessage()
    msg.set_bytes("all", source)
    msg.set_bytes("part", source, 1, 3)
    msg.set_object("obj", source)
    msg.set_char("c", "é")
    msg.set_float("f", 1.1)
    source[0] = 0
    assert msg.get_bytes("all") == b"abcdef" and msg.get_bytes("part") == b"bcd"
    assert msg.get_object("obj") == b"abcdef"
    assert type(msg.get_object("c")) is Char and type(msg.get_object("f")) is Float
    assert msg.get_map_names() == ["all", "part", "obj", "c", "f"]
    with pytest.raises(ValueError):
        msg.set_bytes("bad", b"abc", 2, 5)


@pytest.mark.parametrize("value", [[1], {"a": 1}, object(), ULong(1), Timestamp(5)])
def test_map_set_object_rejects_other_types(value: Any) -> None:
    with pytest.raises(MessageFormatException):
        MapMessage().set_object("x", value)


def test_map_constructor_and_char_rules() -> None:
    msg = MapMessage({"a": Short(3), "b": "text", "c": Char("z")})
    assert msg.get_int("a") == 3 and msg.get_string("c") == "z"
    with pytest.raises(MessageFormatException):
        msg.set_char("x", "too long")
    with pytest.raises(TypeError):
        msg.set_char("x", None)  # type: ignore[arg-type]


# ---------------------------------------------------------------- table 3.7, StreamMessage


@pytest.mark.parametrize(("write_type", "read_type"), CELLS)
def test_table_3_7_stream_cell(write_type: str, read_type: str) -> None:
    value, allowed = TABLE_3_7[write_type]
    msg = _stream_with(write_type, value)
    if read_type in allowed:
        assert _stream_read(msg, read_type) == allowed[read_type]
        if read_type != "bytes":
            with pytest.raises(MessageEOFException):  # the read moved past the item
                msg.read_object()
    else:
        with pytest.raises(MessageFormatException):
            _stream_read(msg, read_type)
        # A failed read does not move the pointer: the item is still there, as written.
        assert msg.read_object() == value


@pytest.mark.parametrize("read_type", READ_TYPES)
def test_table_3_7_stream_string_row(read_type: str) -> None:
    if read_type in ("char", "bytes"):
        msg = _stream_with("string", "x")
        with pytest.raises(MessageFormatException):
            _stream_read(msg, read_type)
        assert msg.read_string() == "x"
        return
    text, expected = STRING_GOOD[read_type]
    assert _stream_read(_stream_with("string", text), read_type) == expected
    if read_type in STRING_BAD:
        msg = _stream_with("string", STRING_BAD[read_type])
        with pytest.raises(NumberFormatException):
            _stream_read(msg, read_type)
        assert msg.read_string() == STRING_BAD[read_type]  # pointer did not move


def test_stream_failed_read_can_be_retried_as_another_type() -> None:
    msg = StreamMessage()
    msg.write_string("abc")
    msg.write_int(7)
    msg.reset()
    with pytest.raises(NumberFormatException):
        msg.read_int()
    with pytest.raises(MessageFormatException):
        msg.read_char()
    assert msg.read_string() == "abc"
    with pytest.raises(MessageFormatException):
        msg.read_boolean()
    assert msg.read_long() == 7


def test_stream_null_item() -> None:
    msg = StreamMessage()
    for _ in range(5):
        msg.write_object(None)
    msg.reset()
    with pytest.raises(NumberFormatException):
        msg.read_int()  # Integer.valueOf(null); pointer stays
    with pytest.raises(TypeError):
        msg.read_char()  # NullPointerException; pointer stays
    with pytest.raises(TypeError):
        msg.read_double()
    assert msg.read_boolean() is False
    assert msg.read_string() is None
    assert msg.read_bytes(bytearray(4)) == -1  # a null byte[] gives -1 and moves on
    assert msg.read_object() is None
    assert msg.read_string() is None
    with pytest.raises(MessageEOFException):
        msg.read_object()


def test_stream_read_bytes_in_chunks() -> None:
    msg = StreamMessage()
    msg.write_bytes(b"abcdefg")
    msg.write_bytes(b"xyz", 1, 2)
    msg.write_bytes(b"")
    msg.write_int(1)
    msg.reset()
    buf = bytearray(3)
    assert msg.read_bytes(buf) == 3 and buf == b"abc"
    with pytest.raises(MessageFormatException):
        msg.read_int()  # a byte[] item part-way through must be finished first
    assert msg.read_bytes(buf) == 3 and buf == b"def"
    assert msg.read_bytes(buf) == 1 and buf[:1] == b"g"  # short count: item finished
    two = bytearray(2)
    assert msg.read_bytes(two) == 2 and two == b"yz"  # filled exactly ...
    assert msg.read_bytes(two) == -1  # ... so the next call says "no more"
    assert msg.read_bytes(buf) == 0  # empty byte[] item
    assert msg.read_int() == 1
    with pytest.raises(MessageEOFException):
        msg.read_bytes(buf)


def test_stream_read_bytes_on_other_type_does_not_move() -> None:
    msg = StreamMessage([Int(5)])
    msg.reset()
    with pytest.raises(MessageFormatException):
        msg.read_bytes(bytearray(4))
    assert msg.read_int() == 5


def test_stream_read_object_returns_stored_types() -> None:
    items = [True, Byte(1), Short(2), Char("x"), Int(3), 4, Float(1.5), 2.5, "s", b"b", None]
    msg = StreamMessage(items)
    msg.reset()
    out = [msg.read_object() for _ in items]
    assert out == items
    assert [type(v) for v in out] == [type(v) for v in items]


def test_stream_eof() -> None:
    msg = StreamMessage()
    msg.reset()
    for read_type in READ_TYPES:
        with pytest.raises(MessageEOFException):
            _stream_read(msg, read_type)


# ---------------------------------------------------------------- BytesMessage


def test_bytes_message_is_big_endian_like_java_data_output() -> None:
    msg = BytesMessage()
    msg.write_boolean(True)
    msg.write_byte(-1)
    msg.write_short(0x0102)
    msg.write_char("A")
    msg.write_int(1)
    msg.write_long(-2)
    msg.write_float(1.0)
    msg.write_double(-2.0)
    assert view(msg).body == b"".join(
        [b"\x01", b"\xff", b"\x01\x02", b"\x00A", b"\x00\x00\x00\x01", b"\xff" * 7 + b"\xfe",
         b"\x3f\x80\x00\x00", b"\xc0\x00\x00\x00\x00\x00\x00\x00"]
    )
    msg.reset()
    assert msg.get_body_length() == 30
    assert msg.read_boolean() is True
    assert msg.read_byte() == -1
    assert msg.read_short() == 0x0102
    assert msg.read_char() == "A"
    assert msg.read_int() == 1
    assert msg.read_long() == -2
    assert msg.read_float() == 1.0
    assert msg.read_double() == -2.0


def test_bytes_message_read_types() -> None:
    msg = BytesMessage(b"\xff\xff\xff\xff\x80\x00")
    msg.reset()
    assert msg.read_unsigned_byte() == 255
    assert msg.read_unsigned_short() == 0xFFFF
    value = msg.read_byte()
    assert value == -1 and type(value) is Byte
    short = msg.read_short()
    assert short == -32768 and type(short) is Short


def test_bytes_message_eof_does_not_move_the_position() -> None:
    msg = BytesMessage(b"\x00\x05\x00")
    msg.reset()
    with pytest.raises(MessageEOFException):
        msg.read_int()
    assert msg.read_short() == 5
    with pytest.raises(MessageEOFException):
        msg.read_short()
    assert msg.read_byte() == 0
    with pytest.raises(MessageEOFException):
        msg.read_boolean()


def test_bytes_message_read_bytes() -> None:
    msg = BytesMessage(b"abcdefgh")
    msg.reset()
    buf = bytearray(5)
    assert msg.read_bytes(buf, 2) == 2 and buf[:2] == b"ab"
    assert msg.read_bytes(buf) == 5 and buf == b"cdefg"
    assert msg.read_bytes(buf) == 1 and buf[:1] == b"h"
    assert msg.read_bytes(buf) == -1
    with pytest.raises(ValueError):
        msg.read_bytes(buf, 6)
    with pytest.raises(TypeError):
        msg.read_bytes(b"immutable")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ("", b""),
        ("abc", b"abc"),
        ("\x00", b"\xc0\x80"),  # NUL is two bytes
        ("é", b"\xc3\xa9"),
        ("€", b"\xe2\x82\xac"),
        ("😀", b"\xed\xa0\xbd\xed\xb8\x80"),  # surrogate pair, 3 bytes each
        ("a\x00😀", b"a\xc0\x80\xed\xa0\xbd\xed\xb8\x80"),
    ],
)
def test_write_utf_is_java_modified_utf8(text: str, encoded: bytes) -> None:
    msg = BytesMessage()
    msg.write_utf(text)
    assert view(msg).body == len(encoded).to_bytes(2, "big") + encoded
    msg.reset()
    assert msg.read_utf() == text


def test_read_utf_rejects_malformed_input_without_moving() -> None:
    four_byte = "😀".encode()  # standard UTF-8: not valid modified UTF-8
    msg = BytesMessage(len(four_byte).to_bytes(2, "big") + four_byte)
    msg.reset()
    with pytest.raises(MessageFormatException):
        msg.read_utf()
    assert msg.read_short() == 4
    msg = BytesMessage(b"\x00\x05ab")
    msg.reset()
    with pytest.raises(MessageEOFException):
        msg.read_utf()
    assert msg.read_unsigned_short() == 5


def test_read_utf_accepts_a_java_written_nul_and_lone_surrogate() -> None:
    msg = BytesMessage(b"\x00\x04\x00\xed\xa0\x80")  # raw 0x00 and a lone high surrogate
    msg.reset()
    assert msg.read_utf() == "\x00\ud800"


def test_write_utf_limits() -> None:
    msg = BytesMessage()
    msg.write_utf("x" * 65535)
    with pytest.raises(MessageFormatException):
        msg.write_utf("é" * 40000)
    with pytest.raises(TypeError):
        msg.write_utf(None)  # type: ignore[arg-type]


def test_bytes_write_object_and_write_bytes() -> None:
    msg = BytesMessage()
    msg.write_object(Byte(1))
    msg.write_object(Short(2))
    msg.write_object(Int(3))
    msg.write_object(4)
    msg.write_object(Char("c"))
    msg.write_object(Float(1.5))
    msg.write_object(2.5)
    msg.write_object(True)
    msg.write_object("s")
    msg.write_object(bytearray(b"xy"))
    msg.write_bytes(b"0123456", 2, 3)
    msg.reset()
    assert [msg.read_byte(), msg.read_short(), msg.read_int(), msg.read_long()] == [1, 2, 3, 4]
    assert msg.read_char() == "c" and msg.read_float() == 1.5 and msg.read_double() == 2.5
    assert msg.read_boolean() is True and msg.read_utf() == "s"
    buf = bytearray(10)
    assert msg.read_bytes(buf) == 5 and buf[:5] == b"xy234"
    with pytest.raises(TypeError):
        BytesMessage().write_object(None)
    with pytest.raises(MessageFormatException):
        BytesMessage().write_object([1])
    with pytest.raises(TypeError):
        BytesMessage().write_bytes(None)  # type: ignore[arg-type]


def test_bytes_write_ranges_and_chars() -> None:
    msg = BytesMessage()
    with pytest.raises(MessageFormatException):
        msg.write_byte(200)
    with pytest.raises(MessageFormatException):
        msg.write_char("😀")  # does not fit one UTF-16 unit
    with pytest.raises(MessageFormatException):
        msg.write_int(2**31)
    assert view(msg).body == b""


# ---------------------------------------------------------------- ObjectMessage


def test_object_message_values_are_amqp_values_and_copied() -> None:
    body: dict[str, Any] = {
        "id": 7, "tags": ["a", "b"], "raw": b"\x00", "u": uuid.UUID(int=1), "sym": Symbol("s"),
        "nested": (1, 2), "d": Described(Symbol("x"), [1]), "none": None, "f": 1.5,
    }
    msg = ObjectMessage(body)
    body["tags"].append("c")  # the message keeps its own copy
    got = msg.get_object()
    assert got["tags"] == ["a", "b"]
    assert got["nested"] == [1, 2]  # AMQP has lists, not tuples
    got["tags"].append("z")  # and hands out copies
    assert msg.get_object()["tags"] == ["a", "b"]
    assert msg.get_body(dict) == msg.get_object()


@pytest.mark.parametrize("value", [{1, 2}, object(), 2**70, [object()], {"k": {1}}])
def test_object_message_rejects_values_amqp_cannot_carry(value: Any) -> None:
    with pytest.raises(MessageFormatException):
        ObjectMessage(value)


def test_java_serialized_object_is_kept_as_bytes() -> None:
    raw = b"\xac\xed\x00\x05t\x00\x02hi"
    msg = ObjectMessage()
    msg = with_fields(msg, body=JavaSerializedObject(raw))
    mark_received(msg)
    got = msg.get_object()
    assert isinstance(got, JavaSerializedObject) and got.data == raw
    assert got == JavaSerializedObject(raw) and hash(got) == hash(JavaSerializedObject(raw))
    assert msg.get_body(JavaSerializedObject) == got


# ---------------------------------------------------------------- get_body / is_body_assignable_to


def test_get_body_per_message_type() -> None:
    assert TextMessage("hi").get_body(str) == "hi"
    assert TextMessage("hi").get_body(object) == "hi"
    bytes_msg = BytesMessage(b"abc")  # still write-only: get_body returns the whole body anyway
    assert bytes_msg.get_body(bytes) == b"abc"
    assert MapMessage({"a": 1}).get_body(dict) == {"a": 1}
    assert ObjectMessage([1, 2]).get_body(list) == [1, 2]
    assert ObjectMessage(5).get_body(int) == 5
    assert Message().get_body(str) is None  # a plain Message has no body: any type, None


@pytest.mark.parametrize(
    ("msg", "wrong"),
    [(TextMessage("hi"), bytes), (BytesMessage(b"x"), str), (MapMessage({"a": 1}), list),
     (ObjectMessage("s"), int)],
)
def test_get_body_wrong_type(msg: Message, wrong: type) -> None:
    assert not msg.is_body_assignable_to(wrong)
    with pytest.raises(MessageFormatException):
        msg.get_body(wrong)


@pytest.mark.parametrize("msg", [TextMessage(), BytesMessage(), MapMessage(), ObjectMessage(), Message()])
def test_empty_body_is_none_for_any_type(msg: Message) -> None:
    assert msg.is_body_assignable_to(int)
    assert msg.get_body(int) is None


def test_stream_message_body_is_never_assignable() -> None:
    for msg in (StreamMessage(), StreamMessage([1])):
        assert not msg.is_body_assignable_to(object)
        with pytest.raises(MessageFormatException):
            msg.get_body(object)


def test_get_body_does_not_expose_internal_state() -> None:
    msg = MapMessage({"a": 1})
    body = msg.get_body(dict)
    assert body is not None
    body["b"] = 2
    assert msg.get_map_names() == ["a"]


def test_text_message() -> None:
    msg = TextMessage()
    assert msg.get_text() is None
    msg.set_text("x" * 100)
    assert "…" in repr(msg)
    msg.set_text(None)
    assert msg.get_text() is None
    with pytest.raises(MessageFormatException):
        msg.set_text(5)  # type: ignore[arg-type]


def test_float_values_in_bodies_are_32_bit() -> None:
    stream = StreamMessage()
    stream.write_float(0.1)
    stream.reset()
    assert stream.read_double() == Float(0.1) != 0.1
    map_msg = MapMessage()
    map_msg.set_float("f", math.pi)
    assert map_msg.get_string("f") == "3.1415927"
