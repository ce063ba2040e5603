"""proton as the oracle of the mapping.

1. Every JMS message we encode decodes with ``proton.Message.decode`` to the same sections and
   typed values as our own section decoder reads.
2. Messages built and encoded by proton (random sections, typed property values, bodies)
   decode with ours to the same JMS view as a reference implementation of the receive rules
   written over proton's decoder (mapping_reference_view.py).
"""

from __future__ import annotations

import uuid
from typing import Any

import proton
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mapping_proton_oracle import SCALARS, from_proton, to_proton, typed
from mapping_reference_view import jms_view, reference_view

from amqp_jms.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from amqp_jms.mapping import MappingContext, decode, decode_sections, encode
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.testing.messages import with_fields, with_properties
from amqp_jms.types import Byte, Char, Described, Float, Int, Short, Symbol, Timestamp, UInt, ULong

NOW = 1_700_000_000_000
# proton's Message reads its string fields as C strings: no NUL in them
names = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"),
    min_size=1,
    max_size=20,
)
destinations = st.builds(
    lambda cls, n: cls(n), st.sampled_from([Queue, Topic, TemporaryQueue, TemporaryTopic]), names
)
jms_ids = st.one_of(
    names.map(lambda s: "ID:" + s),
    st.integers(0, 2**64 - 1).map(lambda n: f"ID:AMQP_ULONG:{n}"),
    st.uuids().map(lambda u: f"ID:AMQP_UUID:{u}"),
    st.binary(max_size=8).map(lambda b: "ID:AMQP_BINARY:" + b.hex().upper()),
    names.map(lambda s: "ID:AMQP_STRING:" + s),
    names.map(lambda s: "ID:AMQP_NO_PREFIX:" + s),
)
property_values = st.one_of(
    st.none(), st.booleans(), SCALARS[Byte], SCALARS[Short], SCALARS[Int], SCALARS[int], SCALARS[Float],
    SCALARS[float], st.text(max_size=30),
)  # fmt: skip
jms_values = st.one_of(property_values, SCALARS[Char], st.binary(max_size=30))
amqp_object = st.recursive(
    st.one_of(jms_values, SCALARS[UInt], SCALARS[ULong], SCALARS[Timestamp], SCALARS[Symbol], st.uuids()),
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=5), c, max_size=4)),
    max_leaves=10,
)


@st.composite
def jms_messages(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(["message", "text", "bytes", "map", "stream", "object"]))
    m: Message
    if kind == "text":
        m = TextMessage(draw(st.none() | st.text(max_size=50)))
    elif kind == "bytes":
        m = BytesMessage(draw(st.binary(max_size=50)))
    elif kind == "map":
        m = MapMessage(draw(st.dictionaries(names, jms_values, max_size=5)))
    elif kind == "stream":
        m = StreamMessage(draw(st.lists(jms_values, max_size=5)))
    elif kind == "object":
        m = ObjectMessage(draw(amqp_object))
    else:
        m = Message()
    m.set_jms_message_id(draw(st.none() | jms_ids))
    m = with_fields(m, correlation_id=draw(st.none() | jms_ids | names | st.binary(min_size=1, max_size=8)))
    m.set_jms_destination(draw(st.none() | destinations))
    m.set_jms_reply_to(draw(st.none() | destinations))
    m.set_jms_type(draw(st.none() | names))
    m.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
    m.set_jms_priority(draw(st.integers(0, 9)))
    m.set_jms_timestamp(draw(st.integers(0, 2**45)))
    m.set_jms_expiration(draw(st.sampled_from([0, view(m).timestamp + 1000])))
    m.set_jms_delivery_time(draw(st.sampled_from([view(m).timestamp, view(m).timestamp + 5000])))
    m = with_properties(m,
        draw(st.dictionaries(names.filter(lambda n: not n.startswith("JMS")), property_values, max_size=5))
    )
    if draw(st.booleans()):
        m = with_properties(m, {"JMSXGroupID": draw(names)})
        m = with_properties(m, {"JMSXGroupSeq": Int(draw(st.integers(-(2**31), 2**31 - 1)))})
    if draw(st.booleans()):
        m = with_properties(m, {"JMSXUserID": draw(names)})
        m = with_properties(m, {"JMS_AMQP_CONTENT_ENCODING": draw(st.sampled_from(["gzip", "identity"]))})
    return m


def _proton_id(v: Any) -> Any:
    # proton.Message reads a ulong id as a plain int (ids have no signed integer form)
    return ULong(v) if type(v) is int else from_proton(v)


def _proton_sections(pm: proton.Message) -> dict[str, Any]:
    return {
        "durable": pm.durable,
        "priority": pm.priority,
        "ttl": round(pm.ttl * 1000),
        "first_acquirer": pm.first_acquirer,
        "delivery_count": pm.delivery_count,
        "message_id": typed(_proton_id(pm.id)),
        "user_id": bytes(pm.user_id) if pm.user_id else None,
        "to": pm.address,
        "subject": pm.subject,
        "reply_to": pm.reply_to,
        "correlation_id": typed(_proton_id(pm.correlation_id)),
        "content_type": None if pm.content_type in (None, proton.symbol("None")) else str(pm.content_type),
        "content_encoding": None
        if pm.content_encoding in (None, proton.symbol("None"))
        else str(pm.content_encoding),
        "absolute_expiry_time": round(pm.expiry_time * 1000),
        "creation_time": round(pm.creation_time * 1000),
        "group_id": pm.group_id,
        "group_sequence": pm.group_sequence,
        "message_annotations": typed(from_proton(dict(pm.annotations or {}))),
        "application_properties": typed(from_proton(pm.properties or {})),
        "body": typed(from_proton(pm.body)),
    }


def _our_sections(data: bytes) -> dict[str, Any]:
    s = decode_sections(data)
    h, p = s.header, s.properties
    body = s.body
    if s.body_type in (0x75, 0x76):
        body = body[0]
    return {
        "durable": h.durable if h else False,
        "priority": h.priority if h else 4,
        "ttl": (h.ttl or 0) if h else 0,
        "first_acquirer": h.first_acquirer if h else False,
        "delivery_count": h.delivery_count if h else 0,
        "message_id": typed(p.message_id if p else None),
        "user_id": p.user_id if p else None,
        "to": p.to if p else None,
        "subject": p.subject if p else None,
        "reply_to": p.reply_to if p else None,
        "correlation_id": typed(p.correlation_id if p else None),
        "content_type": p.content_type if p else None,
        "content_encoding": p.content_encoding if p else None,
        "absolute_expiry_time": (p.absolute_expiry_time or 0) if p else 0,
        "creation_time": (p.creation_time or 0) if p else 0,
        "group_id": p.group_id if p else None,
        "group_sequence": (p.group_sequence or 0) if p else 0,
        "message_annotations": typed(s.message_annotations or {}),
        "application_properties": typed(s.application_properties or {}),
        "body": typed(body),
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jms_messages(), st.integers(0, 2**33))
def test_our_encoding_decodes_with_proton_to_the_same_sections(m: Message, ttl: int) -> None:
    data = encode(m, context=MappingContext(time_to_live=ttl))
    pm: Any = proton.Message()
    pm.decode(data)
    assert _proton_sections(pm) == _our_sections(data)


def _expected_id(jms: str | None, correlation: bool) -> str | None:
    """What an id reads back as. ``ID:AMQP_STRING:x`` / ``ID:AMQP_NO_PREFIX:x`` send the bare
    string ``x``, which reads back per the receive rules (docs/mapping.md)."""
    if jms is None:
        return None
    for escape in ("ID:AMQP_STRING:", "ID:AMQP_NO_PREFIX:"):
        if jms.startswith(escape):
            wire = jms[len(escape) :]
            if not wire.startswith("ID:"):
                return wire if correlation else "ID:AMQP_NO_PREFIX:" + wire
            reserved = wire[3:].startswith(("AMQP_UUID:", "AMQP_ULONG:", "AMQP_BINARY:", "AMQP_STRING:",
                                            "AMQP_NO_PREFIX:"))  # fmt: skip
            return "ID:AMQP_STRING:" + wire if reserved else wire
    return jms


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jms_messages())
def test_jms_messages_round_trip(m: Message) -> None:
    r = decode(encode(m))
    v1, v2 = jms_view(r), jms_view(m)
    v2["redelivered"] = False
    v2["message_id"] = _expected_id(v2["message_id"], correlation=False)
    v2["correlation_id"] = _expected_id(v2["correlation_id"], correlation=True)
    props = dict(view(m).properties)
    props["JMSXDeliveryCount"] = Int(1)
    if isinstance(m, BytesMessage):  # the default content-type reads back as a vendor property
        props.setdefault("JMS_AMQP_CONTENT_TYPE", "application/octet-stream")
    v2["properties"] = typed(props)
    if isinstance(m, Message) and type(m) is Message:
        v2["body"] = typed(None)
    assert v1 == v2


# -- proton-built messages ----------------------------------------------------------------------

proton_ids = st.one_of(
    st.none(),
    names,
    names.map(lambda s: "ID:" + s),
    st.sampled_from(["ID:AMQP_ULONG:1", "ID:AMQP_STRING:x", "AMQP_UUID:y"]),
    st.integers(0, 2**64 - 1).map(proton.ulong),
    st.uuids(),
    st.binary(min_size=1, max_size=8),
)
content_types = st.sampled_from(
    [
        None,
        "application/octet-stream",
        "application/x-java-serialized-object",
        "text/plain",
        "text/plain; charset=utf-8",
        "application/json",
        "application/vnd.x+json",
        "image/png",
        "application/xml",
    ]
)
proton_property_values = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False),
    st.text(max_size=20), SCALARS[Byte].map(proton.byte), SCALARS[Short].map(proton.short),
    SCALARS[Int].map(proton.int32),
    SCALARS[UInt].map(proton.uint), SCALARS[ULong].map(proton.ulong), SCALARS[Float].map(proton.float32),
    SCALARS[Char].map(proton.char), SCALARS[Timestamp].map(proton.timestamp), st.binary(max_size=10),
)  # fmt: skip
bodies = st.one_of(
    st.tuples(st.just("none"), st.none()),
    st.tuples(st.just("value"), st.one_of(st.none(), st.text(max_size=30), st.binary(max_size=30),
                                          st.integers(0, 2**60), st.lists(st.text(max_size=5), max_size=3))),
    st.tuples(st.just("data"), st.text(max_size=30).map(str.encode)),
    st.tuples(st.just("sequence"), st.lists(proton_property_values, max_size=4)),
    st.tuples(st.just("map"), st.dictionaries(st.text(max_size=5), proton_property_values, max_size=4)),
)  # fmt: skip
seconds = st.integers(1, 2**31).map(lambda s: s * 1000)


@st.composite
def proton_messages(draw: st.DrawFn) -> proton.Message:
    pm: Any = proton.Message()
    pm.durable = draw(st.booleans())
    pm.priority = draw(st.integers(0, 255))
    if draw(st.booleans()):
        pm.ttl = draw(st.integers(1, 4_000_000))  # seconds; the wire holds ms in a uint
    pm.first_acquirer = draw(st.booleans())
    pm.delivery_count = draw(st.integers(0, 2**32 - 1))
    pm.id = draw(proton_ids)
    pm.correlation_id = draw(proton_ids)
    if draw(st.booleans()):
        pm.user_id = draw(names).encode()
    pm.address = draw(st.none() | names)
    pm.reply_to = draw(st.none() | names)
    pm.subject = draw(st.none() | names)
    ct = draw(content_types)
    if ct is not None:
        pm.content_type = ct
    if draw(st.booleans()):
        pm.content_encoding = "gzip"
    if draw(st.booleans()):
        pm.creation_time = draw(seconds) / 1000
    if draw(st.booleans()):
        pm.expiry_time = draw(seconds) / 1000
    pm.group_id = draw(st.none() | names)
    # proton cannot tell an absent group-sequence from 0 (and writes a 0 when later fields are set)
    pm.group_sequence = draw(st.integers(1, 2**32 - 1))
    pm.reply_to_group_id = draw(st.none() | names)
    ann: dict[Any, Any] = {}
    for key, strategy in [
        ("x-opt-jms-dest", st.integers(0, 3).map(proton.byte)),
        ("x-opt-jms-reply-to", st.integers(0, 3).map(proton.byte)),
        ("x-opt-to-type", st.sampled_from(["queue", "topic", "queue,temporary", " temporary , topic"])),
        ("x-opt-reply-type", st.sampled_from(["queue", "topic", "topic,temporary"])),
        ("x-opt-app-correlation-id", st.booleans()),
        ("x-opt-delivery-time", seconds.map(proton.timestamp)),
        ("x-opt-jms-type", names),
        ("x-opt-other", proton_property_values),
    ]:
        if draw(st.integers(0, 3)) == 0:
            ann[proton.symbol(key)] = draw(strategy)
    kind, body = draw(bodies)
    if kind == "value" and draw(st.booleans()):
        code = 5 if body is None or isinstance(body, str) else 3 if isinstance(body, bytes) else 1
        ann[proton.symbol("x-opt-jms-msg-type")] = proton.byte(code)
    if kind == "map" and draw(st.booleans()):
        ann[proton.symbol("x-opt-jms-msg-type")] = proton.byte(2)
    if kind == "sequence" and draw(st.booleans()):
        ann[proton.symbol("x-opt-jms-msg-type")] = proton.byte(4)
    if ann:
        pm.annotations = ann
    pm.properties = draw(st.dictionaries(names, proton_property_values, max_size=5))
    if kind in ("data", "sequence"):
        pm.inferred = True
    if kind != "none":
        pm.body = body
    return pm


consumers = st.none() | st.sampled_from(
    [Queue("cq"), Topic("ct"), TemporaryQueue("tq"), TemporaryTopic("tt")]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(proton_messages(), consumers)
def test_proton_built_messages_decode_as_the_reference_path_says(
    pm: proton.Message, consumer: Destination | None
) -> None:
    data = pm.encode()
    ours = decode(data, context=MappingContext(consumer_destination=consumer, now_ms=NOW))
    assert jms_view(ours) == reference_view(pm, consumer, NOW)


def test_reference_path_sees_described_and_uuid_object_bodies() -> None:
    items: list[Any] = [uuid.UUID(int=1)]
    pm = proton.Message(body=proton.Described(proton.symbol("d"), items))
    ours = decode(pm.encode())
    assert jms_view(ours) == reference_view(pm)
    assert view(ours).body == Described(Symbol("d"), [uuid.UUID(int=1)])  # type: ignore[attr-defined]


def test_to_proton_helper_matches_the_reference_types() -> None:
    assert typed(from_proton(to_proton({"a": Int(1)}))) == typed({"a": Int(1)})
