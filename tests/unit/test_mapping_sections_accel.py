"""The C ``decode_sections`` (``_csections``) against its Python twin: for any payload, generated
sections in any order with any values and then cut, flipped or spliced, the two give the same
``Sections`` value for value and type for type, or the same MessageFormatException; where the C
path gives up (``try_decode`` is None) it never claims a payload the Python path refuses; hostile
sizes and counts make it give up without reading out of bounds or allocating for them; typical
JMS messages never leave the C path; and ``AMQP_JMS_NO_ACCEL=1`` runs the Python twin."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mapping_proton_oracle import SCALARS, amqp_values, hashable_keys, typed

from amqp_jms.exceptions import MessageFormatException
from amqp_jms.mapping.codec import Header, Properties, encode_sections, encode_value, sections
from amqp_jms.types import Byte, Symbol, Timestamp, UByte, UInt, ULong

_csections = sections._accel
needs_accel = pytest.mark.skipif(_csections is None, reason="the C accelerator _csections was not built")
SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CODES = list(range(0x70, 0x79))


def fields(s: sections.Sections) -> dict[str, Any]:
    return {name: typed(getattr(s, name)) for name in sections.Sections.__slots__}


def outcome(decode: Any, data: bytes, body: bool) -> tuple[str, Any]:
    try:
        return "ok", fields(decode(data, body=body))
    except MessageFormatException as e:
        return "error", str(e)


def assert_same(data: bytes, body: bool) -> None:
    assert _csections is not None
    expected = outcome(sections.decode_sections_py, data, body)
    assert outcome(_csections.decode_sections, data, body) == expected
    fast = _csections.try_decode(data, body)
    if fast is not None:  # the C path itself, not its fallback
        assert expected == ("ok", fields(fast))


# -- generated payloads ---------------------------------------------------------------------------

headers = st.lists(
    st.one_of(st.none(), st.booleans(), SCALARS[UByte], SCALARS[UInt], amqp_values), max_size=6
)
properties = st.lists(
    st.one_of(st.none(), st.text(max_size=20), SCALARS[ULong], st.uuids(), st.binary(max_size=8),
              SCALARS[Symbol], SCALARS[Timestamp], SCALARS[UInt], amqp_values),
    max_size=14,
)  # fmt: skip
annotations = st.dictionaries(
    st.one_of(SCALARS[Symbol], SCALARS[ULong], hashable_keys), amqp_values, max_size=4
)
app_properties = st.dictionaries(st.one_of(st.text(max_size=10), hashable_keys), amqp_values, max_size=4)
VALUES = {0x70: headers, 0x71: annotations, 0x72: annotations, 0x73: properties, 0x74: app_properties,
          0x75: st.one_of(st.binary(max_size=40), amqp_values), 0x76: st.lists(amqp_values, max_size=4),
          0x77: amqp_values, 0x78: annotations}  # fmt: skip


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    """Sections mostly in the right order (so the C path has work), sometimes not; values mostly
    of the right kind, sometimes not; then maybe damaged."""
    if draw(st.booleans()):
        codes = sorted(draw(st.lists(st.sampled_from(CODES), max_size=6)))
    else:
        codes = draw(st.lists(st.sampled_from(CODES), max_size=6))
    out = b"".join(bytes((0x00, 0x53, c)) + encode_value(draw(VALUES[c])) for c in codes)
    damage = draw(st.sampled_from(["none", "none", "cut", "flip", "splice"]))
    if out and damage == "cut":
        out = out[: draw(st.integers(0, len(out) - 1))]
    elif out and damage == "flip":
        i = draw(st.integers(0, len(out) - 1))
        out = out[:i] + bytes((draw(st.integers(0, 255)),)) + out[i + 1 :]
    elif damage == "splice":
        i = draw(st.integers(0, len(out)))
        out = out[:i] + draw(st.binary(min_size=1, max_size=8)) + out[i:]
    return out


@needs_accel
@SETTINGS
@given(payloads(), st.booleans())
def test_c_and_python_give_the_same_sections_or_the_same_error(data: bytes, body: bool) -> None:
    assert_same(data, body)


@needs_accel
@SETTINGS
@given(st.binary(max_size=80), st.booleans())
def test_garbage_gives_the_same_error(data: bytes, body: bool) -> None:
    assert_same(data, body)


@needs_accel
@SETTINGS
@given(
    st.builds(Header, st.booleans(), st.integers(0, 255), st.one_of(st.none(), st.integers(0, 2**32 - 1)),
              st.booleans(), st.integers(0, 2**32 - 1)),
    st.dictionaries(SCALARS[Symbol], st.one_of(st.none(), SCALARS[Byte], st.text(max_size=10)), max_size=3),
    st.tuples(st.one_of(st.text(max_size=30), SCALARS[ULong], st.uuids(), st.binary(max_size=8)),
              st.text(max_size=20), st.one_of(st.none(), st.text(max_size=10)), st.integers(0, 2**62),
              ).map(lambda t: Properties(t[0], to=t[1], subject=t[2], creation_time=t[3])),
    st.dictionaries(st.text(max_size=10), st.one_of(*(SCALARS[t] for t in SCALARS)), max_size=5),
    st.sampled_from([0x75, 0x76, 0x77]),
    st.booleans(),
)  # fmt: skip
def test_well_formed_messages_stay_on_the_c_path(
    header: Header, ma: dict[Any, Any], props: Properties, ap: dict[str, Any], body_type: int, body: bool
) -> None:
    """What producers send (no char, decimal, array or described values) is decoded in C."""
    assert _csections is not None
    value = {0x75: [b"a", b"bc"], 0x76: [[1, "x"], [None]], 0x77: ["text", {"k": 1}]}[body_type]
    data = encode_sections(header=header, message_annotations=ma, properties=props,
                           application_properties={k: v for k, v in ap.items() if type(v).__name__ != "Char"},
                           body_type=body_type, body=value, footer={Symbol("f"): 1})  # fmt: skip
    fast = _csections.try_decode(data, body)
    assert fast is not None
    assert fields(fast) == fields(sections.decode_sections_py(data, body=body))


# -- hostile sizes and counts ---------------------------------------------------------------------

SECTION = bytes((0x00, 0x53, 0x77))


@needs_accel
@pytest.mark.parametrize(
    "value",
    [
        "d0ffffffffffffffff",  # list32 claiming 4 GB and 4 G elements
        "d0000000100fffffff" + "40" * 12,  # a count past what the size can hold
        "d1000000080000000340404040",  # an odd map count
        "c0",  # list8 without its size
        "c00005",  # list8 whose count is not there
        "b0ffffffff41",  # a binary past the end
        "b1000000",  # a str32 size cut short
        "a1028080",  # not UTF-8 and not modified UTF-8 either
        "a302c3a9",  # a non-ASCII symbol
        "c10302a140",  # a map whose key is a string cut short
        "c1050245a140",  # a list as a map key (unhashable)
        "5602",  # a boolean byte that is not 0 or 1
        "c0" + "0201" + "c0" * 40,  # nesting cut short
    ],
)
def test_hostile_values_give_the_python_error(value: str) -> None:
    data = SECTION + bytes.fromhex(value)
    assert _csections is not None
    assert _csections.try_decode(data) is None
    with pytest.raises(MessageFormatException):
        sections.decode_sections_py(data)
    assert_same(data, True)


@needs_accel
def test_deep_nesting_leaves_the_c_path_without_a_crash() -> None:
    deep: Any = []
    for _ in range(200):
        deep = [deep]
    data = SECTION + encode_value(deep)
    assert _csections is not None and _csections.try_decode(data) is None
    assert_same(data, True)  # (the Python twin decodes it or says it is nested too deeply)
    skipped = b"".join([b"\x00\x53\x75", b"\x00" * 5000])  # a described chain in a skipped body
    assert_same(skipped, False)


@needs_accel
def test_rare_forms_are_decoded_by_the_python_twin() -> None:
    """Long descriptors, described and array values, chars: the C path hands them over."""
    from amqp_jms.mapping.codec import Array
    from amqp_jms.types import Char, Described

    long_descriptor = b"\x00\x80" + (0x77).to_bytes(8, "big") + encode_value("v")
    rare = [Described(ULong(1), "x"), Array(UByte, [UByte(1)]), Char("c")]
    for data in [long_descriptor, *(SECTION + encode_value(v) for v in rare)]:
        assert _csections is not None and _csections.try_decode(data) is None
        assert sections.decode_sections(data).body == sections.decode_sections_py(data).body
    assert sections.decode_sections(long_descriptor).body == "v"


@needs_accel
def test_decode_sections_takes_any_buffer_and_only_the_body_keyword() -> None:
    data = encode_sections(header=Header(durable=True), body_type=0x77, body=Byte(1))
    for buf in (data, bytearray(data), memoryview(data)):
        s = sections.decode_sections(buf)
        assert type(s.data) is bytes and s.header == Header(durable=True) and typed(s.body) == typed(Byte(1))
    s = sections.decode_sections(data, body=False)
    assert s.body is None and not s.body_decoded
    s.decode_body()
    assert typed(s.body) == typed(Byte(1))
    with pytest.raises(TypeError):
        sections.decode_sections(data, bogus=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        sections.decode_sections()  # type: ignore[call-arg]


def test_amqp_jms_no_accel_runs_the_python_twin() -> None:
    code = (
        "from amqp_jms.mapping.codec import sections as s; print(s.decode_sections is s.decode_sections_py)"
    )
    env = dict(os.environ, AMQP_JMS_NO_ACCEL="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_the_header_defaults_match() -> None:
    """An empty header list gives the AMQP defaults, as plain ints (what consumers compare)."""
    data = b"\x00\x53\x70\x45"
    s = sections.decode_sections(data)
    assert s.header == Header() and typed(s.header.priority) == typed(4)
    priority_7 = b"\x00\x53\x70\xc0\x04\x02\x40\x50\x07"
    assert typed(sections.decode_sections(priority_7).header.priority) == typed(UByte(7))
