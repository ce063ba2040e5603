"""Bad input to the MQ mapping gets MQFormatError naming the field, never a bare TypeError,
AttributeError or UnicodeEncodeError from deep inside: a hand-built MQMD with wrongly typed
fields (``from_mq``, ``pack``, ``mq_to_amqp``), text no UTF-8/XML can carry (``to_mq``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqp_jms.destination import Queue, Topic
from amqp_jms.exceptions import MessageFormatException
from amqp_jms.message import TextMessage
from amqp_jms.mq import (
    MQMD,
    MQFormatError,
    amqp_to_mq,
    from_mq,
    from_mq_bytes,
    load_dump,
    mq_to_amqp,
    to_mq,
)
from amqp_jms.types import Int

Setter = Callable[[TextMessage], None]
FIELDS = [f.name for f in dataclasses.fields(MQMD)]
GOOD = to_mq(TextMessage("hello"))


def _good_message() -> tuple[MQMD, bytes]:
    m = TextMessage("hello")
    m.set_int_property("a", 1)
    mq = to_mq(m)
    return mq.md, mq.data


@pytest.mark.parametrize(
    ("field", "value", "name"),
    [
        ("format", 0, "Format"),
        ("encoding", ",", "Encoding"),
        ("coded_char_set_id", "1208", "CodedCharSetId"),
        ("priority", "        ", "Priority"),
        ("msg_id", None, "MsgId"),
        ("correl_id", "connect", "CorrelId"),
        ("put_date", 2, "PutDate"),
        ("report", True, "Report"),
    ],
)
def test_from_mq_names_the_wrongly_typed_field(field: str, value: Any, name: str) -> None:
    md, data = _good_message()
    bad = dataclasses.replace(md, **{field: value})
    with pytest.raises(MQFormatError) as info:
        from_mq(bad, data)
    assert info.value.structure == "MQMD" and info.value.field == name
    with pytest.raises(MQFormatError):
        mq_to_amqp(bad, data)


def test_pack_with_a_non_int_encoding_names_encoding() -> None:
    with pytest.raises(MQFormatError) as info:
        dataclasses.replace(GOOD.md, encoding=None).pack()  # type: ignore[arg-type]
    assert info.value.field == "Encoding"


def test_a_well_typed_hand_built_mqmd_still_converts() -> None:
    md, data = _good_message()
    back = from_mq(dataclasses.replace(md, priority=7, put_appl_name="app"), data)
    assert back.get_jms_priority() == 7 and back.get_text() == "hello"  # type: ignore[attr-defined]
    assert back.get_int_property("a") == Int(1)


weird = st.one_of(
    st.integers(-(2**40), 2**40),
    st.text(max_size=10),
    st.binary(max_size=30),
    st.none(),
    st.booleans(),
    st.sampled_from(["MQHRF2  ", "MQSTR   ", "MQHMDE  ", 273, 546, 1208, 819]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FIELDS), weird, max_size=4), st.binary(max_size=40), st.booleans())
def test_any_field_values_raise_only_mq_format_error(
    changes: dict[str, Any], tail: bytes, keep_data: bool
) -> None:
    md, data = _good_message()
    bad = dataclasses.replace(md, **changes)
    for attempt in (lambda: from_mq(bad, data if keep_data else tail), bad.pack):
        try:
            attempt()
        except MQFormatError as exc:
            assert str(exc)  # says what was wrong


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=120))
def test_amqp_to_mq_on_garbage_raises_only_jms_exceptions(raw: bytes) -> None:
    try:
        amqp_to_mq(raw)
    except MessageFormatException:
        pass


@pytest.mark.parametrize(
    ("set_bad", "field"),
    [
        (lambda m: m.set_jms_destination(Queue("q\ud800")), "Dst"),
        (lambda m: m.set_jms_reply_to(Topic("t\udfff")), "Rto"),
        (lambda m: m.set_string_property("JMSXGroupID", "g\ud800"), "JMSXGroupID"),
    ],
)
def test_to_mq_names_text_that_is_not_valid_unicode(set_bad: Setter, field: str) -> None:
    m = TextMessage("x")
    set_bad(m)
    with pytest.raises(MQFormatError, match=field):
        to_mq(m)


surrogate_text = st.text(st.characters(codec=None, categories=["Cs", "Ll", "Cc"]), min_size=1, max_size=4)


@settings(max_examples=100, deadline=None)
@given(surrogate_text, st.sampled_from(["dest", "reply", "type", "corr", "group", "user", "prop", "text"]))
def test_to_mq_on_any_text_round_trips_or_raises_mq_format_error(text: str, where: str) -> None:
    m = TextMessage("x")
    {
        "dest": lambda: m.set_jms_destination(Queue(text)),
        "reply": lambda: m.set_jms_reply_to(Queue(text)),
        "type": lambda: m.set_jms_type(text),
        "corr": lambda: m.set_jms_correlation_id(text),
        "group": lambda: m.set_string_property("JMSXGroupID", text),
        "user": lambda: m.set_string_property("JMSXUserID", text),
        "prop": lambda: m.set_string_property("p", text),
        "text": lambda: m.set_text(text),
    }[where]()
    try:
        back = from_mq_bytes(to_mq(m).to_bytes())
    except MQFormatError as exc:
        assert str(exc)
    else:
        assert back.get_text() == m.get_text()  # type: ignore[attr-defined]


@pytest.mark.parametrize("source", [5, None, object()])
def test_load_dump_of_something_that_is_not_a_file_names_it(source: Any) -> None:
    with pytest.raises(MQFormatError, match=type(source).__name__):
        load_dump(source)


def test_load_dump_of_a_missing_path_is_the_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_dump(tmp_path / "absent.dmp")


@pytest.mark.parametrize("uri", ["queue:///%ED%A0%80", "topic://a%FFb", "queue://QM/%C3"])
def test_destination_uri_with_non_utf8_escapes_is_refused_not_replaced(uri: str) -> None:
    from amqp_jms.mq._uri import destination_from_uri

    with pytest.raises(MQFormatError, match="not UTF-8") as info:
        destination_from_uri(uri, "Rto")
    assert info.value.field == "Rto"


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, 2**40])
def test_an_mqlong_out_of_range_names_its_field_on_receive(value: int) -> None:
    # hypothesis found it: a hand-built MQMD with MsgType 2^31 raised a bare ValueError (from the
    # JMS_IBM_MsgType Int) instead of MQFormatError naming the field
    md, data = _good_message()
    with pytest.raises(MQFormatError) as info:
        from_mq(dataclasses.replace(md, msg_type=value), data)
    assert info.value.field == "MsgType"
