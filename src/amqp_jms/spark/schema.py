"""The one row schema of the ``jms`` data source, and message ↔ row conversion.

Every read (batch, streaming) produces these columns, in this order; every write accepts any
subset of them. The schema is part of the public contract: columns are only ever added.

=================  ===============  ==========================================================
column             type             from the JMS message
=================  ===============  ==========================================================
message_id         STRING           JMSMessageID (``ID:…``)
correlation_id     STRING           JMSCorrelationID
destination        STRING           JMSDestination as ``queue://name`` / ``topic://name``
reply_to           STRING           JMSReplyTo, same form
jms_type           STRING           JMSType
delivery_mode      INT              JMSDeliveryMode: 1 non-persistent, 2 persistent
priority           INT              JMSPriority 0–9
redelivered        BOOLEAN          JMSRedelivered
delivery_count     INT              JMSXDeliveryCount (1 on first delivery)
timestamp          TIMESTAMP        JMSTimestamp (null when 0)
expiration         TIMESTAMP        JMSExpiration (null when the message never expires)
delivery_time      TIMESTAMP        JMSDeliveryTime (null when 0)
message_type       STRING           ``Text``, ``Bytes``, ``Map``, ``Stream``, ``Object``, ``Message``
text               STRING           TextMessage body
body               BINARY/STRING    BytesMessage body (STRING when ``bodyAs=string``, decoded as
                                    UTF-8); a Java-serialized ObjectMessage's raw bytes
map_body           STRING           MapMessage body as typed JSON (:mod:`.typed_json`)
stream_body        STRING           StreamMessage body as a typed JSON list
object_body        STRING           ObjectMessage body (AMQP-typed) as one typed JSON value
properties         MAP<STRING,      every property as its JMS String conversion
                   STRING>
typed_properties   STRING           every property as typed JSON, keeping its JMS type; VARIANT
                                    (an object, JMS types kept) with ``typedPropertiesAs=variant``
content_type       STRING           AMQP content-type (``JMS_AMQP_CONTENT_TYPE``)
group_id           STRING           JMSXGroupID
group_seq          LONG             JMSXGroupSeq
amqp               BINARY           the raw encoded AMQP message (only with ``includeAmqp=true``)
=================  ===============  ==========================================================

The conversion functions need the message model and the mapping; they import them lazily so that
this module (and the schema) can be loaded where only pyspark is present.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

__all__ = [
    "COLUMNS",
    "WRITE_COLUMNS",
    "arrow_schema",
    "jms_string",
    "message_to_values",
    "row_schema",
    "rows_to_batch",
]

#: (name, spark type name) in schema order; ``body`` switches type with ``bodyAs``.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("message_id", "string"),
    ("correlation_id", "string"),
    ("destination", "string"),
    ("reply_to", "string"),
    ("jms_type", "string"),
    ("delivery_mode", "int"),
    ("priority", "int"),
    ("redelivered", "boolean"),
    ("delivery_count", "int"),
    ("timestamp", "timestamp"),
    ("expiration", "timestamp"),
    ("delivery_time", "timestamp"),
    ("message_type", "string"),
    ("text", "string"),
    ("body", "binary"),
    ("map_body", "string"),
    ("stream_body", "string"),
    ("object_body", "string"),
    ("properties", "map<string,string>"),
    ("typed_properties", "string"),
    ("content_type", "string"),
    ("group_id", "string"),
    ("group_seq", "bigint"),
)
#: Columns a writer understands (the rest of a row is ignored, ``message_id`` included: the
#: producer assigns ids).
WRITE_COLUMNS = frozenset(name for name, _ in COLUMNS) - {"redelivered", "delivery_count"}

_NAMES = tuple(name for name, _ in COLUMNS)
_PROPERTIES = _NAMES.index("properties")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def row_schema(body_as: str = "binary", include_amqp: bool = False, typed_as: str = "json") -> Any:
    """The Spark ``StructType`` of a read (``typed_as``: the ``typedPropertiesAs`` option)."""
    from pyspark.sql.types import (
        BinaryType,
        BooleanType,
        IntegerType,
        LongType,
        MapType,
        StringType,
        StructType,
        TimestampType,
        VariantType,
    )

    types = {
        "string": StringType(),
        "int": IntegerType(),
        "bigint": LongType(),
        "boolean": BooleanType(),
        "timestamp": TimestampType(),
        "binary": BinaryType(),
        "map<string,string>": MapType(StringType(), StringType(), True),
        "variant": VariantType(),
    }
    fields = []
    for name, type_name in COLUMNS:
        if name == "body" and body_as == "string":
            type_name = "string"
        if name == "typed_properties" and typed_as == "variant":
            type_name = "variant"
        fields.append((name, type_name))
    if include_amqp:
        fields.append(("amqp", "binary"))
    struct = StructType()
    for name, type_name in fields:
        struct.add(name, types[type_name], nullable=True)
    return struct


def arrow_schema(body_as: str = "binary", include_amqp: bool = False, typed_as: str = "json") -> pa.Schema:
    """The Arrow schema Spark expects for record batches of :func:`row_schema` (UTC, microseconds;
    a VARIANT as PySpark carries it: a struct of ``value`` and ``metadata`` binaries)."""
    from .features import to_arrow_schema_utc

    return to_arrow_schema_utc(row_schema(body_as, include_amqp, typed_as))


def jms_string(value: Any) -> str | None:
    """A property value as JMS converts it to String (table 3.2): Java spelling of booleans."""
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


def message_to_values(message: Any, body_as: str = "binary") -> dict[str, Any]:
    """One JMS message as a dict of column values (times in epoch microseconds): the dict form
    of :func:`amqp_jms.spark.columns.message_row`, where the conversion lives."""
    from .columns import message_row
    from .typed_json import dumps_map

    values = dict(zip(_NAMES, message_row(message, body_as), strict=True))
    if values["typed_properties"] is not None:
        values["typed_properties"] = dumps_map(values["typed_properties"])
    if values["properties"] is not None:  # (names, strings) -> [(name, string), ...]
        values["properties"] = list(zip(*values["properties"], strict=True))
    return values


def rows_to_batch(rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    """Column dicts (from :func:`message_to_values`, ``amqp`` included when the schema has it)
    as one record batch of ``schema``."""
    from .columns import ColumnBuilder

    builder = ColumnBuilder(schema, "binary")
    raw: list[Any] = []
    for row in rows:
        values = [row.get(name) for name in _NAMES]
        props = values[_PROPERTIES]
        if props is not None:  # pairs (or a mapping) -> (names, strings)
            pairs = list(props.items()) if isinstance(props, Mapping) else list(props)
            values[_PROPERTIES] = ([k for k, _ in pairs], [v for _, v in pairs])
        builder.rows.append(tuple(values))
        raw.append(row.get("amqp"))
    amqp = pa.array(raw, type=pa.binary()) if "amqp" in schema.names else None
    return builder.batch(amqp)


def epoch_millis(value: Any) -> int:
    """A Spark TIMESTAMP cell (``datetime``) or a number as JMS epoch milliseconds (0 for null)."""
    if value is None:
        return 0
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.astimezone()  # Spark hands naive datetimes in the session's local zone
        return int((value - _EPOCH).total_seconds() * 1000)
    return int(value)


def _infer_type(row: Mapping[str, Any], forced: str | None) -> str:
    if forced:
        return forced
    declared = row.get("message_type")
    if declared:
        return str(declared)
    for column, kind in (("text", "Text"), ("body", "Bytes"), ("map_body", "Map"), ("stream_body", "Stream")):
        if row.get(column) is not None:
            return kind
    if row.get("object_body") is not None:
        return "Object"
    return "Message"


def values_to_message(row: Mapping[str, Any], message_type: str | None = None) -> Any:
    """Build the JMS message a row describes (the inverse of :func:`message_to_values`).

    ``text`` makes a TextMessage, ``body`` a BytesMessage, ``map_body`` a MapMessage,
    ``stream_body`` a StreamMessage, ``object_body`` an ObjectMessage; ``message_type`` (the
    column, or the ``messageType`` option passed here) overrides the inference. Headers the
    producer owns (id, timestamp, destination, expiration, delivery mode, priority) are not set
    here: the writer passes them to ``send``.
    """
    import json

    from ..destination import parse_destination
    from ..exceptions import MessageFormatException
    from ..message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
    from .typed_json import from_typed, loads_list, loads_map

    kind = _infer_type(row, message_type)
    msg: Any
    if kind == "Text":
        msg = TextMessage(row.get("text"))
    elif kind == "Bytes":
        msg = BytesMessage()
        body = row.get("body")
        if body is not None:
            msg.write_bytes(body.encode("utf-8") if isinstance(body, str) else bytes(body))
    elif kind == "Map":
        msg = MapMessage()
        if row.get("map_body") is not None:
            for name, value in loads_map(row["map_body"]).items():
                msg.set_object(name, value)
    elif kind == "Stream":
        msg = StreamMessage()
        if row.get("stream_body") is not None:
            for value in loads_list(row["stream_body"]):
                msg.write_object(value)
    elif kind == "Object":
        msg = ObjectMessage()
        if row.get("object_body") is not None:
            try:
                msg.set_object(from_typed(json.loads(row["object_body"])))
            except ValueError as exc:
                raise MessageFormatException(f"column 'object_body' is not typed JSON: {exc}") from None
    elif kind == "Message":
        msg = Message()
    else:
        raise MessageFormatException(
            f"message_type {kind!r} is not one of Text, Bytes, Map, Stream, Object, Message"
        )
    if row.get("correlation_id") is not None:
        msg.set_jms_correlation_id(row["correlation_id"])
    if row.get("jms_type") is not None:
        msg.set_jms_type(row["jms_type"])
    if row.get("reply_to") is not None:
        msg.set_jms_reply_to(parse_destination(row["reply_to"]))
    props = row.get("properties")
    if props:
        items = props.items() if isinstance(props, Mapping) else props
        for name, value in items:
            if value is not None:
                msg.set_string_property(name, value)
    typed = row.get("typed_properties")
    if typed:
        if isinstance(typed, str):
            typed_props = loads_map(typed)
        else:  # a VARIANT column (typedPropertiesAs=variant, or parse_json): VariantVal
            from .variant import decode_properties

            typed_props = decode_properties(typed.value, typed.metadata)
        for name, value in typed_props.items():
            msg.set_object_property(name, value)
    if row.get("group_id") is not None:
        msg.set_string_property("JMSXGroupID", row["group_id"])
    if row.get("group_seq") is not None:
        from ..types import Int

        msg.set_object_property("JMSXGroupSeq", Int(int(row["group_seq"])))
    if row.get("content_type") is not None:
        msg.set_string_property("JMS_AMQP_CONTENT_TYPE", row["content_type"])
    return msg
