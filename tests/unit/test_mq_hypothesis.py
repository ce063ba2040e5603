"""Property-based round trips: any JMS message survives JMS -> MQ -> JMS with its JMS view intact."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mq_samples import view

from amqp_jms.destination import Queue, TemporaryQueue, TemporaryTopic, Topic
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view as data_of
from amqp_jms.mq import MQFormatError, from_mq_bytes, to_mq
from amqp_jms.mq.xmlfolder import check_usr_name
from amqp_jms.testing.messages import with_fields, with_properties
from amqp_jms.types import Byte, Char, Float, Int, Short

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# characters XML 1.0 can carry
xml_char = st.characters(
    blacklist_categories=["Cs"],
    blacklist_characters="".join(map(chr, [*range(0, 9), 11, 12, *range(14, 32), 0xFFFE, 0xFFFF])),
)
text = st.text(xml_char, max_size=30)


def _usr_name_allowed(n: str) -> bool:
    """The MQ writer's own rule for a usr property name (IBM reserves 'JMS' in any case and the
    selector's keywords), so the strategy never draws a name the round trip must refuse."""
    try:
        check_usr_name(n)
    except MQFormatError:
        return False
    return True


name = st.from_regex(r"[a-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(_usr_name_allowed)
finite = st.floats(allow_nan=False)
value = st.one_of(
    st.none(),
    st.booleans(),
    st.builds(Byte, st.integers(-128, 127)),
    st.builds(Short, st.integers(-(2**15), 2**15 - 1)),
    st.builds(Int, st.integers(-(2**31), 2**31 - 1)),
    st.integers(-(2**63), 2**63 - 1),
    st.builds(Float, st.floats(width=32, allow_nan=False)),
    finite,
    text,
)
body_value = st.one_of(value, st.builds(Char, xml_char), st.binary(max_size=10))
dest_name = st.text(xml_char.filter(lambda c: not c.isspace()), min_size=1, max_size=20)
destination = st.one_of(
    st.none(),
    st.builds(Queue, dest_name),
    st.builds(Topic, dest_name),
    st.builds(TemporaryQueue, dest_name),
    st.builds(TemporaryTopic, dest_name),
)
message_id = st.one_of(
    st.none(),
    st.binary(min_size=24, max_size=24).map(lambda b: "ID:" + b.hex()),
    text.map(lambda t: "ID:" + t),
)
correlation = st.one_of(
    st.none(),
    text,
    st.binary(max_size=30),
    st.binary(min_size=24, max_size=24).map(lambda b: "ID:" + b.hex()),
)


@st.composite
def messages(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(["Message", "Text", "Bytes", "Map", "Stream", "Object"]))
    m: Any
    if kind == "Text":
        m = TextMessage(draw(st.one_of(st.none(), text)))
    elif kind == "Bytes":
        m = BytesMessage()
        m = with_fields(m, body=draw(st.binary(max_size=40)))
    elif kind == "Map":
        m = MapMessage(draw(st.dictionaries(text.filter(bool), body_value, max_size=5)))
    elif kind == "Stream":
        m = StreamMessage(draw(st.lists(body_value, max_size=5)))
    elif kind == "Object":
        m = ObjectMessage(draw(st.one_of(st.none(), st.dictionaries(text, st.integers(0, 9), max_size=3))))
    else:
        m = Message()
    m.set_jms_message_id(draw(message_id))
    m = with_fields(m, correlation_id=draw(correlation))  # any id, bytes too, unchecked
    m.set_jms_timestamp(draw(st.one_of(st.just(0), st.integers(0, 4_102_444_800_000))))
    if data_of(m).timestamp and draw(st.booleans()):
        m.set_jms_expiration(data_of(m).timestamp + draw(st.integers(1, 300_000_000_000)))
    m.set_jms_delivery_time(draw(st.one_of(st.just(0), st.integers(1, 4_102_444_800_000))))
    m.set_jms_priority(draw(st.integers(0, 9)))
    m.set_jms_delivery_mode(draw(st.sampled_from([1, 2])))
    m.set_jms_type(draw(st.one_of(st.none(), text)))
    m.set_jms_destination(draw(destination))
    m.set_jms_reply_to(draw(destination))
    m = with_properties(m, draw(st.dictionaries(name, value, max_size=6)))
    if draw(st.booleans()):
        m = with_properties(m, {"JMSXGroupID": draw(text)})
        m = with_properties(m, {"JMSXGroupSeq": Int(draw(st.integers(1, 2**31 - 1)))})
    if draw(st.booleans()):
        m = with_properties(m, {"JMS_AMQP_VENDOR": draw(value)})
    return m


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@SETTINGS
@given(messages(), st.sampled_from(["native", "big"]))
def test_any_message_round_trips(m: Message, encoding: str) -> None:
    back = from_mq_bytes(to_mq(m, encoding=encoding).to_bytes())
    expected = view(m)
    if isinstance(data_of(m).correlation_id, bytes):  # IBM hands CorrelId bytes back as ID: + hex
        raw = data_of(m).correlation_id.ljust(24, b"\0")[:24]
        expected["cid"] = "ID:" + raw.hex() if any(raw) else None
    assert view(back) == expected
