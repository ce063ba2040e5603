"""The AMQP JMS mapping's header and property rules (wd06 3.2.1, 3.2.2, 3.3.1, 3.3.2, 4, 6.1),
both directions. Each rule is a named test; AMQP messages are built section by section so the
tests say exactly what is on the wire."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from amqp_jms.destination import Queue
from amqp_jms.exceptions import MessageFormatException
from amqp_jms.mapping import MappingContext, decode, encode, outbound
from amqp_jms.mapping.codec import Header, Properties, Sections, decode_sections, encode_sections
from amqp_jms.message import BytesMessage, JavaSerializedObject, Message, ObjectMessage, TextMessage
from amqp_jms.message._seam import stamp_send
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Float, Int, Short, Symbol, Timestamp, UByte, UInt, ULong

APP_CORR = Symbol("x-opt-app-correlation-id")


def received(
    *,
    header: Header | None = None,
    ma: dict[Any, Any] | None = None,
    props: dict[str, Any] | None = None,
    ap: dict[str, Any] | None = None,
    ctx: MappingContext | None = None,
    **body: Any,
) -> Message:
    """The JMS message a consumer gets for the given sections (body: body_type=, body=)."""
    data = encode_sections(
        header=header,
        message_annotations=ma,
        properties=Properties(**props) if props is not None else None,
        application_properties=ap,
        **body,
    )
    return decode(data, context=ctx)


def sent(msg: Message, ctx: MappingContext | None = None) -> Sections:
    return decode_sections(encode(msg, context=ctx))


def text(**headers: Any) -> TextMessage:
    m = TextMessage("x")
    for k, v in headers.items():
        setattr(m, "_" + k, v)
    return m


# -- message-id (3.2.1, 3.2.1.1, and Qpid JMS / ActiveMQ wire practice) -------------------------


def test_message_id_string_travels_with_its_id_prefix() -> None:
    s = sent(text(message_id="ID:abc-1"))
    assert s.properties is not None and s.properties.message_id == "ID:abc-1"
    assert type(s.properties.message_id) is str


@pytest.mark.parametrize(
    ("jms_id", "wire"),
    [
        (
            "ID:AMQP_UUID:12345678-1234-5678-1234-567812345678",
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
        ),
        ("ID:AMQP_ULONG:42", ULong(42)),
        ("ID:AMQP_BINARY:0123ABCD", b"\x01\x23\xab\xcd"),
        ("ID:AMQP_BINARY:0123abcd", b"\x01\x23\xab\xcd"),
        ("ID:AMQP_STRING:AMQP_ULONG:42", "AMQP_ULONG:42"),
        ("ID:AMQP_NO_PREFIX:plain", "plain"),
        ("ID:foo", "ID:foo"),
    ],
)
def test_message_id_encodings_send_the_typed_value(jms_id: str, wire: Any) -> None:
    s = sent(text(message_id=jms_id))
    assert s.properties is not None
    assert s.properties.message_id == wire and type(s.properties.message_id) is type(wire)


@pytest.mark.parametrize(
    ("wire", "jms_id"),
    [
        ("ID:abc", "ID:abc"),
        ("abc", "ID:AMQP_NO_PREFIX:abc"),
        ("ID:AMQP_ULONG:5", "ID:AMQP_STRING:ID:AMQP_ULONG:5"),
        ("ID:AMQP_STRING:x", "ID:AMQP_STRING:ID:AMQP_STRING:x"),
        ("ID:AMQP_other", "ID:AMQP_other"),
        (ULong(7), "ID:AMQP_ULONG:7"),
        (uuid.UUID(int=1), "ID:AMQP_UUID:00000000-0000-0000-0000-000000000001"),
        (b"\xab\x01", "ID:AMQP_BINARY:AB01"),
    ],
)
def test_received_message_id_reads_as_jms_message_id(wire: Any, jms_id: str) -> None:
    m = received(props={"message_id": wire})
    assert m.get_jms_message_id() == jms_id


@pytest.mark.parametrize(
    "jms_id",
    [
        "ID:abc",
        "ID:AMQP_ULONG:5",
        "ID:AMQP_BINARY:AB01",
        "ID:AMQP_STRING:ID:AMQP_ULONG:5",
        "ID:AMQP_NO_PREFIX:x",
        f"ID:AMQP_UUID:{uuid.UUID(int=9)}",
    ],
)
def test_message_id_round_trips(jms_id: str) -> None:
    assert decode(encode(text(message_id=jms_id))).get_jms_message_id() == jms_id


@pytest.mark.parametrize(
    "bad", ["ID:AMQP_ULONG:foo", "ID:AMQP_ULONG:-1", "ID:AMQP_ULONG:18446744073709551616",
            "ID:AMQP_UUID:nope", "ID:AMQP_BINARY:ABC", "ID:AMQP_BINARY:XY"]
)  # fmt: skip
def test_malformed_id_encoding_raises(bad: str) -> None:
    with pytest.raises(MessageFormatException, match="JMSMessageID"):
        encode(text(message_id=bad))
    with pytest.raises(MessageFormatException, match="JMSCorrelationID"):
        encode(text(correlation_id=bad))


# -- correlation-id: the table of 3.2.1.1 ------------------------------------------------------


@pytest.mark.parametrize(
    ("jms", "wire", "annotation"),
    [
        ("ID:foo", "ID:foo", None),
        ("ID:AMQP_STRING:AMQP_ULONG:42", "AMQP_ULONG:42", None),
        ("ID:AMQP_STRING:AMQP_STRING:foo", "AMQP_STRING:foo", None),
        ("ID:AMQP_NO_PREFIX:x", "x", None),
        ("app-spec", "app-spec", True),
        ("AMQP_ULONG:42", "AMQP_ULONG:42", True),
        ("AMQP_ULONG:foo", "AMQP_ULONG:foo", True),
        ("ID:AMQP_ULONG:42", ULong(42), None),
        ("ID:AMQP_UUID:00000000-0000-0000-0000-00000000000a", uuid.UUID(int=10), None),
        ("ID:AMQP_BINARY:0123ABCD", b"\x01\x23\xab\xcd", None),
    ],
)
def test_correlation_id_table(jms: str, wire: Any, annotation: bool | None) -> None:
    s = sent(text(correlation_id=jms))
    assert s.properties is not None
    assert s.properties.correlation_id == wire and type(s.properties.correlation_id) is type(wire)
    assert (s.message_annotations or {}).get(APP_CORR) is annotation


def test_correlation_id_as_bytes_is_sent_binary() -> None:
    m = TextMessage("x")
    m.set_jms_correlation_id_as_bytes(b"\x01\x23\xab\xcd")
    s = sent(m)
    assert s.properties is not None and s.properties.correlation_id == b"\x01\x23\xab\xcd"
    r = decode(encode(m))
    assert r.get_jms_correlation_id() == "ID:AMQP_BINARY:0123ABCD"
    assert r.get_jms_correlation_id_as_bytes() == b"\x01\x23\xab\xcd"


@pytest.mark.parametrize(
    ("wire", "ann", "jms"),
    [
        ("app", None, "app"),
        ("app", True, "app"),
        ("ID:x", None, "ID:x"),
        ("ID:x", True, "ID:x"),
        ("ID:AMQP_ULONG:1", True, "ID:AMQP_ULONG:1"),
        ("ID:AMQP_ULONG:1", None, "ID:AMQP_STRING:ID:AMQP_ULONG:1"),
        (ULong(3), None, "ID:AMQP_ULONG:3"),
        (uuid.UUID(int=3), None, f"ID:AMQP_UUID:{uuid.UUID(int=3)}"),
    ],
)
def test_received_correlation_id_honours_app_correlation_annotation(
    wire: Any, ann: bool | None, jms: str
) -> None:
    m = received(props={"correlation_id": wire}, ma={APP_CORR: ann} if ann is not None else None)
    assert m.get_jms_correlation_id() == jms


@pytest.mark.parametrize(
    "jms", ["app", "ID:x", "ID:AMQP_ULONG:9", "AMQP_ULONG:9", "ID:AMQP_STRING:ID:AMQP_UUID:1"]
)
def test_correlation_id_round_trips(jms: str) -> None:
    assert decode(encode(text(correlation_id=jms))).get_jms_correlation_id() == jms


# -- JMSX properties and vendor properties ------------------------------------------------------


def test_user_id_is_jmsx_user_id_in_utf8() -> None:
    m = TextMessage("x")
    m = with_properties(m, {"JMSXUserID": "jürgen"})
    s = sent(m)
    assert s.properties is not None and s.properties.user_id == "jürgen".encode()
    assert "JMSXUserID" not in (s.application_properties or {})
    assert received(props={"user_id": "zoë".encode()}).get_string_property("JMSXUserID") == "zoë"


def test_user_id_that_is_not_utf8_raises() -> None:
    with pytest.raises(MessageFormatException, match="user-id"):
        received(props={"user_id": b"\xff\xfe"})


def test_subject_is_jms_type() -> None:
    s = sent(text(type="order"))
    assert s.properties is not None and s.properties.subject == "order"
    assert received(props={"subject": "invoice"}).get_jms_type() == "invoice"


def test_legacy_jms_type_annotation_is_read() -> None:
    m = received(props={"subject": "subj"}, ma={Symbol("x-opt-jms-type"): "legacy"})
    assert m.get_jms_type() == "legacy"
    assert m.get_string_property("JMS_AMQP_SUBJECT") == "subj"
    assert Symbol("x-opt-jms-type") not in (sent(m).message_annotations or {})


@pytest.mark.parametrize(
    ("jms", "wire"), [(0, 0), (1, 1), (2**31 - 1, 2**31 - 1), (-1, 2**32 - 1), (-(2**31), 2**31)]
)
def test_group_sequence_wraps_between_int_and_uint(jms: int, wire: int) -> None:
    m = TextMessage("x")
    m = with_properties(m, {"JMSXGroupID": "g"})
    m = with_properties(m, {"JMSXGroupSeq": Int(jms)})
    s = sent(m)
    assert s.properties is not None
    assert s.properties.group_id == "g" and s.properties.group_sequence == UInt(wire)
    assert not {"JMSXGroupID", "JMSXGroupSeq"} & set(s.application_properties or {})
    r = received(props={"group_id": "g", "group_sequence": UInt(wire)})
    assert r.get_int_property("JMSXGroupSeq") == jms
    assert r.get_string_property("JMSXGroupID") == "g"


@pytest.mark.parametrize(
    ("prop", "field", "value"),
    [
        ("JMS_AMQP_CONTENT_TYPE", "content_type", "text/csv"),
        ("JMS_AMQP_CONTENT_ENCODING", "content_encoding", "gzip"),
        ("JMS_AMQP_REPLY_TO_GROUP_ID", "reply_to_group_id", "rg"),
    ],
)
def test_vendor_properties_map_to_properties_fields(prop: str, field: str, value: str) -> None:
    m = Message()
    m = with_properties(m, {prop: value})
    s = sent(m)
    assert s.properties is not None and getattr(s.properties, field) == value
    assert prop not in (s.application_properties or {})
    wire = Symbol(value) if field.startswith("content") else value
    assert received(props={field: wire}).get_string_property(prop) == value


def test_first_acquirer_is_a_vendor_property() -> None:
    r = received(header=Header(first_acquirer=True))
    assert r.get_boolean_property("JMS_AMQP_FIRST_ACQUIRER") is True
    assert not received(header=Header()).property_exists("JMS_AMQP_FIRST_ACQUIRER")


def test_application_properties_keep_their_amqp_types() -> None:
    m = Message()
    values = {"b": Byte(-1), "s": Short(2), "i": Int(3), "l": 4, "f": Float(1.5), "d": 2.5, "t": True,
              "str": "v", "n": None}  # fmt: skip
    m = with_properties(m, values)
    s = sent(m)
    assert s.application_properties == values
    assert {k: type(v) for k, v in s.application_properties.items()} == {
        k: type(v) for k, v in values.items()
    }
    r = received(ap={**values, "u": UInt(7), "ub": UByte(1)})
    for k, v in values.items():
        assert r.get_object_property(k) == v and type(r.get_object_property(k)) is type(v)
    assert type(r.get_object_property("u")) is UInt and r.get_long_property("u") == 7


# -- header: durable, priority, delivery-count --------------------------------------------------


@pytest.mark.parametrize(("mode", "durable"), [(2, True), (1, False)])
def test_delivery_mode_is_durable(mode: int, durable: bool) -> None:
    s = sent(text(delivery_mode=mode))
    assert (s.header or Header()).durable is durable
    assert received(header=Header(durable=durable)).get_jms_delivery_mode() == mode


def test_no_header_means_non_persistent_priority_4_first_delivery() -> None:
    m = received(props={"to": "q"})
    assert m.get_jms_delivery_mode() == 1
    assert m.get_jms_priority() == 4
    assert m.get_jms_redelivered() is False
    assert m.get_int_property("JMSXDeliveryCount") == 1


@pytest.mark.parametrize("priority", [0, 3, 5, 9])
def test_priority_is_sent_unless_default(priority: int) -> None:
    s = sent(text(priority=priority))
    assert s.header is not None and s.header.priority == priority and type(s.header.priority) is UByte


def test_default_priority_is_omitted() -> None:
    data = encode(text(priority=4, delivery_mode=1))
    s = decode_sections(data)
    assert s.header is None or s.header.priority == 4
    assert b"\x50\x04" not in s.raw(0x70)


@pytest.mark.parametrize(("wire", "jms"), [(0, 0), (9, 9), (10, 9), (255, 9)])
def test_priority_above_9_is_clamped_on_receive(wire: int, jms: int) -> None:
    assert received(header=Header(priority=UByte(wire))).get_jms_priority() == jms


@pytest.mark.parametrize(("count", "jmsx", "redelivered"), [(0, 1, False), (1, 2, True), (41, 42, True)])
def test_delivery_count_gives_jmsx_delivery_count_and_redelivered(
    count: int, jmsx: int, redelivered: bool
) -> None:
    m = received(header=Header(delivery_count=UInt(count)))
    assert m.get_int_property("JMSXDeliveryCount") == jmsx
    assert m.get_jms_redelivered() is redelivered


def test_jmsx_delivery_count_is_never_sent() -> None:
    m = decode(encode(text()))
    m.clear_properties()
    m = with_properties(m, {"JMSXDeliveryCount": Int(5)})
    assert "JMSXDeliveryCount" not in (sent(m).application_properties or {})


# -- ttl and expiration (3.2.1, 3.3.1, 4, 6.1) ---------------------------------------------------


@pytest.mark.parametrize(("ttl", "wire"), [(0, None), (1000, 1000), (2**32 - 1, 2**32 - 1), (2**32, None)])
def test_header_ttl_comes_from_the_producer_time_to_live(ttl: int, wire: int | None) -> None:
    s = sent(text(), MappingContext(time_to_live=ttl))
    assert (s.header or Header()).ttl == wire


@pytest.mark.parametrize(("prop", "wire"), [(0, None), (500, 500), (2**32 - 1, 2**32 - 1)])
def test_jms_amqp_ttl_overrides_time_to_live_and_is_not_an_app_property(prop: int, wire: int | None) -> None:
    m = text()
    m = with_properties(m, {"JMS_AMQP_TTL": prop})
    s = sent(m, MappingContext(time_to_live=9999))
    assert (s.header or Header()).ttl == wire
    assert "JMS_AMQP_TTL" not in (s.application_properties or {})


@pytest.mark.parametrize("bad", [-1, 2**32, "5", 1.5])
def test_jms_amqp_ttl_out_of_range_raises(bad: Any) -> None:
    m = text()
    m = with_properties(m, {"JMS_AMQP_TTL": bad})
    with pytest.raises(MessageFormatException, match="JMS_AMQP_TTL"):
        encode(m)


def test_expiration_is_absolute_expiry_time_and_omitted_when_zero() -> None:
    s = sent(text(expiration=123456))
    assert s.properties is not None and s.properties.absolute_expiry_time == Timestamp(123456)
    s = sent(text(expiration=0))
    assert (s.properties or Properties()).absolute_expiry_time is None


def test_received_expiration_prefers_absolute_expiry_time_over_ttl() -> None:
    ctx = MappingContext(now_ms=1_000_000)
    m = received(header=Header(ttl=UInt(500)), props={"absolute_expiry_time": Timestamp(42)}, ctx=ctx)
    assert m.get_jms_expiration() == 42
    m = received(header=Header(ttl=UInt(500)), props={"to": "q"}, ctx=ctx)
    assert m.get_jms_expiration() == 1_000_500
    assert received(props={"to": "q"}, ctx=ctx).get_jms_expiration() == 0


def test_timestamp_is_creation_time() -> None:
    s = sent(text(timestamp=1700000000000))
    assert s.properties is not None and s.properties.creation_time == Timestamp(1700000000000)
    assert received(props={"creation_time": Timestamp(77)}).get_jms_timestamp() == 77
    assert received(props={"to": "q"}).get_jms_timestamp() == 0


def test_delivery_time_annotation_only_with_a_delivery_delay() -> None:
    key = Symbol("x-opt-delivery-time")
    s = sent(text(timestamp=1000, delivery_time=1000))
    assert key not in (s.message_annotations or {})
    s = sent(text(timestamp=1000, delivery_time=6000))
    # a long as Qpid JMS sends it (ActiveMQ reads a timestamp as no delay at all)
    assert (s.message_annotations or {})[key] == 6000
    assert type((s.message_annotations or {})[key]) is int


def test_delivery_time_is_read_as_long_or_timestamp() -> None:
    key = Symbol("x-opt-delivery-time")
    created = {"creation_time": Timestamp(5)}
    assert received(props=created, ma={key: 99}).get_jms_delivery_time() == 99
    assert received(props=created, ma={key: Timestamp(98)}).get_jms_delivery_time() == 98


def test_delivery_time_is_synthesized_from_the_timestamp() -> None:
    key = Symbol("x-opt-delivery-time")
    assert received(props={"creation_time": Timestamp(5)}).get_jms_delivery_time() == 5
    m = received(props={"creation_time": Timestamp(5)}, ma={key: Timestamp(99)})
    assert m.get_jms_delivery_time() == 99


def test_received_message_is_read_only_with_the_consumer_view() -> None:
    from amqp_jms.exceptions import MessageNotWriteableException

    m = received(ap={"a": 1}, body_type=0x77, body="hi")
    assert isinstance(m, TextMessage) and m.get_text() == "hi"
    with pytest.raises(MessageNotWriteableException):
        m.set_int_property("b", 1)
    with pytest.raises(MessageNotWriteableException):
        m.set_text("no")


def test_missing_to_is_the_consumer_destination() -> None:
    ctx = MappingContext(consumer_destination=Queue("mine"))
    assert received(props={"subject": "s"}, ctx=ctx).get_jms_destination() == Queue("mine")
    assert received(ctx=ctx).get_jms_destination() == Queue("mine")


# -- a producer's plain messages (the shape cache, ``outbound._SHAPES``) -----------------------

_PLAIN_BODIES = st.one_of(
    st.builds(lambda b: BytesMessage(b), st.binary(max_size=300)),
    st.builds(lambda t: TextMessage(t), st.text(max_size=300)),
    st.builds(lambda v: ObjectMessage(v),
              st.sampled_from([None, 7, "x", JavaSerializedObject(b"\xac\xed\x00\x05")])),
    st.builds(lambda: Message()),
)


def _plain(m: Message, dest: Queue, message_id: str, timestamp: int, mode: int, priority: int) -> Message:
    stamp_send(m, dest, mode, priority, timestamp, 0, message_id, 0, None)
    return m


@settings(max_examples=150, deadline=None)
@given(first=_PLAIN_BODIES, then=_PLAIN_BODIES, ids=st.lists(st.text(max_size=80), min_size=2, max_size=2),
       stamps=st.lists(st.integers(1, 2**62), min_size=2, max_size=2), mode=st.sampled_from([1, 2]),
       priority=st.integers(0, 9), ttl=st.sampled_from([0, 1000, 2**32]))
@example(first=ObjectMessage(7), then=ObjectMessage(JavaSerializedObject(b"\xac\xed")), ids=["a", "b"],
         stamps=[1, 2], mode=2, priority=4, ttl=0)
def test_a_producers_plain_messages_encode_as_the_full_path_encodes_them(
    first: Message, then: Message, ids: list[str], stamps: list[int], mode: int, priority: int, ttl: int
) -> None:
    """The second plain message of a producer is built from the first one's fixed bytes: it
    must be byte for byte what the full path makes of it, whatever its id, time or body (and an
    object body's content type, which the body decides, never comes from the other message)."""
    dest, ctx = Queue("orders"), MappingContext(time_to_live=ttl)
    encode(_plain(first, dest, "ID:" + ids[0], stamps[0], mode, priority), context=ctx)
    second = _plain(then, dest, "ID:" + ids[1], stamps[1], mode, priority)
    cached = encode(second, context=ctx)
    outbound._SHAPES.clear()
    assert cached == encode(second, context=ctx)
    got = decode(cached)
    assert (got.get_jms_message_id(), got.get_jms_timestamp(), got.get_jms_priority()) == (
        "ID:" + ids[1], stamps[1], priority)


needs_c_assembly = pytest.mark.skipif(outbound._encode_plain is None,
                                      reason="the C accelerator _csections was not built")
_C_BODIES = st.one_of(
    st.builds(lambda b: BytesMessage(b), st.binary(max_size=700)),
    st.builds(lambda t: TextMessage(t), st.text(max_size=400)),
    st.builds(lambda: TextMessage()),
)


@needs_c_assembly
@settings(max_examples=300, deadline=None)
@given(m=_C_BODIES, message_id=st.text(max_size=300), stamp=st.integers(-(2**63), 2**63 - 1).filter(bool),
       mode=st.sampled_from([1, 2]), priority=st.integers(0, 9))
def test_the_c_assembly_of_a_plain_message_is_the_python_one(
    m: Message, message_id: str, stamp: int, mode: int, priority: int,
) -> None:
    """A plain text or bytes message whose shape is known is assembled in C
    (``sections.encode_plain``): byte for byte what the Python path assembles, for ids and
    bodies on both sides of the 8-bit sizes, any timestamp."""
    dest, ctx = Queue("orders"), MappingContext()
    encode(_plain(type(m)(), dest, "ID:first", 1, mode, priority), context=ctx)  # the shape
    _plain(m, dest, "ID:" + message_id, stamp, mode, priority)
    fast = encode(m, context=ctx)
    assert outbound._encode_plain is not None
    saved, outbound._encode_plain = outbound._encode_plain, None
    try:
        assert fast == encode(m, context=ctx)
    finally:
        outbound._encode_plain = saved


@needs_c_assembly
def test_what_the_c_assembly_cannot_carry_is_refused_by_the_python_path_by_name() -> None:
    dest, ctx = Queue("orders"), MappingContext()
    encode(_plain(TextMessage("a"), dest, "ID:first", 1, 2, 4), context=ctx)
    with pytest.raises(MessageFormatException, match="not encodable as UTF-8"):
        encode(_plain(TextMessage("bad \ud800"), dest, "ID:second", 2, 2, 4), context=ctx)
    assert outbound._encode_plain is not None
    assert outbound._encode_plain(b"", "ID:x", b"", 1, 2, {}) is None  # a map: not its kind
    assert outbound._encode_plain(b"", "ID:x", b"", 2**70, 5, "t") is None  # past 64 bits
    assert outbound._encode_plain(b"", "ID:x", b"", 1, 3, "not bytes") is None
