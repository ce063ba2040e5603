"""The fast paths of the MQ mapping give exactly what the general code gives: typed values read
(``fast_value`` vs ``decode_value``) and written (``fast_parts`` vs ``element``), MQMD and RFH2
caches, and whole messages with escaping, entities, CDATA, quotes, attributes, nil, non-ASCII."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.destination import Queue
from amqp_jms.message import MapMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.mq import MQMD, MQFormatError, from_mq_bytes, to_mq
from amqp_jms.mq._folders import SLOW, decode_child, fast_value, parse_element
from amqp_jms.mq.xmlfolder import decode_value, element, fast_element, fast_parts
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Char, Float, Int, Short

DTS = [None, "string", "i1", "i2", "i4", "i8", "int", "r4", "r8", "boolean", "bin.hex", "char"]
TEXTS = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"[+-]?[0-9]{1,22}", fullmatch=True),
    st.from_regex(r"-?[0-9]{1,5}(\.[0-9]{1,5})?(e[+-][0-9]{1,3})?", fullmatch=True),
    st.sampled_from(
        ["1", "0", "true", " 1", "1 ", "NaN", "Infinity", "1_0", "0x1", "²", "٣", "-", "ab", "AB"]
    ),
)


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b) and type(a) is type(b)
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) and type(a) is type(b)
    return a == b and type(a) is type(b)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(DTS), TEXTS, st.booleans())
def test_fast_value_reads_what_decode_value_reads(dt: str | None, text: str, nil: bool) -> None:
    el = ET.Element("v", {"dt": dt} if dt else {})
    if nil:
        el.set("{http://www.w3.org/2001/XMLSchema-instance}nil", "true")
    el.text = text or None
    try:
        expected = decode_value(dt, text, nil, "v")
    except MQFormatError:
        assert fast_value(el) is SLOW  # only the general path may refuse, naming the element
        with pytest.raises(MQFormatError, match="<usr><v>"):
            decode_child(el, "<usr><v>")
        return
    got = fast_value(el)
    assert got is SLOW or same(got, expected)
    assert same(decode_child(el, "v"), expected)


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-128, 127).map(Byte),
    st.integers(-(2**15), 2**15 - 1).map(Short),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.floats(allow_nan=True),
    st.floats(width=32, allow_nan=False).map(Float),
    st.binary(max_size=8),
    st.text(max_size=10),
)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_fast_parts_write_what_element_writes(value: object) -> None:
    try:
        expected = element("v", value, "v")
    except MQFormatError:
        assert fast_parts(value) is None
        return
    parts = fast_parts(value)
    assert parts is None or f"<v{parts}</v>" == expected
    assert fast_element("v", value, "v") == expected


@pytest.mark.parametrize("value", [Char("x"), "a<b", "a&b", "a>b", "cr\r", "\x01", 2**63, math.inf])
def test_values_needing_work_leave_the_fast_path(value: object) -> None:
    assert fast_parts(value) is None


def test_escaping_entities_cdata_quotes_and_non_ascii_through_a_whole_message() -> None:
    m = TextMessage("body")
    m = with_properties(m, {"s": "<a> & 'b' \"c\" é€😀\r\n\t", "n": None, "h": b"\x00\xff", "c": Char("&")})
    m.set_jms_correlation_id("c<1>&é")
    m.set_jms_type("T&<>")
    m.set_jms_destination(Queue("Q?x&y%é"))
    back = from_mq_bytes(to_mq(m).to_bytes())
    assert back.get_string_property("s") == "<a> & 'b' \"c\" é€😀\r\n\t"
    assert back.property_exists("n") and back.get_object_property("n") is None
    assert back.get_object_property("h") == b"\x00\xff"
    assert back.get_object_property("c") == "&"
    assert back.get_jms_correlation_id() == "c<1>&é"
    assert back.get_jms_type() == "T&<>"
    assert back.get_jms_destination() == Queue("Q?x&y%é")


def test_map_and_stream_bodies_with_every_type_and_escaping() -> None:
    entries = {"s": "a<&>", "i": Int(-1), "b": Byte(2), "h": Short(3), "l": 2**40, "f": Float(1.5),
               "d": -0.0, "t": False, "c": Char("<"), "x": b"\x01\xab", "n": None, "name with space": "é",
               "a&b": "q"}  # fmt: skip
    back = from_mq_bytes(to_mq(MapMessage(entries)).to_bytes())
    got = view(back).body  # type: ignore[attr-defined]
    assert got.keys() == entries.keys()
    for k, v in entries.items():
        assert same(got[k], v), k
    items = ["a<&>", Int(-1), Byte(2), Short(3), 2**40, Float(1.5), -0.0, True, Char("&"), b"\x01", None, "é"]
    back = from_mq_bytes(to_mq(StreamMessage(items)).to_bytes())
    got_items = view(back).body  # type: ignore[attr-defined]
    assert len(got_items) == len(items) and all(same(a, b) for a, b in zip(got_items, items))


def test_hand_written_bodies_with_both_quote_styles_entities_cdata_and_nil() -> None:
    from amqp_jms.mq.bodies import decode_map, decode_stream

    got = decode_map(
        "<map><elt name='a' dt='i4'>1</elt><elt name=\"b\" dt=\"r8\">2.5</elt>"
        "<elt name='c'>&lt;&amp;&#233;</elt><elt name='d'><![CDATA[<x>]]></elt>"
        "<elt name='e' dt='i4' xsi:nil='true'></elt><elt name='f' dt='boolean'>true</elt>"
        "<elt name='g' dt='i2'> 7 </elt><elt name='h' dt='r4'>1.1f</elt></map>"
    )
    assert got == {"a": 1, "b": 2.5, "c": "<&é", "d": "<x>", "e": None, "f": True, "g": 7, "h": Float(1.1)}
    assert type(got["g"]) is Short and type(got["h"]) is Float
    assert decode_stream("<stream><elt dt='char'>é</elt><elt dt='bin.hex'>0aFF</elt></stream>") == [
        "é",
        b"\x0a\xff",
    ]
    with pytest.raises(MQFormatError, match="map entry 'a'"):
        decode_map("<map><elt name='a' dt='i1'>300</elt></map>")
    with pytest.raises(MQFormatError, match="stream item 1"):
        decode_stream("<stream><elt>x</elt><elt dt='char'>xy</elt></stream>")


def test_parse_element_reads_attributes_in_both_quote_styles() -> None:
    el = parse_element("<f a='1' b=\"2\" c='&quot;&apos;'><x/></f>")
    assert el.attrib == {"a": "1", "b": "2", "c": "\"'"} and [c.tag for c in el] == ["x"]


def test_mqmd_character_field_caches_do_not_leak_between_values() -> None:
    for name in ("Q1", "Q22", "Q1", "é"):
        m = TextMessage("x")
        m.set_jms_reply_to(Queue(name))
        raw = to_mq(m).to_bytes()
        md, _ = MQMD.unpack(raw)
        assert md.reply_to_q == name
        assert from_mq_bytes(raw).get_jms_reply_to() == Queue(name)
    md = MQMD(reply_to_q_mgr=None)  # type: ignore[arg-type]
    with pytest.raises(MQFormatError, match="ReplyToQMgr"):
        md.pack()
    with pytest.raises(MQFormatError, match="ReplyToQ"):
        MQMD(reply_to_q="x" * 49).pack()
