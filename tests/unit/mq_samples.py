"""Sample JMS messages and a "what the user sees" view, shared by the MQ tests."""

from __future__ import annotations

from typing import Any

from amqp_jms.destination import Queue
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view as data_of
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Char, Float, Int, Short

HEX_ID = "ID:" + "0123456789abcdef" * 3


def view(m: Message) -> dict[str, Any]:
    """What a JMS user sees, less the receive-only JMSXDeliveryCount."""
    d = data_of(m)
    body: Any = d.body
    if isinstance(m, MapMessage):
        body = {k: (type(v), v) for k, v in d.body.items()}
    elif isinstance(m, StreamMessage):
        body = [(type(v), v) for v in d.body]
    elif not isinstance(m, (TextMessage, BytesMessage, ObjectMessage)):
        body = None
    props = {k: (type(v), v) for k, v in d.properties.items() if k != "JMSXDeliveryCount"}
    return {
        "class": type(m).__name__, "id": d.message_id, "ts": d.timestamp, "cid": d.correlation_id,
        "reply": d.reply_to, "dest": d.destination, "mode": d.delivery_mode, "type": d.type,
        "exp": d.expiration, "dt": d.delivery_time, "pri": d.priority, "props": props, "body": body,
    }  # fmt: skip


def full(m: Message) -> Message:
    m.set_jms_message_id(HEX_ID)
    m.set_jms_timestamp(1_763_740_800_123)
    m.set_jms_expiration(1_763_740_800_123 + 60_000)
    m.set_jms_delivery_time(1_763_740_800_123 + 5_000)
    m.set_jms_correlation_id("order-42")
    m.set_jms_reply_to(Queue("REPLY.Q"))
    m.set_jms_destination(Queue("ORDERS"))
    m.set_jms_delivery_mode(1)
    m.set_jms_type("OrderCreated")
    m.set_jms_priority(8)
    # JMSX* and JMS_AMQP_* as a decoder would carry them (the setters keep those to the provider)
    return with_properties(m, {
        "s": "x<&>y", "b": True, "i1": Byte(-1), "i2": Short(2), "i4": Int(3), "l": 2**40,
        "f": Float(1.5), "d": 2.25, "n": None, "JMSXUserID": "alice", "JMSXAppID": "shop",
        "JMSXGroupID": "grp-1", "JMSXGroupSeq": Int(3), "JMS_AMQP_X": "vendor",
    })  # fmt: skip


def six() -> list[Message]:
    return [
        full(Message()),
        full(TextMessage("héllo € <xml/> &")),
        full(BytesMessage()),
        full(
            MapMessage(
                {"a": Int(1), "b": "two", "c": Char("z"), "d": b"\x00\xff", "e": None, "f": Float(0.5)}
            )
        ),
        full(
            StreamMessage(
                ["a", Byte(1), Short(2), Int(3), 4, Float(5.0), 6.0, True, Char("c"), b"\x01", None]
            )
        ),
        full(ObjectMessage({"k": [1, "two", 3.0]})),
    ]
