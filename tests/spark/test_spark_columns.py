"""Decode once (issue 20): the columnar conversion gives exactly the columns of the old path.

The old path (decode, ``message_to_values`` into a dict, rows into pyarrow) is kept here,
frozen as it was before the change, and both run over generated messages: every body type,
every property type, AMQP extras, legacy and odd forms a non-JMS producer sends. The batches
must be equal, column by column (types, nulls and map order included).
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqp_jms.destination import Queue, TemporaryQueue, Topic
from amqp_jms.mapping import decode, encode
from amqp_jms.mapping.codec import (
    AMQP_SEQUENCE,
    AMQP_VALUE,
    DATA,
    Header,
    Properties,
    encode_sections,
)
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.message._javaser import JavaSerializedObject
from amqp_jms.spark.columns import BATCH_ROWS, segment_batches
from amqp_jms.spark.schema import arrow_schema, message_to_values
from amqp_jms.spark.stream import decode_segment
from amqp_jms.spark.wal import WriteAheadLog
from amqp_jms.testing.messages import with_fields
from amqp_jms.types import (
    Byte,
    Char,
    Decimal32,
    Described,
    Double,
    Float,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
)

# -- the old path, as it was (1afec70: spark/schema.py message_to_values + rows_to_batch) --------

_KINDS: dict[type, str] = {}


def _old_kind(message: Any) -> str:
    for base, name in (
        (TextMessage, "Text"),
        (BytesMessage, "Bytes"),
        (MapMessage, "Map"),
        (StreamMessage, "Stream"),
        (ObjectMessage, "Object"),
    ):
        if isinstance(message, base):
            return name
    return "Message"


def _old_jms_string(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, int):
        return int.__repr__(value)
    return str.__str__(value) if isinstance(value, str) else str(value)


def _old_property_string(message: Any, name: str, value: Any) -> str | None:
    if type(value) is str or value is None:
        return value
    try:
        text = message.get_string_property(name)
        return None if text is None else str(text)
    except Exception:
        return _old_jms_string(value)


def _old_body(data: bytes | None, body_as: str) -> bytes | str | None:
    if data is None:
        return None
    if body_as == "string":
        return bytes(data).decode("utf-8", errors="replace")
    return bytes(data)


def _old_values(message: Any, body_as: str) -> dict[str, Any]:
    from amqp_jms.spark.typed_json import _dump_one, _quote, dumps_list, to_typed

    def dumps_map(values: dict[str, Any]) -> str:  # typed_json.dumps_map as it was
        return "{" + ",".join(_quote(str(k)) + ":" + _dump_one(v) for k, v in values.items()) + "}"

    def millis(value: int | None) -> int | None:
        return int(value) * 1000 if value else None

    def dest(value: Any) -> str | None:
        return None if value is None else str(value)

    correlation = view(message).correlation_id
    if isinstance(correlation, bytes | bytearray):
        correlation = message.get_jms_correlation_id()
    props = view(message).properties
    out: dict[str, Any] = {
        "message_id": view(message).message_id,
        "correlation_id": correlation,
        "destination": dest(view(message).destination),
        "reply_to": dest(view(message).reply_to),
        "jms_type": view(message).type,
        "delivery_mode": view(message).delivery_mode,
        "priority": view(message).priority,
        "redelivered": view(message).redelivered,
        "timestamp": millis(view(message).timestamp),
        "expiration": millis(view(message).expiration),
        "delivery_time": millis(view(message).delivery_time),
    }
    if props:
        count = props.get("JMSXDeliveryCount")
        out["delivery_count"] = None if count is None else int(count)
        content_type = props.get("JMS_AMQP_CONTENT_TYPE")
        out["content_type"] = None if content_type is None else str(content_type)
        group = props.get("JMSXGroupID")
        out["group_id"] = None if group is None else str(group)
        seq = props.get("JMSXGroupSeq")
        out["group_seq"] = None if seq is None else int(seq)
        out["properties"] = [(k, _old_property_string(message, k, v)) for k, v in props.items()]
        out["typed_properties"] = dumps_map(props)
    kind = _old_kind(message)
    out["message_type"] = kind
    if kind == "Text":
        out["text"] = view(message).body
    elif kind == "Bytes":
        out["body"] = _old_body(view(message).body, body_as)
    elif kind == "Map":
        out["map_body"] = dumps_map(view(message).body)
    elif kind == "Stream":
        out["stream_body"] = dumps_list(view(message).body)
    elif kind == "Object":
        value = view(message).body
        raw = getattr(value, "data", None)
        if type(value).__name__ == "JavaSerializedObject" and isinstance(raw, bytes | bytearray):
            out["body"] = _old_body(bytes(raw), body_as)
        else:
            out["object_body"] = json.dumps(to_typed(value), separators=(",", ":"))
    return out


def _old_batch(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    names = schema.names
    columns: dict[str, list[Any]] = {name: [] for name in names}
    for row in rows:
        for name in names:
            columns[name].append(row.get(name))
    arrays = []
    for field in schema:
        values = columns[field.name]
        if field.name in ("timestamp", "expiration", "delivery_time"):
            arrays.append(pa.array(values, type=pa.int64()).cast(field.type))
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _old_segment(encoded: list[bytes], body_as: str, include_amqp: bool) -> list[pa.RecordBatch]:
    schema = arrow_schema(body_as, include_amqp)
    out = []
    for start in range(0, len(encoded), BATCH_ROWS):
        rows = []
        for data in encoded[start : start + BATCH_ROWS]:
            values = _old_values(decode(bytes(data)), body_as)
            if include_amqp:
                values["amqp"] = data
            rows.append(values)
        out.append(_old_batch(rows, schema))
    return out


# -- generated messages ------------------------------------------------------------------------


def _sent(message: Message, n: int) -> bytes:
    """As a JMS producer sends it (ids, destination, timestamp set)."""
    message.set_jms_message_id(f"ID:gen:{n}")
    message.set_jms_destination(Queue("q") if n % 3 else Topic("t"))
    message.set_jms_timestamp(1_700_000_000_000 + n)
    return bytes(encode(message))


def _jms_messages() -> Iterator[bytes]:
    props: list[tuple[str, Any]] = [
        ("s", "text"),
        ("e", ""),
        ("b", Byte(-5)),
        ("sh", Short(300)),
        ("i", Int(-70000)),
        ("l", 2**40),
        ("L", Long(-(2**50))),
        ("f", Float(1.5)),
        ("f2", Float(0.1)),
        ("d", 0.1),
        ("D", Double(1e300)),
        ("nan", float("nan")),
        ("inf", Float(float("-inf"))),
        ("t", True),
        ("fa", False),
        ("u", "ünï\u20ac\U0001f600"),
    ]
    n = 0
    for name, value in props:
        m = TextMessage(f"carries {name}")
        m.set_object_property(name, value)
        n += 1
        yield _sent(m, n)
    full = TextMessage("all")
    for name, value in props:
        full.set_object_property(name, value)
    full.set_jms_correlation_id("corr-1")
    full.set_jms_type("order")
    full.set_jms_reply_to(Topic("replies"))
    full.set_string_property("JMSXGroupID", "g1")
    full.set_int_property("JMSXGroupSeq", 7)
    full.set_jms_expiration(1_800_000_000_000)
    full.set_jms_delivery_time(1_700_000_000_999)
    full.set_jms_priority(9)
    full.set_jms_delivery_mode(1)
    yield _sent(full, 100)
    binary_corr = BytesMessage()
    binary_corr.set_jms_correlation_id_as_bytes(b"\x00\x01\xfe")
    binary_corr.write_bytes(bytes(range(256)))
    yield _sent(binary_corr, 101)
    empty_bytes = BytesMessage()
    yield _sent(empty_bytes, 102)
    mapped = MapMessage()
    for name, value in props:
        mapped.set_object(name, value)
    mapped.set_char("c", "x")
    mapped.set_bytes("raw", b"\x00\x01")
    yield _sent(mapped, 103)
    yield _sent(MapMessage(), 104)
    stream = StreamMessage()
    for _, value in props:
        stream.write_object(value)
    stream.write_char("y")
    stream.write_bytes(b"\xff")
    stream.write_object(None)
    yield _sent(stream, 105)
    yield _sent(StreamMessage(), 106)
    for obj in ([1, "two", 3.0], {"k": [1, 2]}, None, "plain", JavaSerializedObject(b"\xac\xed\x00\x05tx")):
        om = ObjectMessage()
        om = with_fields(om, body=obj)
        n += 1
        yield _sent(om, 200 + n)
    yield _sent(Message(), 300)
    yield _sent(TextMessage(None), 301)
    temp = TextMessage("to a temporary queue")
    temp.set_jms_reply_to(TemporaryQueue("tmp-1"))
    yield _sent(temp, 302)


def _raw_messages() -> Iterator[bytes]:
    """What non-JMS producers send: no annotations, legacy annotations, AMQP-only types."""
    base = Properties(message_id="m-1", to="orders", creation_time=Timestamp(1_700_000_000_500))
    # no header, no annotations: the body type decides the message class
    yield encode_sections(properties=base, body_type=AMQP_VALUE, body="plain text")
    yield encode_sections(properties=base, body_type=AMQP_VALUE, body=b"\x01\x02")
    yield encode_sections(properties=base, body_type=AMQP_VALUE, body={"k": Int(1)})
    yield encode_sections(properties=base, body_type=AMQP_SEQUENCE, body=[[1, 2], ["three"]])
    yield encode_sections(properties=base, body_type=DATA, body=[b"part one ", b"part two"])
    yield encode_sections(body_type=AMQP_VALUE, body=None)
    yield encode_sections()  # nothing at all
    # data with textual content types and charsets, Java serialized
    for content_type in (
        "text/plain",
        "text/plain; charset=iso-8859-1",
        "application/json",
        "application/x-java-serialized-object",
        "image/png",
    ):
        props = base._replace(content_type=Symbol(content_type), content_encoding=Symbol("gzip"))
        yield encode_sections(
            properties=props,
            body_type=DATA,
            body=["caf\u00e9".encode("latin-1" if "8859" in content_type else "utf-8")],
        )
    # ids of every AMQP type, binary correlation, the app-specific correlation annotation
    for message_id in (
        ULong(42),
        uuid.UUID(int=7),
        b"\x00\xab",
        "ID:AMQP_NO_PREFIX:x",
        "ID:AMQP_ULONG:3",
        "no-prefix",
    ):
        yield encode_sections(
            properties=base._replace(message_id=message_id, correlation_id=message_id),
            body_type=AMQP_VALUE,
            body="x",
        )
    yield encode_sections(
        message_annotations={Symbol("x-opt-app-correlation-id"): True},
        properties=base._replace(correlation_id="app-corr"),
        body_type=AMQP_VALUE,
        body="x",
    )
    # headers: redelivered (delivery count), priorities over 9, first acquirer, ttl with an absolute expiry
    for header in (
        Header(durable=True, priority=7, delivery_count=3),
        Header(priority=200, first_acquirer=True, delivery_count=40),
        Header(ttl=5000),
    ):
        yield encode_sections(
            header=header,
            properties=base._replace(absolute_expiry_time=Timestamp(1_900_000_000_000)),
            body_type=AMQP_VALUE,
            body="h",
        )
    # legacy destination type annotations (string form), reply-to, subject and the legacy JMS type
    for to_type, reply_type in (("queue", "topic"), ("topic,temporary", "queue,temporary"), ("", "")):
        yield encode_sections(
            message_annotations={
                Symbol("x-opt-to-type"): to_type,
                Symbol("x-opt-reply-type"): reply_type,
                Symbol("x-opt-jms-type"): "legacy-type",
                Symbol("x-opt-delivery-time"): Timestamp(1_700_000_001_000),
                Symbol("x-custom"): "kept",
            },
            properties=base._replace(reply_to="replies", subject="subject-type"),
            body_type=AMQP_VALUE,
            body="legacy",
        )
    # user id, group fields (sequence past Java's int), reply-to group
    yield encode_sections(
        properties=base._replace(
            user_id=b"alice", group_id="grp", group_sequence=UInt(2**32 - 2), reply_to_group_id="rg"
        ),
        application_properties={
            "ub": UByte(200),
            "us": UShort(60000),
            "ui": UInt(2**32 - 1),
            "ul": ULong(2**64 - 1),
            "ts": Timestamp(1_700_000_000_000),
            "sym": Symbol("a-symbol"),
            "ch": Char("z"),
            "bin": b"\x00\xff",
            "uuid": uuid.UUID(int=99),
            "dec": Decimal32(b"\x00\x00\x00\x01"),
            "null": None,
            "JMSXDeliveryCount": Int(9),  # overwritten by the header's count, in place
        },
        body_type=AMQP_VALUE,
        body="typed extras",
    )
    # delivery annotations and a footer (kept aside, not columns)
    yield encode_sections(
        delivery_annotations={Symbol("x-da"): 1},
        properties=base,
        body_type=AMQP_VALUE,
        body=Described(Symbol("x:d"), "described body"),
        footer={Symbol("x-f"): "f"},
    )


def _all_messages() -> list[bytes]:
    return list(_jms_messages()) + list(_raw_messages())


def _assert_same(old: list[pa.RecordBatch], new: list[pa.RecordBatch]) -> None:
    assert [b.num_rows for b in old] == [b.num_rows for b in new]
    for a, b in zip(old, new, strict=True):
        assert a.schema == b.schema
        for name in a.schema.names:
            left, right = a.column(name).to_pylist(), b.column(name).to_pylist()
            diff = [(i, x, y) for i, (x, y) in enumerate(zip(left, right, strict=True)) if repr(x) != repr(y)]
            assert not diff, (name, diff[:3])


@pytest.mark.parametrize(("body_as", "include_amqp"), [("binary", False), ("string", True)])
def test_columns_equal_the_old_path_for_every_body_and_property_type(
    body_as: str, include_amqp: bool
) -> None:
    encoded = _all_messages()
    old = _old_segment(encoded, body_as, include_amqp)
    new = list(
        segment_batches(
            pa.array(encoded, type=pa.binary()), arrow_schema(body_as, include_amqp), body_as, include_amqp
        )
    )
    _assert_same(old, new)
    # and they are what a user relies on, not only equal to each other
    rows = new[0].to_pylist()
    by_id = {row["message_id"]: row for row in rows}
    assert by_id["ID:gen:100"]["priority"] == 9 and by_id["ID:gen:100"]["delivery_mode"] == 1
    assert by_id["ID:gen:100"]["expiration"] == datetime.datetime(2027, 1, 15, 8, 0, tzinfo=datetime.UTC)
    assert dict(by_id["ID:gen:100"]["properties"])["f2"] == "0.1"  # Java's spelling of the float
    assert by_id["ID:gen:101"]["correlation_id"] == "ID:AMQP_BINARY:0001FE"


def test_segments_larger_than_a_batch_and_the_log_round_trip(tmp_path: Any) -> None:
    """Several record batches per segment, read through the write-ahead log as the executors do."""
    encoded = _all_messages() * (2 * BATCH_ROWS // len(_all_messages()) + 1)
    WriteAheadLog(str(tmp_path)).append(encoded)
    new = list(decode_segment(str(tmp_path), 1, "binary", True))
    assert len(new) == 3 and sum(b.num_rows for b in new) == len(encoded)
    _assert_same(_old_segment(encoded, "binary", True), new)
    assert new[1].column("amqp").to_pylist() == encoded[BATCH_ROWS : 2 * BATCH_ROWS]


def test_message_to_values_is_the_row_as_a_dict() -> None:
    for data in _all_messages():
        message = decode(data)
        new = message_to_values(message)
        old = _old_values(message, "binary")
        assert {k: v for k, v in new.items() if v is not None} == {
            k: v for k, v in old.items() if v is not None
        }


_SIMPLE = st.one_of(
    st.text(max_size=8),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-128, 127).map(Byte),
    st.integers(-(2**15), 2**15 - 1).map(Short),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.floats(width=32).map(Float),
    st.floats(),
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"p_[a-z0-9_]{0,6}", fullmatch=True), _SIMPLE, max_size=6))
def test_any_property_map_gives_the_same_columns(props: dict[str, Any]) -> None:
    m = MapMessage()
    for name, value in props.items():
        m.set_object_property(name, value)
        m.set_object(name, value)
    encoded = [_sent(m, 1)]
    old = _old_segment(encoded, "binary", False)
    new = list(segment_batches(pa.array(encoded, type=pa.binary()), arrow_schema(), "binary", False))
    _assert_same(old, new)
