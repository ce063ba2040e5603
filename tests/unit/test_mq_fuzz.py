"""Fuzzing: random and truncated input to the MQ parsers raises MQFormatError and nothing else."""

from __future__ import annotations

import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqp_jms.message import MapMessage, StreamMessage, TextMessage
from amqp_jms.mq import MQMD, MQFormatError, from_mq, from_mq_bytes, iter_dump, to_mq
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Int

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def valid_messages() -> list[bytes]:
    t = TextMessage("hello")
    t = with_properties(t, {"a": Int(1), "b": "x"})
    t.set_jms_correlation_id("c")
    out = [to_mq(t).to_bytes(), to_mq(t, encoding="big").to_bytes()]
    out.append(to_mq(MapMessage({"k": Int(2), "s": "v"})).to_bytes())
    out.append(to_mq(StreamMessage([1, "two", None])).to_bytes())
    return out


VALID = valid_messages()


def parse(raw: bytes) -> None:
    try:
        from_mq_bytes(raw)
    except MQFormatError:
        pass


@SETTINGS
@given(st.binary(max_size=600))
def test_random_bytes(raw: bytes) -> None:
    parse(raw)


@SETTINGS
@given(st.sampled_from(VALID), st.data())
def test_truncated_messages(raw: bytes, data: st.DataObject) -> None:
    parse(raw[: data.draw(st.integers(0, len(raw)))])


@SETTINGS
@given(st.sampled_from(VALID), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6))
def test_corrupted_messages(raw: bytes, flips: list[tuple[int, int]]) -> None:
    buf = bytearray(raw)
    for pos, value in flips:
        buf[pos % len(buf)] = value
    parse(bytes(buf))


@SETTINGS
@given(
    st.binary(max_size=400),
    st.sampled_from(["MQHRF2", "MQSTR", "", "MQHMDE"]),
    st.sampled_from([546, 273, 0]),
)
def test_random_data_after_a_good_mqmd(data: bytes, fmt: str, enc: int) -> None:
    try:
        from_mq(MQMD(format=fmt, encoding=enc, coded_char_set_id=1208), data)
    except MQFormatError:
        pass


@SETTINGS
@given(st.text(max_size=400))
def test_random_xml_in_a_folder(text: str) -> None:
    from amqp_jms.mq import MQRFH2

    r = MQRFH2(encoding=546, order="<")
    try:
        r.add_folder(text)
        from_mq(MQMD(format="MQHRF2"), r.pack())
    except MQFormatError:
        pass


dump_line = st.one_of(
    st.just("N"),
    st.sampled_from(
        ["A VER 2", "A PRI 4", "A MSI 00ff", "A FMT MQSTR", "A XYZ 1", "X 414243", 'S "x"', "T y"]
    ),
    st.text(max_size=40),
    st.builds(
        lambda c, v: f"A {c} {v}", st.sampled_from(["VER", "MSI", "RTQ", "AIX", "PRI"]), st.text(max_size=30)
    ),
    st.builds(lambda v: f"X {v}", st.text(alphabet="0123456789abcdefXYZ ", max_size=30)),
)


@SETTINGS
@given(st.lists(dump_line, max_size=30))
def test_random_dump_files(lines: list[str]) -> None:
    try:
        for md, data in iter_dump(io.StringIO("\n".join(lines))):
            try:
                from_mq(md, data)
            except MQFormatError:
                pass
    except MQFormatError:
        pass
