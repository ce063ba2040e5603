"""The broker reads four routing fields of every message a producer sends
(``broker/storage/message_bytes.inspect``): durable, priority, expiry and delivery time. It reads
them through the shared codec (in C where built), and a message the codec refuses is still routed
by a plain section walk, as before: a producer's odd field type costs it nothing at the broker."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from amqp_jms.broker.storage import message_bytes
from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.mapping import encode
from amqp_jms.mapping.codec import AMQP_VALUE, Header, Properties, encode_sections, encode_value
from amqp_jms.message import TextMessage
from amqp_jms.types import Described, Symbol, Timestamp, UByte, UInt, ULong

_NOW = 1_800_000_000_000


def _message(durable: bool, priority: int | None, ttl: int | None, count: int, delay: int | None,
             delivery_time: int | None, expiry: int | None, color: str) -> bytes:
    ann: dict[object, object] = {Symbol("x-opt-jms-msg-type"): 5}
    if delay is not None:
        ann[Symbol("x-opt-delivery-delay")] = delay
    if delivery_time is not None:
        ann[Symbol("x-opt-delivery-time")] = delivery_time
    return encode_sections(
        header=Header(durable, 4 if priority is None else priority, ttl, False, count),
        message_annotations=ann,
        properties=Properties(message_id="ID:1", to="q",
                              absolute_expiry_time=None if expiry is None else Timestamp(expiry)),
        application_properties={"color": color},
        body_type=AMQP_VALUE, body="hello",
    )


@given(durable=st.booleans(), priority=st.none() | st.integers(0, 255),
       ttl=st.none() | st.integers(0, 2**32 - 1), count=st.integers(0, 2**32 - 1),
       delay=st.none() | st.integers(-(2**63), 2**63 - 1),
       delivery_time=st.none() | st.integers(0, 2**62), expiry=st.none() | st.integers(0, 2**62),
       color=st.text(max_size=20))
def test_the_codec_and_the_walk_read_the_same_routing_fields(
        durable: bool, priority: int | None, ttl: int | None, count: int, delay: int | None,
        delivery_time: int | None, expiry: int | None, color: str) -> None:
    data = _message(durable, priority, ttl, count, delay, delivery_time, expiry, color)
    info = message_bytes.inspect(data)
    assert info == message_bytes._walk(data)
    assert (info.durable, info.priority, info.ttl, info.delivery_count) == (
        durable, 4 if priority is None else priority, ttl or 0, count)
    assert info.delivery_delay == (delay or 0) and info.delivery_time == (delivery_time or 0)
    assert info.absolute_expiry == (expiry or 0) / 1000.0


def test_a_jms_message_routes_by_its_headers() -> None:
    m = TextMessage("hi")
    m.set_jms_priority(8)
    m.set_jms_expiration(_NOW + 60_000)
    data = encode(m)
    bm = BrokerMessage.parse(data, now=_NOW / 1000.0)
    assert (bm.priority, bm.durable) == (8, True)
    assert bm.expiry == message_bytes._walk(data).absolute_expiry


def _with_priority_as(value: object) -> bytes:
    """A message whose header carries ``priority`` as ``value``'s AMQP type (the spec's is ubyte)."""
    header = encode_value(Described(ULong(0x70), [True, value, UInt(5000)]))
    return header + encode_sections(body_type=AMQP_VALUE, body="x")


def test_a_field_of_a_non_standard_type_still_routes() -> None:
    # an int (AMQP long) priority is not the header's ubyte: the codec refuses the section,
    # and the walk still reads the message as it always did
    data = _with_priority_as(7)
    info = message_bytes.inspect(data)
    assert (info.durable, info.priority, info.ttl) == (True, 7, 5000)
    bm = BrokerMessage.parse(data, now=time.time())
    assert bm.priority == 7 and bm.durable and bm.expiry > time.time()


def test_a_standard_header_reads_the_same_both_ways() -> None:
    data = _with_priority_as(UByte(2))
    assert message_bytes.inspect(data) == message_bytes._walk(data)


def test_a_malformed_routing_section_is_refused_by_name() -> None:
    data = _message(True, 4, None, 0, None, None, None, "red")
    cut = data[: data.index(b"ID:1") + 2]  # the properties section cut short
    try:
        message_bytes.inspect(cut)
    except ValueError as exc:
        assert "malformed AMQP message" in str(exc)
    else:
        raise AssertionError("a truncated properties section was read as routable")


def test_a_header_named_by_its_symbolic_descriptor_routes() -> None:
    header = encode_value(Described(Symbol("amqp:header:list"), [True, UByte(9)]))
    data = header + encode_sections(body_type=AMQP_VALUE, body="x")
    info = message_bytes.inspect(data)
    assert (info.durable, info.priority) == (True, 9)


def test_routing_does_not_read_the_application_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    """However large a producer makes its application properties, routing decodes only the
    sections before them (a selector reads them lazily, ``selector_view``)."""
    data = encode_sections(header=Header(True, 6), properties=Properties(message_id="ID:1"),
                           application_properties={f"k{i}": i for i in range(5000)},
                           body_type=AMQP_VALUE, body="x")
    read: list[int] = []
    decode = message_bytes.decode_sections

    def spy(chunk: bytes, *, body: bool = True) -> object:
        read.append(len(chunk))
        return decode(chunk, body=body)

    monkeypatch.setattr(message_bytes, "decode_sections", spy)
    info = message_bytes.inspect(data)
    assert (info.durable, info.priority) == (True, 6)
    assert read and max(read) < 100, read
