"""The outgoing fast paths write exactly what the general code writes: ``usr`` folders and
map/stream bodies from a template per shape (names and types, never values), and whole messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mq_hypothesis import messages

from amqp_jms.message import Message
from amqp_jms.mq import MQMD, MQFormatError, to_mq
from amqp_jms.mq import outgoing as outgoing_module
from amqp_jms.mq._bodyshape import map_body, stream_body
from amqp_jms.mq._usrshape import usr_folder
from amqp_jms.mq.bodies import encode_map, encode_stream
from amqp_jms.mq.xmlfolder import element
from amqp_jms.types import UUID, Byte, Char, Float, Int, Long, Short, Timestamp, UByte, UInt, UShort

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.one_of(
    st.sampled_from(
        ["a", "qty", "region", "x_1", "b-2", "JMSX", "JMS_x", "jmsLower", "and", "NOT", "1bad", "a.b"]
    ),
    st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True),
)
values = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["a&b", "<", "x\r", "\x00", "ok", "%s", "%d", "%%"]),
    st.booleans(),
    st.builds(Byte, st.integers(-128, 127)),
    st.builds(Short, st.integers(-(2**15), 2**15 - 1)),
    st.builds(Int, st.integers(-(2**31), 2**31 - 1)),
    st.builds(UByte, st.integers(0, 255)),
    st.builds(UShort, st.integers(0, 2**16 - 1)),
    st.builds(UInt, st.integers(0, 2**32 - 1)),
    st.builds(Long, st.integers(-(2**63), 2**63 - 1)),
    st.builds(Timestamp, st.integers(0, 2**40)),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.builds(Float, st.floats(width=32)),
    st.builds(Char, st.characters(max_codepoint=0xFFFF, blacklist_categories=["Cs"])),
    st.binary(max_size=4),
    st.none(),
    st.just(UUID(bytes=bytes(16))),
)


def general(props: dict[str, Any]) -> str:
    return "<usr>" + "".join(element(n, v, n) for n, v in props.items()) + "</usr>"


@SETTINGS
@given(st.dictionaries(names, values, min_size=1, max_size=6))
def test_usr_template_writes_what_the_general_code_writes(props: dict[str, Any]) -> None:
    for _ in range(2):  # the shape built, then the shape found
        got = usr_folder(props)
        if got is not None:
            assert not any(n.upper().startswith("JMS") for n in props)
            assert got == general(props)


def test_usr_template_takes_the_common_shapes_and_refills_values() -> None:
    a = {"customer": "acme", "qty": Int(3), "total": 99.5, "express": True, "big": 2**40, "b": Byte(-1)}
    b = {"customer": "zeta", "qty": Int(-7), "total": 1e-300, "express": False, "big": -(2**63), "b": Byte(0)}
    assert usr_folder(a) == general(a)
    assert usr_folder(b) == general(b)  # same shape, other values
    assert usr_folder({**b, "customer": "a<b"}) is None  # a value that needs escaping: general code
    assert usr_folder({**b, "total": float("nan")}) is None
    assert usr_folder({**b, "big": 2**63}) is None
    assert usr_folder({"JMSXGroupID": "g"}) is None
    assert usr_folder({"not": "x"}) is None  # a selector keyword: the general code raises


@SETTINGS
@given(messages(), st.sampled_from(["native", "big"]))
def test_to_mq_writes_the_same_with_and_without_templates(m: Message, encoding: str) -> None:
    try:
        fast = to_mq(m, encoding=encoding)
    except MQFormatError as exc:
        fast_error: MQFormatError | None = exc
    else:
        fast_error = None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(outgoing_module, "usr_folder", lambda props: None)
        mp.setattr(outgoing_module, "map_body", lambda entries: None)
        mp.setattr(outgoing_module, "stream_body", lambda items: None)
        try:
            slow = to_mq(m, encoding=encoding)
        except MQFormatError as exc:
            assert fast_error is not None and str(fast_error) == str(exc)
            return
    assert fast_error is None
    assert fast.to_bytes() == slow.to_bytes()


map_keys = st.one_of(
    st.sampled_from(["a", "b.c", "x-1", "_", "%s", "a b", "é", "<", ""]),
    st.from_regex(r"[A-Za-z0-9_.\-]{1,6}", fullmatch=True),
)


@SETTINGS
@given(st.lists(values, max_size=8))
def test_stream_template_writes_what_encode_stream_writes(items: list[Any]) -> None:
    for _ in range(2):  # the shape built, then the shape found
        got = stream_body(items)
        if got is not None:
            assert got == encode_stream(items)


@SETTINGS
@given(st.dictionaries(map_keys, values, max_size=8))
def test_map_template_writes_what_encode_map_writes(entries: dict[str, Any]) -> None:
    for _ in range(2):
        got = map_body(entries)
        if got is not None:
            assert got == encode_map(entries)


def test_body_templates_take_the_common_shapes() -> None:
    items = ["a", Byte(1), Int(2), 3, Float(4.5), Char("c"), b"\x01", None, True, 2.5]
    assert stream_body(items) == encode_stream(items)
    other = ["b", Byte(-1), Int(0), -(2**63), Float(-0.0), Char("d"), b"", None, False, 1e300]
    assert stream_body(other) == encode_stream(other)  # same shape, other values
    assert stream_body([*other[:5], Char("&"), *other[6:]]) is None
    assert stream_body([*other[:4], Float(float("nan")), *other[5:]]) is None
    entries = {"a": Int(1), "b": "two", "c": 3.0, "d": True, "e": Short(5), "f": b"\xff", "g": None}
    assert map_body(entries) == encode_map(entries)
    assert map_body({"a b": 1}) is None  # a key that needs escaping: the general code


char_values = st.one_of(st.sampled_from(["", "Q", "QM1", "é" * 30, "x" * 49, "MQSTR"]), st.text(max_size=10))


@SETTINGS
@given(char_values, char_values, char_values, char_values, st.sampled_from(["<", ">"]))
def test_mqmd_pack_with_its_character_field_sets_matches_the_checked_packing(
    rq: str, rqm: str, uid: str, name: str, order: str
) -> None:
    md = MQMD(reply_to_q=rq, reply_to_q_mgr=rqm, user_identifier=uid, put_appl_name=name, put_date="20251121")
    for _ in range(2):  # the set encoded, then found
        try:
            expected = md._pack_checked(order)
        except MQFormatError as exc:
            with pytest.raises(MQFormatError, match=str(exc.field)):
                md.pack(order)
            return
        assert md.pack(order) == expected
    md.reply_to_q = "OTHER"  # a changed field is not served from the set of the old values
    assert md.pack(order)[100:148] == b"OTHER".ljust(48)
