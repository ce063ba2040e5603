"""Message bodies (wd06 3.2.4 and 3.3.7, early draft 4.3.7.2): the six JMS types on the wire,
inference for messages without ``x-opt-jms-msg-type``, and typed Map/Stream/Object contents."""

from __future__ import annotations

import uuid
from typing import Any

import proton
import pytest

from amqp_jms.exceptions import MessageFormatException
from amqp_jms.mapping import decode, encode
from amqp_jms.mapping.codec import (
    AMQP_SEQUENCE,
    AMQP_VALUE,
    DATA,
    Properties,
    decode_sections,
    encode_sections,
)
from amqp_jms.mapping.proton_bridge import from_amqp, to_amqp
from amqp_jms.message import (
    BytesMessage,
    JavaSerializedObject,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from amqp_jms.message._data import view
from amqp_jms.testing.messages import with_fields
from amqp_jms.types import Byte, Char, Described, Float, Int, Short, Symbol, Timestamp, UInt, ULong

MSG_TYPE = Symbol("x-opt-jms-msg-type")
JAVA = "application/x-java-serialized-object"


def received(body_type: int | None = None, body: Any = None, content_type: str | None = None,
             msg_type: int | None = None) -> Message:  # fmt: skip
    data = encode_sections(
        message_annotations={MSG_TYPE: Byte(msg_type)} if msg_type is not None else None,
        properties=Properties(content_type=Symbol(content_type)) if content_type else None,
        body_type=body_type,
        body=body,
    )
    return decode(data)


# -- sending: sections, annotation, content-type ------------------------------------------------


@pytest.mark.parametrize(
    ("msg", "code", "kind", "body", "content_type"),
    [
        (Message(), 0, AMQP_VALUE, None, None),
        (TextMessage("hé"), 5, AMQP_VALUE, "hé", None),
        (TextMessage(), 5, AMQP_VALUE, None, None),
        (BytesMessage(b"\x00\x01"), 3, DATA, [b"\x00\x01"], "application/octet-stream"),
        (BytesMessage(), 3, DATA, [b""], "application/octet-stream"),
        (MapMessage({"a": Int(1)}), 2, AMQP_VALUE, {"a": Int(1)}, None),
        (StreamMessage([Int(1), "x"]), 4, AMQP_SEQUENCE, [[Int(1), "x"]], None),
        (ObjectMessage({"k": [1, 2]}), 1, AMQP_VALUE, {"k": [1, 2]}, None),
        (ObjectMessage(), 1, AMQP_VALUE, None, None),
    ],
)
def test_each_jms_type_is_sent_with_its_sections_and_annotation(
    msg: Message, code: int, kind: int, body: Any, content_type: str | None
) -> None:
    s = decode_sections(encode(msg))
    assert s.message_annotations is not None
    assert s.message_annotations[MSG_TYPE] == code and type(s.message_annotations[MSG_TYPE]) is Byte
    assert s.body_type == kind and s.body == body
    assert (s.properties.content_type if s.properties else None) == content_type


def test_python_object_message_is_amqp_typed_without_content_type() -> None:
    pm = to_amqp(ObjectMessage([1, "two", 3.0]))
    assert pm.body == [1, "two", 3.0] and not pm.inferred
    assert pm.content_type in (None, proton.symbol("None"))
    assert pm.annotations[proton.symbol("x-opt-jms-msg-type")] == 1


def test_java_serialized_object_is_sent_as_data_and_received_back() -> None:
    raw = b"\xac\xed\x00\x05t\x00\x03abc"
    m = ObjectMessage()
    m = with_fields(m, body=JavaSerializedObject(raw))
    s = decode_sections(encode(m))
    assert s.body_type == DATA and s.body == [raw]
    assert s.properties is not None and s.properties.content_type == JAVA
    r = decode(encode(m))
    assert isinstance(r, ObjectMessage) and view(r).body == JavaSerializedObject(raw)


# -- receiving with the annotation --------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "body_type", "body", "cls", "check"),
    [
        (0, None, None, Message, None),
        (5, AMQP_VALUE, "t", TextMessage, lambda m: m.get_text() == "t"),
        (5, DATA, [b"t", b"u"], TextMessage, lambda m: m.get_text() == "tu"),
        (5, None, None, TextMessage, lambda m: m.get_text() is None),
        (3, DATA, [b"ab", b"cd"], BytesMessage, lambda m: view(m).body == b"abcd"),
        (3, AMQP_VALUE, b"xy", BytesMessage, lambda m: view(m).body == b"xy"),
        (3, None, None, BytesMessage, lambda m: view(m).body == b""),
        (2, AMQP_VALUE, {"k": "v"}, MapMessage, lambda m: view(m).body == {"k": "v"}),
        (2, None, None, MapMessage, lambda m: view(m).body == {}),
        (4, AMQP_SEQUENCE, [[1], [2, 3]], StreamMessage, lambda m: view(m).body == [1, 2, 3]),
        (4, AMQP_VALUE, [1, 2], StreamMessage, lambda m: view(m).body == [1, 2]),
        (1, AMQP_VALUE, {"a": [1]}, ObjectMessage, lambda m: view(m).body == {"a": [1]}),
        (1, AMQP_SEQUENCE, [[1, 2]], ObjectMessage, lambda m: view(m).body == [1, 2]),
        (1, DATA, [b"raw"], ObjectMessage, lambda m: view(m).body == b"raw"),
    ],
)
def test_annotation_decides_the_message_type(code: int, body_type: int | None, body: Any, cls: type,
                                             check: Any) -> None:  # fmt: skip
    m = received(body_type, body, msg_type=code)
    assert type(m) is cls
    assert check is None or check(m)


@pytest.mark.parametrize("bad", [6, -1, 100])
def test_invalid_msg_type_annotation_raises(bad: int) -> None:
    with pytest.raises(MessageFormatException, match="x-opt-jms-msg-type"):
        received(AMQP_VALUE, "x", msg_type=bad)


def test_msg_type_annotation_of_the_wrong_type_raises() -> None:
    data = encode_sections(message_annotations={MSG_TYPE: "text"}, body_type=AMQP_VALUE, body="x")
    with pytest.raises(MessageFormatException, match="x-opt-jms-msg-type"):
        decode(data)


@pytest.mark.parametrize(
    ("code", "body_type", "body"),
    [(5, AMQP_VALUE, 5), (3, AMQP_VALUE, "s"), (2, AMQP_VALUE, [1]), (4, AMQP_VALUE, {"a": 1}),
     (5, AMQP_SEQUENCE, [[1]]), (2, DATA, [b"x"])],
)  # fmt: skip
def test_body_that_does_not_fit_the_annotation_raises(code: int, body_type: int, body: Any) -> None:
    with pytest.raises(MessageFormatException, match="does not fit"):
        received(body_type, body, msg_type=code)


# -- receiving without the annotation (3.3.7.2 - 3.3.7.5, early draft 4.3.7.2) ---------------


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "text/html", "TEXT/XML", "application/xml", "application/xml-dtd", "application/atom+xml",
     "application/json", "application/ld+json", "application/javascript", "application/ecmascript",
     "text/plain; charset=utf-8"],
)  # fmt: skip
def test_data_with_a_textual_content_type_is_a_text_message(content_type: str) -> None:
    m = received(DATA, ["héllo".encode()], content_type)
    assert isinstance(m, TextMessage) and m.get_text() == "héllo"


def test_charset_parameter_decides_the_text_encoding() -> None:
    m = received(DATA, ["héllo".encode("latin-1")], 'text/plain; charset="ISO-8859-1"')
    assert isinstance(m, TextMessage) and m.get_text() == "héllo"
    m = received(DATA, ["hé".encode("utf-16")], "application/json;charset=utf-16")
    assert isinstance(m, TextMessage) and m.get_text() == "hé"


@pytest.mark.parametrize("charset", ["x-no-such-charset", "base64", "rot13", "hex"])
def test_unknown_charset_makes_it_a_bytes_message(charset: str) -> None:
    m = received(DATA, [b"abc"], f"text/plain; charset={charset}")
    assert isinstance(m, BytesMessage) and view(m).body == b"abc"


@pytest.mark.parametrize("charset", ["base64", "x-no-such-charset"])
def test_text_message_with_a_non_text_charset_falls_back_to_utf8(charset: str) -> None:
    m = received(DATA, ["é".encode()], f"text/plain; charset={charset}", msg_type=5)
    assert isinstance(m, TextMessage) and m.get_text() == "é"


def test_empty_single_data_section_with_textual_type_is_empty_string() -> None:
    m = received(DATA, [b""], "text/plain")
    assert isinstance(m, TextMessage) and m.get_text() == ""


@pytest.mark.parametrize(
    "content_type",
    [None, "application/octet-stream", "image/png", "application/x-unknown", "application/xmlish"],
)
def test_data_otherwise_is_a_bytes_message(content_type: str | None) -> None:
    m = received(DATA, [b"\x00\x01", b"\x02"], content_type)
    assert isinstance(m, BytesMessage) and view(m).body == b"\x00\x01\x02"


def test_data_with_java_serialized_content_type_is_an_object_message() -> None:
    m = received(DATA, [b"\xac\xed", b"\x00\x05"], JAVA)
    assert isinstance(m, ObjectMessage) and view(m).body == JavaSerializedObject(b"\xac\xed\x00\x05")


@pytest.mark.parametrize(
    ("content_type", "cls", "empty"),
    [
        (None, BytesMessage, lambda m: view(m).body == b""),
        ("application/octet-stream", BytesMessage, lambda m: view(m).body == b""),
        ("application/x-whatever", BytesMessage, lambda m: view(m).body == b""),
        (JAVA, ObjectMessage, lambda m: view(m).body is None),
        ("text/plain", TextMessage, lambda m: m.get_text() is None),
    ],
)
def test_no_body_rules_of_the_early_draft(content_type: str | None, cls: type, empty: Any) -> None:
    m = received(None, None, content_type)
    assert type(m) is cls and empty(m)


@pytest.mark.parametrize(
    ("body", "cls"),
    [
        ("s", TextMessage),
        (None, TextMessage),
        (b"b", BytesMessage),
        (5, ObjectMessage),
        ([1, 2], ObjectMessage),
        ({"a": 1}, ObjectMessage),
        (Described(Symbol("x"), 1), ObjectMessage),
        (uuid.UUID(int=4), ObjectMessage),
    ],
)
def test_amqp_value_without_annotation(body: Any, cls: type) -> None:
    m = received(AMQP_VALUE, body)
    assert type(m) is cls
    if cls is ObjectMessage:
        assert view(m).body == body  # type: ignore[attr-defined]


def test_amqp_sequence_without_annotation_is_an_object_message() -> None:
    m = received(AMQP_SEQUENCE, [[1, "a"], [UInt(2)]])
    assert isinstance(m, ObjectMessage) and view(m).body == [1, "a", UInt(2)]


def test_non_string_map_keys_in_a_map_message_raise() -> None:
    with pytest.raises(MessageFormatException, match="key"):
        received(AMQP_VALUE, {Symbol("a"): 1, 5: 2}, msg_type=2)


def test_text_that_is_not_valid_for_its_charset_raises() -> None:
    with pytest.raises(MessageFormatException, match="utf-8"):
        received(DATA, [b"\xff\xfe\xfd"], "text/plain")


# -- typed contents ----------------------------------------------------------------------------


def test_map_and_stream_bodies_keep_every_jms_type() -> None:
    values = {
        "bool": True,
        "byte": Byte(-3),
        "short": Short(300),
        "char": Char("é"),
        "int": Int(70000),
        "long": 2**40,
        "float": Float(1.25),
        "double": 2.5,
        "str": "s",
        "bytes": b"\x00\xff",
        "null": None,
    }
    s = decode_sections(encode(MapMessage(values)))
    assert s.body == values
    assert {k: type(v) for k, v in s.body.items()} == {k: type(v) for k, v in values.items()}
    r = decode(encode(MapMessage(values)))
    assert isinstance(r, MapMessage)
    assert {k: (type(v), v) for k, v in view(r).body.items()} == {k: (type(v), v) for k, v in values.items()}
    r2 = decode(encode(StreamMessage(list(values.values()))))
    assert isinstance(r2, StreamMessage)
    assert [(type(v), v) for v in view(r2).body] == [(type(v), v) for v in values.values()]


def test_jms_char_travels_as_the_amqp_char_type() -> None:
    pm = to_amqp(MapMessage({"c": Char("x")}))
    assert isinstance(pm.body["c"], proton.char)
    pm = to_amqp(StreamMessage([Char("y")]))
    assert isinstance(pm.body[0], proton.char)
    back = from_amqp(pm)
    assert isinstance(back, StreamMessage) and type(view(back).body[0]) is Char


def test_object_message_keeps_amqp_types() -> None:
    obj = {"u": ULong(5), "t": Timestamp(9), "l": [Short(1), Symbol("s")], "d": Described(ULong(1), "v")}
    r = decode(encode(ObjectMessage(obj)))
    assert isinstance(r, ObjectMessage)
    got = r.get_object()
    assert got == obj
    assert type(got["u"]) is ULong and type(got["t"]) is Timestamp and type(got["l"][1]) is Symbol


def test_from_amqp_reads_proton_built_messages() -> None:
    pm = proton.Message(body=b"\x01\x02", content_type="application/octet-stream", address="q", durable=True)
    m = from_amqp(pm)
    assert isinstance(m, BytesMessage) and view(m).body == b"\x01\x02"
    assert m.get_jms_delivery_mode() == 2 and m.get_jms_destination() is not None
    with pytest.raises(TypeError):
        from_amqp("not a message")
