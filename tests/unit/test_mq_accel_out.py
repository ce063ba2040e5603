"""The optional C accelerator of the outgoing MQ mapping (``_mqout``) writes exactly the bytes of
the Python path, raises the same errors (by leaving every doubtful input to that path), and
``AMQP_JMS_NO_ACCEL=1`` really runs the Python path. ``MQMessage`` made from finished bytes
behaves as one made from an ``MQMD``: changing ``md`` or ``data`` changes ``to_bytes()``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mq_fast_outgoing import general
from test_mq_fast_outgoing import values as any_values
from test_mq_hypothesis import messages

from amqp_jms.destination import Queue
from amqp_jms.message import Message, TextMessage
from amqp_jms.mq import MQMD, MQFormatError, MQMessage, to_mq
from amqp_jms.mq import outgoing as outgoing_module
from amqp_jms.mq.bodies import encode_map, encode_stream
from amqp_jms.mq.rfh2 import rfh2_bytes
from amqp_jms.mq.xmlfolder import _GOOD_USR_NAMES, _NEEDS_WORK, BODY_DT, USR_DT, check_usr_name_cached
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Char, Int

try:
    from amqp_jms.mq import _mqout
except ImportError:  # not built here: only the fallback tests run
    _mqout = None  # type: ignore[assignment]

needs_accel = pytest.mark.skipif(_mqout is None, reason="the C accelerator was not built")
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def python_path() -> Iterator[None]:
    """Map with the pure-Python path inside the block (as AMQP_JMS_NO_ACCEL=1 does)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(outgoing_module, "_ACCEL", None)
        mp.setattr(outgoing_module, "_provider_id", outgoing_module._provider_id_py)
        yield


def outcome(m: Message, **options: Any) -> tuple[bytes | None, str | None]:
    """``to_mq(m).to_bytes()``, or the MQFormatError either step raised."""
    try:
        return to_mq(m, **options).to_bytes(), None
    except MQFormatError as exc:
        return None, str(exc)


# properties the Python path must handle or refuse: values that need escaping or that XML cannot
# carry, out-of-range ints, NaN, Char, bytearray, JMS_IBM_* fields (also out of range or too long)
odd_props = st.dictionaries(
    st.sampled_from(["a", "b", "not", "1x", "JMS_IBM_PutDate", "JMS_IBM_Format", "JMS_IBM_Encoding",
                     "JMS_IBM_Character_Set", "JMSXUserID", "JMS_IBM_MsgType", "JMSXGroupID"]),
    st.one_of(any_values, st.sampled_from(["a&b", "\ud800", "x" * 40, "ibm-1208", "UTF-16", "x\r"]),
              st.builds(bytearray, st.binary(max_size=3)), st.integers(-(2**40), 2**40)),
    max_size=3,
)  # fmt: skip
options = st.fixed_dictionaries(
    {
        "encoding": st.sampled_from(["native", "big", "little", 0x111, 0x222]),
        "target_client": st.sampled_from(["jms", "mq"]),
        "queue_manager": st.one_of(st.none(), st.sampled_from(["QM1", "é" * 30])),
    }
)


@SETTINGS
@given(messages(), odd_props, options)
def test_the_accelerator_writes_and_refuses_what_the_python_path_does(
    m: Message, props: dict[str, Any], opts: dict[str, Any]
) -> None:
    m = with_properties(m, props)
    fast = outcome(m, **opts)
    with python_path():
        slow = outcome(m, **opts)
    assert fast == slow


@SETTINGS
@given(messages(), st.sampled_from(["native", "big"]))
def test_an_accelerated_message_equals_the_python_one_field_by_field(m: Message, encoding: str) -> None:
    try:
        fast = to_mq(m, encoding=encoding)
    except MQFormatError:
        return  # outcomes are compared above
    with python_path():
        slow = to_mq(m, encoding=encoding)
    assert fast.data == slow.data
    assert fast.md == slow.md
    assert fast == slow and repr(fast) == repr(slow)


def sample() -> Message:
    m = TextMessage("hello")
    m.set_jms_message_id("ID:" + "0123456789abcdef" * 3)
    m.set_jms_timestamp(1_763_740_800_123)
    m.set_jms_reply_to(Queue("REPLY.Q"))
    m = with_properties(m, {"customer": "acme", "qty": Int(3)})
    return m


def test_changing_md_or_data_changes_to_bytes() -> None:
    original = to_mq(sample()).to_bytes()
    mq = to_mq(sample())
    mq.md.priority = 9
    mq.md.put_appl_name = "changed"
    got = mq.to_bytes()
    assert got != original
    assert MQMD.unpack(got)[0].priority == 9 and MQMD.unpack(got)[0].put_appl_name == "changed"
    assert got[364:] == original[364:]

    mq = to_mq(sample())
    data = mq.data
    mq.data = data + b"!"
    assert mq.to_bytes() == original + b"!"

    mq = to_mq(sample())
    md = mq.md.copy()
    md.priority = 1
    mq.md = md
    assert mq.to_bytes() == md.pack() + original[364:]
    assert mq == MQMessage(md, original[364:])


def test_a_message_read_back_is_the_message_written() -> None:
    mq = to_mq(sample())
    raw = mq.to_bytes()
    assert MQMessage.from_bytes(raw) == mq
    assert MQMessage.from_bytes(raw).to_bytes() == raw
    assert mq.parse().body == b"hello"


def test_the_mq_target_with_an_encoding_naming_no_byte_order_fails_on_to_bytes_both_ways() -> None:
    m = sample()
    m = with_properties(m, {"JMS_IBM_Encoding": 0})
    for accelerated in (True, False):
        with python_path() if not accelerated else _nothing():
            mq = to_mq(m, target_client="mq")
            with pytest.raises(MQFormatError, match="Encoding"):
                mq.to_bytes()


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def test_no_accel_environment_runs_the_python_path() -> None:
    code = "from amqp_jms.mq import outgoing; import sys; sys.stdout.write(repr(outgoing._ACCEL is None))"
    env = {**os.environ, "AMQP_JMS_NO_ACCEL": "1", "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == "True"


# ---- the C functions themselves


def md_args(**changes: Any) -> tuple[Any, ...]:
    md = MQMD(format="MQHRF2", put_date="20251121", reply_to_q="R", user_identifier="u", put_appl_name="é")
    for name, value in changes.items():
        setattr(md, name, value)
    return tuple(getattr(md, f) for f in MQMD.__slots__)


@needs_accel
@pytest.mark.parametrize("big", [False, True])
def test_assemble_writes_mqmd_rfh2_and_body(big: bool) -> None:
    order = ">" if big else "<"
    args = md_args(encoding=0x111 if big else 0x222)
    folders: list[str | bytes] = ["<mcd><Msd>jms_text</Msd></mcd>", b"<jms/>", "<usr><a>\u00e9</a></usr>", ""]
    raw = [f.encode() if isinstance(f, str) else f for f in folders]
    expected = MQMD(*args).pack(order) + rfh2_bytes(order, 0x222, 1208, "MQSTR", raw, b"body")
    assert _mqout.assemble(big, args, (0x222, 1208, "MQSTR"), folders, b"body") == expected
    assert _mqout.assemble(big, args, None, [], b"body") == MQMD(*args).pack(order) + b"body"


@needs_accel
@pytest.mark.parametrize(
    ("md", "rfh2", "folders", "body"),
    [
        (md_args(version=1), None, [], b""),
        (md_args()[:-1], None, [], b""),
        (list(md_args()), None, [], b""),
        (md_args(priority=2**31), None, [], b""),
        (md_args(expiry=-(2**31) - 1), None, [], b""),
        (md_args(priority="7"), None, [], b""),
        (md_args(reply_to_q="Q" * 49), None, [], b""),
        (md_args(user_identifier="\ud800"), None, [], b""),
        (md_args(put_date=b"20251121"), None, [], b""),
        (md_args(msg_id=bytearray(24)), None, [], b""),
        (md_args(correl_id=b"short"), None, [], b""),
        (md_args(), None, [], bytearray(b"body")),
        (md_args(), (546, 1208, "MQSTR_TOO_LONG"), [], b""),
        (md_args(), (546, 2**32, "MQSTR"), [], b""),
        (md_args(), (546, 1208), [], b""),
        (md_args(), (546, 1208, "MQSTR"), ("<a/>",), b""),
        (md_args(), (546, 1208, "MQSTR"), ["<a>\udc80</a>"], b""),
        (md_args(), (546, 1208, "MQSTR"), [7], b""),
    ],
)
def test_assemble_leaves_what_it_does_not_write_to_the_python_path(
    md: Any, rfh2: Any, folders: Any, body: Any
) -> None:
    assert _mqout.assemble(False, md, rfh2, folders, body) is None


@needs_accel
@SETTINGS
@given(st.dictionaries(st.sampled_from(["a", "qty", "x_1", "é", "JMSX", "and"]), any_values, max_size=6))
def test_xml_elements_writes_usr_folders_as_element_does(props: dict[str, Any]) -> None:
    for name in props:
        try:
            check_usr_name_cached(name)  # what to_mq does before the names are trusted
        except MQFormatError:
            pass
    got = _mqout.xml_elements(0, props, _GOOD_USR_NAMES, USR_DT)
    if got is not None:
        assert all(n in _GOOD_USR_NAMES for n in props)
        assert got == general(props).encode()


@needs_accel
@SETTINGS
@given(
    st.dictionaries(st.sampled_from(["a", "b.c", "x-1", "_", "a b", "é", "<", ""]), any_values, max_size=6)
)
def test_xml_elements_writes_map_bodies_as_encode_map_does(entries: dict[str, Any]) -> None:
    got = _mqout.xml_elements(1, entries, _GOOD_USR_NAMES, BODY_DT)
    if got is not None:
        assert got == encode_map(entries).encode()


@needs_accel
@SETTINGS
@given(st.lists(st.one_of(any_values, st.builds(Char, st.sampled_from("a&<\x00é"))), max_size=8))
def test_xml_elements_writes_stream_bodies_as_encode_stream_does(items: list[Any]) -> None:
    got = _mqout.xml_elements(2, items, _GOOD_USR_NAMES, BODY_DT)
    if got is not None:
        assert got == encode_stream(items).encode()


@needs_accel
def test_xml_elements_takes_the_common_values_and_leaves_the_rest() -> None:
    items = ["a", Int(2), 3, 2.5, True, None, b"\x01\xff", Char("c")]
    assert _mqout.xml_elements(2, items, set(), BODY_DT) == encode_stream(items).encode()
    for odd in ["a<b", "\x00", float("nan"), 2**63, bytearray(b"x"), 1j]:
        assert _mqout.xml_elements(2, [odd], set(), BODY_DT) is None
    assert _mqout.xml_elements(1, {"a b": 1}, set(), BODY_DT) is None  # needs escaping
    assert _mqout.xml_elements(0, {"unchecked": 1}, set(), USR_DT) is None
    assert _mqout.xml_elements(3, [], set(), BODY_DT) is None
    assert _mqout.xml_elements(2, {"not": "a list"}, set(), BODY_DT) is None


@needs_accel
@SETTINGS
@given(
    st.one_of(
        st.binary(min_size=24, max_size=24).map(lambda b: "ID:" + b.hex()),
        st.binary(min_size=24, max_size=24).map(lambda b: "ID:" + b.hex().upper()),
        st.text(max_size=60),
        st.sampled_from(["ID:" + "0" * 48, "ID:" + "0" * 47 + "1", "ID:" + " " * 48, "ID:" + "g" * 48]),
        st.text("0123456789abcdef ", min_size=48, max_size=48).map(lambda t: "ID:" + t),
    )
)
def test_provider_id_reads_what_the_python_reader_reads(value: str) -> None:
    assert _mqout.provider_id(value) == outgoing_module._provider_id_py(value)


def python_correlation(cid: str) -> tuple[bytes, str] | None:
    """What to_mq's Python path makes of a str JMSCorrelationID, None where it escapes or raises."""
    raw = outgoing_module._provider_id_py(cid)
    if raw is not None:
        return raw, ""
    if _NEEDS_WORK.search(cid) is not None:
        return None
    return cid.encode("utf-8")[:24].ljust(24, b"\x00"), f"<Cid>{cid}</Cid>"


@needs_accel
@SETTINGS
@given(
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(
            ["", "order-42", "é" * 13, "a&b", "x\r", "\ud800", "ID:" + "ab" * 24, "ID:" + "0" * 48]
        ),
    )
)
def test_correlation_reads_what_the_python_path_reads(cid: str) -> None:
    assert _mqout.correlation(cid) == python_correlation(cid)
    assert _mqout.correlation(Char("c")) is None and _mqout.correlation(b"bytes") is None  # type: ignore[arg-type]


@needs_accel
def test_large_outputs_and_many_folders_are_written_whole() -> None:
    items = ["x" * 700, 2**62, b"\xab" * 600, *range(300)]
    assert _mqout.xml_elements(2, items, set(), BODY_DT) == encode_stream(items).encode()
    folders: list[str | bytes] = [f"<f{i}>{'é' * i}</f{i}>" for i in range(40)]
    raw = [f.encode() if isinstance(f, str) else f for f in folders]
    args = md_args()
    expected = MQMD(*args).pack("<") + rfh2_bytes("<", 546, 1208, "", raw, b"b" * 5000)
    assert _mqout.assemble(False, args, (546, 1208, ""), folders, b"b" * 5000) == expected
