"""Message <-> row conversion: every body type and header survives a row, types included."""

from __future__ import annotations

import json

from amqp_jms.destination import Queue, Topic
from amqp_jms.mapping import decode, encode
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.spark.schema import COLUMNS, arrow_schema, message_to_values, rows_to_batch, values_to_message
from amqp_jms.types import Byte, Char, Float, Int, Short


def _received(message: Message) -> Message:
    message.set_jms_message_id("ID:test:1")
    message.set_jms_destination(Queue("q"))
    message.set_jms_timestamp(1_700_000_000_123)
    return decode(encode(message))


def test_headers_and_properties_become_columns() -> None:
    msg = TextMessage("hello")
    msg.set_jms_correlation_id("corr")
    msg.set_jms_type("order")
    msg.set_jms_reply_to(Topic("replies"))
    msg.set_byte_property("b", 5)
    msg.set_float_property("f", 1.5)
    msg.set_boolean_property("ok", True)
    msg.set_string_property("JMSXGroupID", "g1")
    msg.set_int_property("JMSXGroupSeq", 3)
    values = message_to_values(_received(msg))
    assert values["message_id"] == "ID:test:1" and values["correlation_id"] == "corr"
    assert values["destination"] == "queue://q" and values["reply_to"] == "topic://replies"
    assert values["jms_type"] == "order" and values["message_type"] == "Text" and values["text"] == "hello"
    assert values["timestamp"] == 1_700_000_000_123_000  # microseconds for Arrow
    assert values["delivery_mode"] == 2 and values["priority"] == 4 and values["redelivered"] is False
    assert values["group_id"] == "g1" and values["group_seq"] == 3
    props = dict(values["properties"])
    assert props["b"] == "5" and props["f"] == "1.5" and props["ok"] == "true"
    typed = json.loads(values["typed_properties"])
    assert typed["b"] == {"type": "byte", "value": 5} and typed["f"] == {"type": "float", "value": 1.5}


def test_each_body_type_round_trips_through_a_row() -> None:
    text = TextMessage("t")
    data = BytesMessage()
    data.write_bytes(b"\x00\xff")
    mapped = MapMessage()
    mapped.set_short("s", 7)
    mapped.set_char("c", "x")
    stream = StreamMessage()
    stream.write_int(1)
    stream.write_float(2.5)
    stream.write_string("three")
    obj = ObjectMessage([1, "two"])
    for original in (text, data, mapped, stream, obj, Message()):
        original.set_int_property("n", 9)
        values = message_to_values(_received(original))
        rebuilt = values_to_message(values)
        assert type(rebuilt) is type(original)
        assert type(rebuilt.get_object_property("n")) is Int
    assert values_to_message(message_to_values(_received(data))).get_body(bytes) == b"\x00\xff"
    rebuilt_map = values_to_message(message_to_values(_received(mapped)))
    assert type(rebuilt_map.get_object("s")) is Short and type(rebuilt_map.get_object("c")) is Char
    rebuilt_stream = values_to_message(message_to_values(_received(stream)))
    rebuilt_stream.reset()
    items = [rebuilt_stream.read_object() for _ in range(3)]
    assert [type(i) for i in items] == [Int, Float, str] and items == [1, 2.5, "three"]
    assert values_to_message(message_to_values(_received(obj))).get_object() == [1, "two"]


def test_body_as_string_and_arrow_batch_matches_the_schema() -> None:
    data = BytesMessage()
    data.write_bytes("héllo".encode())
    values = message_to_values(_received(data), body_as="string")
    assert values["body"] == "héllo"
    batch = rows_to_batch([values], arrow_schema("string"))
    assert batch.schema.names == [name for name, _ in COLUMNS]
    assert batch.column("body").to_pylist() == ["héllo"]
    binary = rows_to_batch([message_to_values(_received(data))], arrow_schema(include_amqp=True))
    assert binary.schema.names[-1] == "amqp" and binary.column("body").to_pylist() == ["héllo".encode()]


def test_row_type_overrides_and_byte_property_types_survive() -> None:
    row = {
        "text": "x",
        "message_type": "Bytes",
        "body": b"\x01",
        "typed_properties": '{"p":{"type":"byte","value":1}}',
    }
    msg = values_to_message(row)
    assert isinstance(msg, BytesMessage) and type(msg.get_object_property("p")) is Byte
    assert isinstance(values_to_message({"body": None}, message_type="Text"), TextMessage)
