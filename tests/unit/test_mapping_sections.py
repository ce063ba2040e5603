"""Section-level access (what the broker and Spark use) and malformed-message handling."""

from __future__ import annotations

from typing import Any

import proton
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.destination import Queue
from amqp_jms.exceptions import MessageFormatException
from amqp_jms.mapping import decode, encode, message_from_sections
from amqp_jms.mapping.codec import (
    AMQP_VALUE,
    APPLICATION_PROPERTIES,
    DATA,
    FOOTER,
    HEADER,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    Header,
    Properties,
    decode_sections,
    encode_sections,
)
from amqp_jms.message import MapMessage, TextMessage
from amqp_jms.message._data import restore, snapshot, view
from amqp_jms.types import Byte, Int, Symbol, Timestamp, UByte, UInt, ULong


def full_message() -> bytes:
    return encode_sections(
        header=Header(durable=True, priority=UByte(6), ttl=UInt(1000), delivery_count=UInt(2)),
        delivery_annotations={Symbol("x-opt-da"): 1},
        message_annotations={Symbol("x-opt-jms-msg-type"): Byte(5), Symbol("x-opt-jms-dest"): Byte(0)},
        properties=Properties(message_id="ID:1", to="orders", subject="s", creation_time=Timestamp(5)),
        application_properties={"region": "EU", "n": Int(3)},
        body_type=AMQP_VALUE,
        body="payload",
        footer={Symbol("x-opt-f"): "sig"},
    )


def test_decode_sections_reads_every_section_with_its_span() -> None:
    data = full_message()
    s = decode_sections(data)
    assert s.header == Header(True, UByte(6), UInt(1000), False, UInt(2))
    assert s.delivery_annotations == {Symbol("x-opt-da"): 1}
    assert s.message_annotations == {Symbol("x-opt-jms-msg-type"): 5, Symbol("x-opt-jms-dest"): 0}
    assert s.properties is not None and s.properties.to == "orders" and s.properties.message_id == "ID:1"
    assert s.application_properties == {"region": "EU", "n": 3}
    assert s.body_type == AMQP_VALUE and s.body == "payload"
    assert s.footer == {Symbol("x-opt-f"): "sig"}
    assert b"".join(s.raw(code) for code in sorted(s.spans)) == data
    assert s.bare_message == s.raw(PROPERTIES) + s.raw(APPLICATION_PROPERTIES) + s.raw(AMQP_VALUE)


def test_body_can_be_left_undecoded_for_routing() -> None:
    data = encode(MapMessage({"k": "v"}))
    s = decode_sections(data, body=False)
    assert s.body is None and not s.body_decoded and s.body_type == AMQP_VALUE
    s.decode_body()
    assert s.body == {"k": "v"}


def test_undecoded_body_is_still_bounds_checked() -> None:
    data = encode(TextMessage("hello"))
    with pytest.raises(MessageFormatException):
        decode_sections(data[:-2], body=False)


def test_with_delivery_count_reencodes_only_the_header() -> None:
    data = full_message()
    s = decode_sections(data)
    out = s.with_delivery_count(7)
    assert out.endswith(data[s.spans[HEADER][1] :])
    pm = proton.Message()
    pm.decode(out)
    assert pm.delivery_count == 7 and pm.durable and pm.priority == 6 and pm.ttl == 1.0
    assert pm.body == "payload"


def test_with_delivery_count_adds_a_header_when_there_is_none() -> None:
    data = encode_sections(properties=Properties(to="q"), body_type=AMQP_VALUE, body=None)
    out = decode_sections(data).with_delivery_count(1)
    assert out.endswith(data)
    s2 = decode_sections(out)
    assert s2.header == Header(delivery_count=UInt(1))
    m = decode(out)
    assert m.get_jms_redelivered() and m.get_int_property("JMSXDeliveryCount") == 2


def test_message_from_sections_is_decode_without_parsing_twice() -> None:
    data = full_message()
    m = message_from_sections(decode_sections(data, body=False))
    assert isinstance(m, TextMessage) and m.get_text() == "payload"
    assert m.get_jms_destination() == Queue("orders")
    assert view(m).extra is not None and view(m).extra["delivery_annotations"] == {Symbol("x-opt-da"): 1}
    assert view(m).extra["footer"] == {Symbol("x-opt-f"): "sig"}


def test_unknown_message_annotations_are_kept_and_forwarded() -> None:
    data = encode_sections(
        message_annotations={Symbol("x-opt-broker-seq"): ULong(9), Symbol("x-opt-jms-msg-type"): Byte(5)},
        body_type=AMQP_VALUE,
        body="x",
    )
    m = decode(data)
    forwarded = decode_sections(encode(restore(snapshot(m))))
    assert forwarded.message_annotations is not None
    assert forwarded.message_annotations[Symbol("x-opt-broker-seq")] == ULong(9)


def test_symbolic_section_descriptors_are_read() -> None:
    header = b"\x00\xa3\x10amqp:header:list\xc0\x02\x01\x41"
    value = b"\x00\x80\x00\x00\x00\x00\x00\x00\x00\x77\xa1\x02hi"
    s = decode_sections(header + value)
    assert s.header is not None and s.header.durable and s.body == "hi"


# -- malformed messages -------------------------------------------------------------------------

_H = encode_sections(header=Header(durable=True))
_P = encode_sections(properties=Properties(to="q"))
_V = encode_sections(body_type=AMQP_VALUE, body="x")
_D = encode_sections(body_type=DATA, body=[b"x"])
_F = encode_sections(footer={Symbol("k"): 1})


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (_P + _H, "header section after properties"),
        (_H + _H, "duplicate header"),
        (_V + _V, "duplicate amqp-value"),
        (_D + _V, "mixed"),
        (_F + _V, "after footer"),
        (b"\x00\x53\x99\x45", "unknown section descriptor"),
        (b"\x00\xa3\x03abc\x45", "unknown section descriptor"),
        (b"\x45", "expected a described section"),
        (b"\x00\x53\x70\xa1\x01x", "header must be a list"),
        (b"\x00\x53\x70\xc0\x03\x01\xa1\x00", "durable must be bool"),
        (b"\x00\x53\x70\xc0\x04\x02\x40\x52\x05", "priority must be UByte"),
        (b"\x00\x53\x73\xc0\x03\x01\x55\x01", "message-id has the wrong type"),
        (b"\x00\x53\x73\xc0\x05\x03\x40\x40\x55\x01", "to has the wrong type"),
        (b"\x00\x53\x73\xc0\x0a\x07" + b"\x40" * 6 + b"\xa1\x01x", "content-type has the wrong type"),
        (encode_sections(application_properties={"a": [1]}), "not simple"),
        (b"\x00\x53\x74\xc1\x04\x02\x55\x01\x40", "not a string"),
        (b"\x00\x53\x72\xc1\x04\x02\xa1\x00\x40", "not a symbol or ulong"),
        (b"\x00\x53\x75\xa1\x01x", "data section holds a str"),
        (b"\x00\x53\x76\xa1\x01x", "amqp-sequence section holds a str"),
        (b"\x00\x53\x70\xc0\x07\x06\x40\x40\x40\x40\x40\x40", "at most 5"),
    ],
)
def test_malformed_sections_raise_message_format_exception(data: bytes, what: str) -> None:
    with pytest.raises(MessageFormatException, match=what):
        decode_sections(data)
    with pytest.raises(MessageFormatException):
        decode(data)


def test_every_truncation_is_refused_or_a_complete_prefix() -> None:
    data = full_message()
    boundaries = {e for _, e in decode_sections(data).spans.values()} | {0}
    for cut in range(len(data)):
        if cut in boundaries:
            decode_sections(data[:cut])
            continue
        with pytest.raises(MessageFormatException):
            decode(data[:cut])


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=80))
def test_garbage_raises_only_message_format_exception(data: bytes) -> None:
    try:
        decode(data)
    except MessageFormatException:
        pass


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_corrupted_messages_raise_only_message_format_exception(d: st.DataObject) -> None:
    data = bytearray(full_message())
    for _ in range(d.draw(st.integers(1, 4))):
        data[d.draw(st.integers(0, len(data) - 1))] = d.draw(st.integers(0, 255))
    try:
        decode(bytes(data))
    except MessageFormatException:
        pass


def test_non_bytes_input_is_accepted_as_a_buffer() -> None:
    data = full_message()
    m: Any = decode(memoryview(data))
    assert isinstance(m, TextMessage)
    assert isinstance(decode(bytearray(data)), TextMessage)


def test_footer_and_section_constants() -> None:
    assert (HEADER, MESSAGE_ANNOTATIONS, PROPERTIES, FOOTER) == (0x70, 0x72, 0x73, 0x78)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(st.characters(max_codepoint=127), max_size=40),
        st.sampled_from(["text/plain", "application/json", "text/x"]).flatmap(
            lambda t: st.text(st.characters(max_codepoint=127), max_size=12).map(
                lambda c: f"{t}; charset={c}"
            )
        ),
        st.sampled_from(["base64", "rot13", "utf-16", "utf-32", "idna", "punycode", "zlib", "uu"]).map(
            lambda c: f"text/plain;charset={c}"
        ),
    ),
    st.binary(max_size=20),
    st.sampled_from([None, 1, 3, 5]),
)
def test_any_content_type_gives_a_message_or_message_format_exception(
    ct: str, data: bytes, code: int | None
) -> None:
    wire = encode_sections(
        message_annotations={Symbol("x-opt-jms-msg-type"): Byte(code)} if code is not None else None,
        properties=Properties(content_type=Symbol(ct)),
        body_type=DATA,
        body=[data],
    )
    try:
        decode(wire)
    except MessageFormatException:
        pass


@pytest.mark.parametrize("bad", ["queue://x", 5, {"consumer_destination": None}])
def test_a_context_that_is_not_a_mapping_context_is_a_type_error_naming_it(bad: Any) -> None:
    with pytest.raises(TypeError, match="context must be a MappingContext"):
        decode(full_message(), context=bad)
    with pytest.raises(TypeError, match="context must be a MappingContext"):
        encode(TextMessage("x"), context=bad)
