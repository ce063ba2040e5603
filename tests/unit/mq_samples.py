"""Sample JMS messages and a "what the user sees" view, shared by the MQ tests."""

from __future__ import annotations

from typing import Any

from amqp_jms.destination import Queue
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.types import Byte, Char, Float, Int, Short

HEX_ID = "ID:" + "0123456789abcdef" * 3


def view(m: Message) -> dict[str, Any]:
    """What a JMS user sees, less the receive-only JMSXDeliveryCount."""
    body: Any = None
    if isinstance(m, TextMessage):
        body = m._text
    elif isinstance(m, BytesMessage):
        body = m._body_bytes()
    elif isinstance(m, MapMessage):
        body = {k: (type(v), v) for k, v in m._map.items()}
    elif isinstance(m, StreamMessage):
        body = [(type(v), v) for v in m._items]
    elif isinstance(m, ObjectMessage):
        body = m._object
    props = {k: (type(v), v) for k, v in m._props.items() if k != "JMSXDeliveryCount"}
    return {
        "class": type(m).__name__, "id": m._message_id, "ts": m._timestamp, "cid": m._correlation_id,
        "reply": m._reply_to, "dest": m._destination, "mode": m._delivery_mode, "type": m._type,
        "exp": m._expiration, "dt": m._delivery_time, "pri": m._priority, "props": props, "body": body,
    }  # fmt: skip


def full(m: Message) -> Message:
    m._message_id = HEX_ID
    m._timestamp = 1_763_740_800_123
    m._expiration = m._timestamp + 60_000
    m._delivery_time = m._timestamp + 5_000
    m._correlation_id = "order-42"
    m._reply_to = Queue("REPLY.Q")
    m._destination = Queue("ORDERS")
    m._delivery_mode = 1
    m._type = "OrderCreated"
    m._priority = 8
    m._props.update({"s": "x<&>y", "b": True, "i1": Byte(-1), "i2": Short(2), "i4": Int(3), "l": 2**40,
                     "f": Float(1.5), "d": 2.25, "n": None, "JMSXUserID": "alice", "JMSXAppID": "shop",
                     "JMSXGroupID": "grp-1", "JMSXGroupSeq": Int(3), "JMS_AMQP_X": "vendor"})  # fmt: skip
    return m


def six() -> list[Message]:
    return [
        full(Message()),
        full(TextMessage("héllo € <xml/> &")),
        full(BytesMessage._blank()),
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
