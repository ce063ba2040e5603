"""The incoming fast path (``_fastin``) gives exactly the message the general path gives, or
declines (None) so the general path decides; it never accepts what the general path refuses.
Also ``parse_many`` (several folders in one feed) and ``typed_value``."""

from __future__ import annotations

import math
import struct
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mq_hypothesis import messages

from amqp_jms.destination import Queue, Topic
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.mq import MQMD, MQFormatError, from_mq_bytes, to_mq
from amqp_jms.mq._fastin import fast_from_mq_bytes
from amqp_jms.mq._folders import SLOW, decode_child, parse_element, parse_many, typed_value
from amqp_jms.mq.incoming import _from_mq
from amqp_jms.testing.messages import with_fields, with_properties
from amqp_jms.types import Byte, Char, Float, Int, Short

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_SLOTS = (
    "_message_id", "_timestamp", "_correlation_id", "_reply_to", "_destination", "_delivery_mode",
    "_redelivered", "_type", "_expiration", "_delivery_time", "_priority", "_extra", "_props_ro",
    "_body_ro",
)  # fmt: skip


def norm(v: Any) -> Any:
    """Values with their exact types, NaN comparable."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return ("nan", type(v))
    return (v, type(v))


def state(m: Message) -> dict[str, Any]:
    out = {s: norm(getattr(m, s)) for s in _SLOTS}
    out["class"] = type(m)
    out["props"] = norm(view(m).properties)
    out["prop_order"] = list(view(m).properties)
    for body in ("_text", "_map", "_items", "_object"):
        if hasattr(m, body):
            out[body] = norm(getattr(m, body))
    if isinstance(m, BytesMessage):
        out["bytes"] = view(m).body
    return out


def general(raw: bytes) -> Message:
    md, _order = MQMD.unpack(raw)
    return _from_mq(md, raw, md.length)


def check(raw: bytes) -> Message | None:
    """The fast path agrees with the general one on ``raw``; returns the fast answer."""
    fast = fast_from_mq_bytes(raw)
    try:
        expected = general(raw)
    except MQFormatError:
        assert fast is None, "the fast path accepted what the general path refuses"
        return None
    if fast is not None:
        assert state(fast) == state(expected)
    return fast


def common() -> list[Message]:
    out: list[Message] = []
    b = BytesMessage()
    b = with_fields(b, body=bytes(range(256)))
    for m in (
        Message(),
        TextMessage("hello, world"),
        b,
        MapMessage({"a": Int(1), "b": "two", "c": 3.0, "d": True, "e": Short(5), "f": b"\x01"}),
        StreamMessage(["a", Byte(1), Int(2), 3, Float(4.5), Char("c"), b"\x01", None]),
        ObjectMessage({"id": 7}),
    ):
        m.set_jms_message_id("ID:" + "0123456789abcdef" * 3)
        m.set_jms_timestamp(1_763_740_800_123)
        m.set_jms_expiration(view(m).timestamp + 60_000)
        m.set_jms_correlation_id("order-42")
        m.set_jms_reply_to(Queue("REPLY.Q"))
        m.set_jms_destination(Topic("prices"))
        m.set_jms_type("OrderCreated")
        m.set_jms_priority(7)
        m = with_properties(
            m, {"customer": "acme", "qty": Int(3), "total": 99.5, "express": True, "nil": None})
        out.append(m)
    return out


@pytest.mark.parametrize("encoding", ["native", "big"])
@pytest.mark.parametrize("m", common(), ids=lambda m: type(m).__name__)
def test_common_shapes_take_the_fast_path(m: Message, encoding: str) -> None:
    raw = to_mq(m, encoding=encoding).to_bytes()
    fast = check(raw)
    assert fast is not None
    assert state(from_mq_bytes(raw)) == state(fast)


def test_fast_path_declines_what_it_does_not_handle() -> None:
    m = TextMessage("x")
    m.set_jms_timestamp(0)  # no Tms: PutDate/PutTime decide
    assert fast_from_mq_bytes(to_mq(m).to_bytes()) is None
    m = TextMessage("x")
    m.set_jms_timestamp(5)
    m = with_fields(m, extra={"mq.folders": [b"<other><a>1</a></other>"]})
    raw = to_mq(m).to_bytes()
    assert fast_from_mq_bytes(raw) is None
    assert view(from_mq_bytes(raw)).extra == {"mq.folders": [b"<other><a>1</a></other> "]}
    assert fast_from_mq_bytes(to_mq(m, target_client="mq").to_bytes()) is None  # no RFH2


@SETTINGS
@given(messages(), st.sampled_from(["native", "big"]), st.integers(0, 20), st.integers(0, 2**31 - 1))
def test_any_message_reads_the_same_both_ways(m: Message, encoding: str, backout: int, report: int) -> None:
    mq = to_mq(m, encoding=encoding)
    mq.md.backout_count = backout
    mq.md.report = report & 0x0F00_00FF
    check(mq.to_bytes())


VALID = [to_mq(m, encoding=e).to_bytes() for m in common() for e in ("native", "big")]


@SETTINGS
@given(
    st.sampled_from(VALID),
    st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_corrupted_messages_read_the_same_or_are_declined(raw: bytes, changes: list[tuple[int, int]]) -> None:
    data = bytearray(raw)
    for pos, byte in changes:
        data[pos % len(data)] = byte
    check(bytes(data))


@SETTINGS
@given(st.sampled_from(VALID), st.integers(0, 2000))
def test_truncated_messages_read_the_same_or_are_declined(raw: bytes, cut: int) -> None:
    check(raw[: cut % len(raw)])


def test_edited_folders_read_the_same_or_are_declined() -> None:
    """Folder texts a sender may write differently, fed through a rebuilt RFH2."""
    base = VALID[1]
    (length,) = struct.unpack_from("<i", base, 372)
    body = base[364 + length :]
    for jms in (
        "<jms><Tms>5</Tms><Tms>6</Tms><Pri>3</Pri></jms>",  # the first of a name wins
        "<jms><Tms dt='i8'>5</Tms></jms>",
        "<jms><Tms>+5</Tms></jms>",
        "<jms><Tms>5</Tms><Dlv>3</Dlv></jms>",
        "<jms><Tms>5</Tms><Dst>queue://QM1/A</Dst><Rto>queue://QM2/B</Rto></jms>",
        "<jms><Tms>5</Tms><Gid>g</Gid><Seq>x</Seq></jms>",
        "<jms><Tms>5</Tms><Gid>g</Gid><Seq>4</Seq></jms>",
        "<jms><Tms>5</Tms><Cid xsi:nil='true'/></jms>",
        "<jms><Tms>5</Tms></jms><jms/>",
        "<jms><Tms>5</Tms></_w><_w><x/>",
        "<jms><Tms>5</Tms><!-- c --></jms>",
        "<jms><Tms>5</Tms>&amp;</jms>",
        "<jms ><Tms>5</Tms></jms>",
    ):
        for usr in (
            "<usr><a dt='i4'>1</a><a>2</a><b dt='r4'>1.5</b><c xsi:nil='true'/><d dt='i1'>300</d></usr>",
            "<usr><a dt='i4'>1</a><b dt='r4'>1.5</b><c xsi:nil='true'/><e dt='bin.hex'>0A</e></usr>",
            "<usr><a dt='i4' x='1'>1</a><b dt='boolean'>true</b><c dt='char'>c</c></usr>",
            "<usr><a dt='nope'>1</a></usr>",
            "",
        ):
            folders = [b"<mcd><Msd>jms_map</Msd></mcd>", jms.encode(), usr.encode()]
            rfh = b"".join(struct.pack("<i", len(f)) + f for f in (f + b" " * (-len(f) % 4) for f in folders))
            header = struct.pack("<4siiii8sii", b"RFH ", 2, 36 + len(rfh), 546, 1208, b"        ", 0, 1208)
            check(base[:364] + header + rfh + body)


def test_parse_many_splits_exactly_or_declines() -> None:
    els = parse_many(["<a>1</a>", "<b x='1'><c/></b>", "<map><elt name='k'>v</elt></map>"])
    assert els is not None
    assert [e.tag for e in els] == ["a", "b", "map"]
    assert els[1][0].tag == "c" and els[2][0].text == "v"
    for texts in (
        ["<a>1</a></_w><_w><b/>", "<c/>"],  # closing a wrapper early
        ["<a>", "</a><b/>"],  # one element across two texts
        ["<a/><b/>", "<c/>"],  # two roots in one text
        ["<a/>x", "<c/>"],  # stray text
        ["<a><!-- </a> --></a>", "<c/>"],
        ["<?pi x?><a/>", "<c/>"],
        ["<a>&undefined;</a>", "<c/>"],
        ["<a>", "<c/>"],
    ):
        assert parse_many(texts) is None
        # the parser of a failed feed is not reused: the next folders read correctly
        assert [e.tag for e in parse_many(["<x>1</x>", "<y/>"]) or []] == ["x", "y"]
        assert parse_element("<z>2</z>").text == "2"


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        [None, "string", "i1", "i2", "i4", "i8", "int", "r4", "r8", "boolean", "bin.hex", "char", "x"]
    ),
    st.one_of(
        st.text(max_size=8),
        st.from_regex(r"-?[0-9]{1,21}(\.[0-9]{1,4})?(e[+-][0-9]{1,3})?", fullmatch=True),
        st.sampled_from(
            [
                "1",
                "0",
                "true",
                "٣",
                "-",
                "AB",
                "0a",
                "Infinity",
                "NaN",
                "inf",
                "-nan",
                "1_0",
                " 3",
                "3 ",
                "+5",
                "-0",
                ".5",
                "5.",
                "1e5",
                "1E5",
                "1e400",
                "1.5f",
                "3.4e39",
                "\x0b7",
                "1 0",
                "127",
                "128",
                "-129",
                "32768",
                "2147483648",
                "9223372036854775808",
                "1023",
                "1024",
                "-128",
            ]
        ),
    ),
    st.booleans(),
    st.booleans(),
)
def test_typed_value_reads_what_decode_child_reads(dt: str | None, text: str, nil: bool, other: bool) -> None:
    el = ET.Element("v", {"dt": dt} if dt else {})
    if nil:
        el.set("xsi:nil", "true")
    if other:
        el.set("name", "n")
    el.text = text or None
    v = typed_value(el)
    try:
        expected = decode_child(el, "v")
    except MQFormatError:
        assert v is SLOW
        return
    if v is not SLOW:
        assert norm(v) == norm(expected)
