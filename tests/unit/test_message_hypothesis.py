"""Round trips: whatever is written to a Stream/Bytes/Map message or a property reads back
identically (value and JMS type); modified UTF-8 and Java number text agree with Java's rules."""

from __future__ import annotations

import math
import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqp_jms import BytesMessage, MapMessage, Message, StreamMessage
from amqp_jms.message._data import restore, snapshot
from amqp_jms.message._javatext import (
    java_double_to_string,
    java_float_to_string,
    java_parse_double,
    java_parse_float,
    to_float32,
)
from amqp_jms.message._mutf8 import decode_modified_utf8, encode_modified_utf8
from amqp_jms.message._seam import mark_received
from amqp_jms.types import Byte, Char, Float, Int, Short

# The machine is shared: no deadline and no too-slow health check, so load cannot fail a run.
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

floats32 = st.floats(width=32, allow_nan=False).map(lambda f: Float(f))
typed_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**7), 2**7 - 1).map(Byte),
    st.integers(-(2**15), 2**15 - 1).map(Short),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.integers(-(2**63), 2**63 - 1),
    floats32,
    st.floats(allow_nan=False),
    st.text(max_size=20),
)
body_values = st.one_of(typed_scalars, st.characters().map(Char), st.binary(max_size=20), st.none())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return type(a) is type(b) and (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


@SETTINGS
@given(st.lists(body_values, max_size=15))
def test_stream_message_round_trip(items: list[Any]) -> None:
    msg = StreamMessage()
    for item in items:
        msg.write_object(item)
    msg.reset()
    out = [msg.read_object() for _ in items]
    assert all(_same(a, b) for a, b in zip(items, out)), (items, out)
    # The same values read back through the typed readers.
    received = restore(snapshot(msg))
    mark_received(received)
    for item in items:
        if item is None:
            assert received.read_object() is None
        elif isinstance(item, bytes):
            buf = bytearray(len(item) + 1)
            count = received.read_bytes(buf)
            assert bytes(buf[: max(count, 0)]) == item
        else:
            assert received.read_string() == _as_java_string(item)


def _as_java_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Float):
        return java_float_to_string(value)
    if isinstance(value, float):
        return java_double_to_string(value)
    return str(int(value)) if isinstance(value, int) else str(value)


# Every BytesMessage writer with a strategy for its argument and the reader that reads it back.
BYTES_OPS = {
    "boolean": st.booleans(),
    "byte": st.integers(-(2**7), 2**7 - 1),
    "short": st.integers(-(2**15), 2**15 - 1),
    "char": st.characters(max_codepoint=0xFFFF),
    "int": st.integers(-(2**31), 2**31 - 1),
    "long": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(width=32),
    "double": st.floats(),
    "utf": st.text(max_size=30),
}


@SETTINGS
@given(st.lists(st.sampled_from(sorted(BYTES_OPS)).flatmap(
    lambda op: st.tuples(st.just(op), BYTES_OPS[op])), max_size=20))
def test_bytes_message_round_trip(ops: list[tuple[str, Any]]) -> None:
    msg = BytesMessage()
    for op, value in ops:
        getattr(msg, f"write_{op}")(value)
    msg.reset()
    for op, value in ops:
        got = getattr(msg, f"read_{op}")()
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got)
        else:
            assert got == value
            if op in ("float", "double"):
                assert math.copysign(1, got) == math.copysign(1, value)
    assert msg.read_bytes(bytearray(1)) == -1


@SETTINGS
@given(st.dictionaries(st.text(min_size=1, max_size=10), body_values, max_size=10))
def test_map_message_round_trip(items: dict[str, Any]) -> None:
    msg = MapMessage(items)
    copy = restore(snapshot(msg))
    mark_received(copy)
    assert copy.get_map_names() == list(items)
    for name, value in items.items():
        assert _same(copy.get_object(name), value)


@SETTINGS
@given(st.dictionaries(st.from_regex(r"[A-Za-z_$][A-Za-z0-9_$]{0,8}", fullmatch=True).filter(
    lambda n: n.upper() not in {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE",
                                "IN", "IS", "ESCAPE"} and not n.startswith("JMS")),  # JMS*: header names
    typed_scalars, max_size=8))
def test_object_properties_round_trip(props: dict[str, Any]) -> None:
    msg = Message()
    for name, value in props.items():
        msg.set_object_property(name, value)
    assert msg.get_property_names() == list(props)
    for name, value in props.items():
        assert _same(msg.get_object_property(name), value)
        assert msg.get_string_property(name) == _as_java_string(value)


def _java_write_utf(text: str) -> bytes:
    """DataOutputStream.writeUTF's encoding loop, written per UTF-16 unit as Java does."""
    out = bytearray()
    units = struct.unpack(f">{len(text.encode('utf-16-be', 'surrogatepass')) // 2}H",
                          text.encode("utf-16-be", "surrogatepass"))
    for c in units:
        if 0x0001 <= c <= 0x007F:
            out.append(c)
        elif c <= 0x07FF:
            out += bytes([0xC0 | (c >> 6) & 0x1F, 0x80 | c & 0x3F])
        else:
            out += bytes([0xE0 | (c >> 12) & 0x0F, 0x80 | (c >> 6) & 0x3F, 0x80 | c & 0x3F])
    return bytes(out)


@SETTINGS
@given(st.text())
def test_modified_utf8_matches_java(text: str) -> None:
    encoded = encode_modified_utf8(text)
    assert encoded == _java_write_utf(text)
    assert b"\x00" not in encoded
    assert decode_modified_utf8(encoded) == text


@SETTINGS
@given(st.floats(width=32))
def test_java_float_text_round_trips(value: float) -> None:
    text = java_float_to_string(value)
    parsed = java_parse_float(text)
    assert (math.isnan(parsed) and math.isnan(value)) or (
        parsed == value and math.copysign(1, parsed) == math.copysign(1, value))
    assert to_float32(parsed) == parsed or math.isnan(parsed)


@SETTINGS
@given(st.floats())
def test_java_double_text_round_trips(value: float) -> None:
    text = java_double_to_string(value)
    parsed = java_parse_double(text)
    assert (math.isnan(parsed) and math.isnan(value)) or (
        parsed == value and math.copysign(1, parsed) == math.copysign(1, value))
    if not math.isnan(value) and not math.isinf(value) and value != 0:
        magnitude = abs(value)
        assert ("E" in text) == (not 1e-3 <= magnitude < 1e7)
