"""Well-formed AMQP whose sections hold the wrong things, and messages holding any value the
public setters accept: decode/encode raise MessageFormatException and nothing else.

(Byte-level garbage is covered in test_mapping_sections; these inputs pass the codec and reach
the mapping's own field handling, where a KeyError or TypeError would otherwise escape.)"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mapping_proton_oracle import amqp_values, scalar_values

from amqp_jms.destination import Queue, Topic
from amqp_jms.exceptions import JMSException, MessageFormatException
from amqp_jms.mapping import decode, encode
from amqp_jms.mapping.codec import encode_value
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.types import Described, Symbol, ULong

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

field_values = st.one_of(amqp_values, scalar_values)
annotation_keys = st.one_of(
    st.sampled_from(
        [
            Symbol(k)
            for k in ("x-opt-jms-msg-type", "x-opt-jms-dest", "x-opt-jms-reply-to", "x-opt-to-type",
                      "x-opt-reply-type", "x-opt-jms-type", "x-opt-delivery-time", "x-opt-app-correlation-id")
        ]
    ),
    scalar_values,
)  # fmt: skip


@st.composite
def wrong_sections(draw: st.DrawFn) -> bytes:
    """Header, annotations, properties, application-properties and body sections in the right
    order and encoding, holding arbitrary AMQP values."""
    sections: list[Described] = []
    if draw(st.booleans()):
        sections.append(Described(ULong(0x70), draw(st.lists(field_values, max_size=6))))
    if draw(st.booleans()):
        annotations = draw(st.dictionaries(annotation_keys, field_values, max_size=4))
        sections.append(Described(ULong(0x72), annotations))
    if draw(st.booleans()):
        sections.append(Described(ULong(0x73), draw(st.lists(field_values, max_size=13))))
    if draw(st.booleans()):
        keys = st.one_of(st.text(max_size=5), scalar_values)
        sections.append(Described(ULong(0x74), draw(st.dictionaries(keys, field_values, max_size=4))))
    body = draw(st.sampled_from([0x75, 0x76, 0x77, None]))
    if body is not None:
        for _ in range(draw(st.integers(1, 2))):
            sections.append(Described(ULong(body), draw(field_values)))
    return b"".join(encode_value(s) for s in sections)


def _read_everything(m: Message) -> None:
    """What a consumer does with a received message: every header, every property."""
    for name in m.get_property_names():
        m.get_object_property(name)
    m.get_jms_destination(), m.get_jms_reply_to(), m.get_jms_message_id(), m.get_jms_type()
    m.get_jms_correlation_id(), m.get_jms_expiration(), m.get_jms_timestamp(), m.get_jms_priority()
    m.get_jms_delivery_mode(), m.get_jms_delivery_time(), m.get_jms_redelivered()


@SETTINGS
@given(wrong_sections())
def test_wrong_section_contents_raise_only_message_format_exception(data: bytes) -> None:
    try:
        message = decode(data)
    except MessageFormatException as exc:
        assert str(exc)
        return
    _read_everything(message)


texts = st.text(st.characters(codec=None), max_size=6)


@SETTINGS
@given(
    st.sampled_from([Message, TextMessage, BytesMessage, MapMessage, StreamMessage, ObjectMessage]),
    st.dictionaries(st.sampled_from(["a", "b", "JMSXGroupID", "JMSXGroupSeq"]), field_values, max_size=3),
    texts,
    texts,
    st.sampled_from([Queue, Topic]),
)
def test_any_settable_message_encodes_or_raises_message_format_exception(
    cls: type[Message], props: dict[str, Any], jms_type: str, name: str, dest: type[Queue] | type[Topic]
) -> None:
    m = cls()
    for key, value in props.items():
        try:
            m.set_object_property(key, value)
        except (JMSException, TypeError, ValueError):
            pass  # refused by the setter (not a JMS property type, or the wrong type for a JMSX name)
    m.set_jms_type(jms_type)
    m.set_jms_correlation_id(name)
    if name:
        m.set_jms_destination(dest(name))
    try:
        data = encode(m)
    except MessageFormatException as exc:
        assert str(exc)
        return
    back = decode(data)
    if jms_type:
        assert back.get_jms_type() == jms_type
    # a null JMSXGroupID/JMSXGroupSeq is the absent AMQP group field, so only set values must survive
    present = {n for n in m.get_property_names() if m.get_object_property(n) is not None}
    assert present <= set(back.get_property_names())
