"""Message states (JMS §3.10, §3.11.2, BytesMessage/StreamMessage modes), headers, acknowledge,
and the provider SPI the mapping and client build on (_blank, _mark_received, _copy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import amqp_jms
from amqp_jms import (
    DEFAULT_DELIVERY_MODE,
    DEFAULT_PRIORITY,
    DEFAULT_TIME_TO_LIVE,
    BytesMessage,
    DeliveryMode,
    JMSException,
    MapMessage,
    Message,
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
    MessageNotWriteableException,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
    Topic,
)
from amqp_jms.message._data import restore, snapshot, view
from amqp_jms.message._seam import mark_received, set_ack_callback
from amqp_jms.testing.messages import with_fields
from amqp_jms.types import Int

# A body write for each message type, used to check read-only bodies.
BODY_WRITES: dict[type[Message], Callable[[Any], None]] = {
    TextMessage: lambda m: m.set_text("x"),
    BytesMessage: lambda m: m.write_int(1),
    MapMessage: lambda m: m.set_int("a", 1),
    StreamMessage: lambda m: m.write_int(1),
    ObjectMessage: lambda m: m.set_object([1]),
}
ALL_TYPES = [Message, *BODY_WRITES]


def test_constants() -> None:
    assert DeliveryMode.PERSISTENT == 2 and DeliveryMode.NON_PERSISTENT == 1
    assert DEFAULT_PRIORITY == 4 and DEFAULT_DELIVERY_MODE == DeliveryMode.PERSISTENT
    assert DEFAULT_TIME_TO_LIVE == 0
    assert Message.DEFAULT_PRIORITY == 4 and Message.DEFAULT_DELIVERY_MODE == 2
    assert TextMessage.DEFAULT_TIME_TO_LIVE == 0 and Message.DEFAULT_DELIVERY_DELAY == 0


def test_message_names_are_exported() -> None:
    for name in ("Message", "TextMessage", "BytesMessage", "MapMessage", "StreamMessage",
                 "ObjectMessage", "DeliveryMode", "JavaSerializedObject", "DEFAULT_PRIORITY",
                 "DEFAULT_DELIVERY_MODE", "DEFAULT_TIME_TO_LIVE"):
        assert name in amqp_jms.__all__ and name in amqp_jms.message.__all__
        assert getattr(amqp_jms, name) is getattr(amqp_jms.message, name)
    assert "Queue" in amqp_jms.__all__  # the existing exports stay


@pytest.mark.parametrize("cls", ALL_TYPES)
def test_new_message_defaults(cls: type[Message]) -> None:
    for msg in (cls(), cls._blank()):
        assert msg.get_jms_message_id() is None
        assert msg.get_jms_timestamp() == 0
        assert msg.get_jms_correlation_id() is None
        assert msg.get_jms_reply_to() is None and msg.get_jms_destination() is None
        assert msg.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
        assert msg.get_jms_redelivered() is False
        assert msg.get_jms_type() is None
        assert msg.get_jms_expiration() == 0 and msg.get_jms_delivery_time() == 0
        assert msg.get_jms_priority() == 4
        assert msg.get_property_names() == []


@pytest.mark.parametrize("cls", list(BODY_WRITES))
def test_new_message_body_is_writable(cls: type[Message]) -> None:
    msg = cls()
    BODY_WRITES[cls](msg)
    if isinstance(msg, StreamMessage):  # get_body refuses a StreamMessage (JMS 2.0): read it back
        msg.reset()
        assert msg.read_int() == 1
    else:
        expected = {TextMessage: "x", BytesMessage: b"\x00\x00\x00\x01", MapMessage: {"a": Int(1)},
                    ObjectMessage: [1]}  # fmt: skip
        assert msg.get_body(object) == expected[cls]


@pytest.mark.parametrize("cls", list(BODY_WRITES))
def test_received_body_is_read_only_until_clear_body(cls: type[Message]) -> None:
    msg = cls()
    BODY_WRITES[cls](msg)
    msg.set_int_property("p", 1)
    mark_received(msg)
    with pytest.raises(MessageNotWriteableException):
        BODY_WRITES[cls](msg)
    with pytest.raises(MessageNotWriteableException):
        msg.set_int_property("q", 1)
    msg.clear_body()
    BODY_WRITES[cls](msg)  # writable again, and empty before the write
    assert msg.get_int_property("p") == 1  # clearing the body kept the properties
    with pytest.raises(MessageNotWriteableException):
        msg.set_int_property("q", 1)  # ... and they stay read-only


def test_cleared_body_is_empty() -> None:
    text = TextMessage("x")
    mark_received(text)
    text.clear_body()
    assert text.get_text() is None
    map_msg = MapMessage({"a": 1})
    map_msg.clear_body()
    assert map_msg.get_map_names() == []
    obj = ObjectMessage(1)
    obj.clear_body()
    assert obj.get_object() is None


def test_received_headers_stay_writable() -> None:
    msg = TextMessage("x")
    mark_received(msg)
    msg.set_jms_priority(9)
    msg.set_jms_redelivered(True)
    msg.set_jms_correlation_id("c")
    assert msg.get_jms_priority() == 9 and msg.get_jms_redelivered()


@pytest.mark.parametrize("cls", [BytesMessage, StreamMessage])
def test_bytes_and_stream_are_write_only_until_reset(cls: type[BytesMessage | StreamMessage]) -> None:
    msg = cls()
    msg.write_int(1)
    with pytest.raises(MessageNotReadableException):
        msg.read_int()
    with pytest.raises(MessageNotReadableException):
        msg.read_bytes(bytearray(1))
    msg.reset()
    assert msg.read_int() == 1
    with pytest.raises(MessageEOFException):
        msg.read_int()
    with pytest.raises(MessageNotWriteableException):
        msg.write_int(2)  # reset makes the body read-only
    msg.reset()
    assert msg.read_int() == 1  # reset again rewinds
    msg.clear_body()
    msg.write_int(3)  # clear_body: empty and writable again
    with pytest.raises(MessageNotReadableException):
        msg.read_int()
    msg.reset()
    assert msg.read_int() == 3


def test_bytes_body_length_only_while_reading() -> None:
    msg = BytesMessage(b"abc")
    with pytest.raises(MessageNotReadableException):
        msg.get_body_length()
    msg.reset()
    assert msg.get_body_length() == 3


@pytest.mark.parametrize("cls", [BytesMessage, StreamMessage])
def test_received_bytes_and_stream_are_readable_at_start(cls: type[Message]) -> None:
    msg = cls._blank()
    if isinstance(msg, BytesMessage):
        msg = with_fields(msg, body=b"\x00\x00\x00\x07")
    else:
        assert isinstance(msg, StreamMessage)
        msg = with_fields(msg, body=[Int(7)])
    mark_received(msg)
    assert msg.read_int() == 7
    with pytest.raises(MessageNotWriteableException):
        msg.write_int(1)


# ---------------------------------------------------------------- headers


def test_header_round_trips() -> None:
    msg = TextMessage()
    msg.set_jms_message_id("ID:1")
    msg.set_jms_timestamp(1700000000000)
    msg.set_jms_correlation_id("corr")
    msg.set_jms_reply_to(Queue("replies"))
    msg.set_jms_destination(Topic("news"))
    msg.set_jms_delivery_mode(DeliveryMode.NON_PERSISTENT)
    msg.set_jms_redelivered(True)
    msg.set_jms_type("kind")
    msg.set_jms_expiration(1700000005000)
    msg.set_jms_delivery_time(1700000001000)
    msg.set_jms_priority(0)
    assert msg.get_jms_message_id() == "ID:1"
    assert msg.get_jms_timestamp() == 1700000000000
    assert msg.get_jms_correlation_id() == "corr"
    with pytest.raises(JMSException, match="not binary"):  # a String id has no byte form
        msg.get_jms_correlation_id_as_bytes()
    assert msg.get_jms_reply_to() == Queue("replies")
    assert msg.get_jms_destination() == Topic("news")
    assert msg.get_jms_delivery_mode() == 1
    assert msg.get_jms_redelivered() is True
    assert msg.get_jms_type() == "kind"
    assert msg.get_jms_expiration() == 1700000005000
    assert msg.get_jms_delivery_time() == 1700000001000
    assert msg.get_jms_priority() == 0
    assert "ID:1" in repr(msg) and "topic://news" in repr(msg)


def test_correlation_id_as_bytes() -> None:
    msg = Message()
    msg.set_jms_correlation_id_as_bytes(bytearray(b"\x01\xab"))
    assert msg.get_jms_correlation_id_as_bytes() == b"\x01\xab"
    assert msg.get_jms_correlation_id() == "ID:AMQP_BINARY:01AB"
    msg.set_jms_correlation_id_as_bytes(None)
    assert msg.get_jms_correlation_id() is None and msg.get_jms_correlation_id_as_bytes() is None


@pytest.mark.parametrize(
    ("setter", "value", "error"),
    [("set_jms_priority", 10, ValueError), ("set_jms_priority", -1, ValueError),
     ("set_jms_priority", "4", ValueError), ("set_jms_delivery_mode", 3, ValueError),
     ("set_jms_delivery_mode", True, ValueError), ("set_jms_timestamp", "now", TypeError),
     ("set_jms_expiration", 1.5, TypeError), ("set_jms_reply_to", "queue://x", TypeError),
     ("set_jms_destination", 5, TypeError), ("set_jms_message_id", 5, TypeError),
     ("set_jms_correlation_id", b"x", TypeError), ("set_jms_type", 1, TypeError),
     ("set_jms_redelivered", 1, TypeError)],
)
def test_header_setters_reject_bad_values(setter: str, value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        getattr(Message(), setter)(value)


# ---------------------------------------------------------------- acknowledge


def test_acknowledge_without_session_is_a_no_op() -> None:
    TextMessage("x").acknowledge()


def test_acknowledge_calls_the_session_callback() -> None:
    calls: list[str] = []
    msg = TextMessage("x")
    set_ack_callback(msg, lambda: calls.append("ack"))
    msg.acknowledge()
    msg.acknowledge()
    assert calls == ["ack", "ack"]


# ---------------------------------------------------------------- the record: restore(snapshot(m))


def test_copy_is_independent_and_writable() -> None:
    msg = MapMessage({"a": 1})
    msg.set_string_property("p", "v")
    msg.set_jms_correlation_id("c")
    acks: list[str] = []
    set_ack_callback(msg, lambda: acks.append("ack"))
    mark_received(msg)
    copy = restore(snapshot(msg))
    assert type(copy) is MapMessage and copy is not msg
    copy.acknowledge()  # the copy is no session's: acknowledging it acknowledges nothing
    assert copy.get_jms_correlation_id() == "c" and acks == []
    copy.set_int("b", 2)
    copy.set_int_property("q", 1)
    assert msg.get_map_names() == ["a"] and msg.get_property_names() == ["p"]
    assert copy.get_map_names() == ["a", "b"]
    assert msg != copy  # equality is identity


@pytest.mark.parametrize("cls", [BytesMessage, StreamMessage])
def test_copy_of_bytes_and_stream_keeps_the_whole_body(cls: type[BytesMessage | StreamMessage]) -> None:
    msg = cls()
    msg.write_int(1)
    msg.write_int(2)
    msg.reset()
    assert msg.read_int() == 1
    copy = restore(snapshot(msg))
    copy.write_int(3)  # write mode, appending after the whole body
    copy.reset()
    assert [copy.read_int(), copy.read_int(), copy.read_int()] == [1, 2, 3]
    assert msg.read_int() == 2  # the original's position is untouched


def test_copy_of_object_message_does_not_share_containers() -> None:
    msg = ObjectMessage({"k": [1]})
    copy = restore(snapshot(msg))
    view(copy).body["k"].append(2)
    assert msg.get_object() == {"k": [1]}


def test_bytes_spi_body_access() -> None:
    msg = BytesMessage()
    msg.write_short(1)
    assert view(msg).body == b"\x00\x01"  # whole body in write mode
    msg.reset()
    msg.read_byte()
    assert view(msg).body == b"\x00\x01"  # and regardless of position
    blank = BytesMessage()
    blank = with_fields(blank, body=b"\x00\x02")
    mark_received(blank)
    assert blank.read_short() == 2
    blank.clear_body()
    blank.write_byte(1)
    assert view(blank).body == b"\x01"


@pytest.mark.parametrize("cls", ALL_TYPES)
def test_messages_use_slots(cls: type[Message]) -> None:
    msg = cls()
    with pytest.raises(AttributeError):
        msg.some_new_attribute = 1  # type: ignore[attr-defined]


def test_ack_type_can_be_set_on_a_received_message_while_other_properties_stay_read_only() -> None:
    from amqp_jms import MessageNotWriteableException, TextMessage

    msg = TextMessage("x")
    mark_received(msg)
    msg.set_int_property("JMS_AMQP_ACK_TYPE", 3)
    assert msg.get_int_property("JMS_AMQP_ACK_TYPE") == 3
    import pytest

    with pytest.raises(MessageNotWriteableException):
        msg.set_int_property("other", 1)


@pytest.mark.parametrize("bad", ["ID:AMQP_ULONG:foo", "ID:AMQP_UUID:not-a-uuid", "ID:AMQP_BINARY:ABC",
                                 "ID:AMQP_ULONG:18446744073709551616"])
def test_invalid_encoded_correlation_id_is_refused_at_the_set(bad: str) -> None:
    # OASIS AMQP JMS Mapping 3.2.1.1: the encoded form must decode; refused now, not at send
    msg = Message()
    with pytest.raises(MessageFormatException, match="JMSCorrelationID"):
        msg.set_jms_correlation_id(bad)
    assert msg.get_jms_correlation_id() is None


def test_encoded_binary_correlation_id_reads_as_bytes() -> None:
    msg = Message()
    msg.set_jms_correlation_id("ID:AMQP_BINARY:01AB")
    assert msg.get_jms_correlation_id_as_bytes() == b"\x01\xab"
    msg.set_jms_correlation_id("ID:AMQP_ULONG:42")  # valid encodings are kept as they are
    assert msg.get_jms_correlation_id() == "ID:AMQP_ULONG:42"
