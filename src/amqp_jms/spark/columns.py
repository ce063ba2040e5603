"""Messages straight into Arrow columns: the executors' half of every read.

Why: a task used to decode each message into a JMS message, copy it into a dict of column
values, collect the dicts as rows and let pyarrow infer columns from them (and a write-ahead
segment was first turned into a Python list with ``to_pylist``). That cost three times the
decode itself (36k msg/s per core for 200-byte text messages). Here each message is decoded
once (:func:`amqp_jms.mapping.decode`: one ``decode_sections`` call, the part a C decoder
speeds up, then the mapping's rules, which live there and only there), its values are appended
to one list per column, and each column becomes one Arrow array per batch: the properties map
from flat key/value lists and offsets, the ``amqp`` column as a zero-copy slice of the segment.

:func:`message_row` is the one home of "which message field goes in which column, as what";
:func:`amqp_jms.spark.schema.message_to_values` is its dict form.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import islice
from typing import Any

import pyarrow as pa

from ..message import Message
from ..message._data import BodyKind, view
from .schema import COLUMNS, jms_string
from .typed_json import dumps_list, dumps_map, to_typed

__all__ = ["BATCH_ROWS", "ColumnBuilder", "message_batches", "message_row", "segment_batches"]

#: Rows per Arrow record batch handed to Spark.
BATCH_ROWS = 4096

_NAMES = tuple(name for name, _ in COLUMNS)
_BINARY = (bytes, bytearray)
_TIMESTAMPS = frozenset({"timestamp", "expiration", "delivery_time"})

#: str() of a destination, by destination (a stream carries a handful of them)
_DEST_NAMES: dict[Any, str] = {}
#: message class -> ``message_type`` column value
#: the ``kind`` column of each ``MessageData.kind``
_KIND_NAMES = {
    BodyKind.MESSAGE: "Message",
    BodyKind.TEXT: "Text",
    BodyKind.BYTES: "Bytes",
    BodyKind.MAP: "Map",
    BodyKind.STREAM: "Stream",
    BodyKind.OBJECT: "Object",
}
#: property value type -> its JMS String conversion, learnt for the types whose conversion is
#: ``int.__repr__`` (every integral JMS type); the others go through :func:`_property_string`
_STRING_OF: dict[type, Any] = {}


def _dest(value: Any) -> str | None:
    if value is None:
        return None
    try:
        name = _DEST_NAMES.get(value)
    except TypeError:  # unhashable: never cached
        return str(value)
    if name is None:
        name = str(value)
        if len(_DEST_NAMES) >= 1024:
            _DEST_NAMES.clear()
        _DEST_NAMES[value] = name
    return name


def _property_string(value: Any) -> str | None:
    """The JMS String conversion (table 3.2, Java spelling of numbers) of one property value;
    a type JMS cannot convert to String (an AMQP extra such as binary) falls back to
    :func:`~amqp_jms.spark.schema.jms_string`."""
    kind = type(value)
    from ..message import _conversions as cv

    try:
        text = cv.read_as_string(value, ("property", "?"))
    except Exception:
        return jms_string(value)
    if text is not None and kind is not bool and isinstance(value, int) and text == int.__repr__(value):
        _STRING_OF[kind] = int.__repr__  # integral: the same conversion for every value
    return None if text is None else str(text)


def _body(data: Any, body_as: str) -> bytes | str | None:
    if data is None:
        return None
    if body_as == "string":
        return bytes(data).decode("utf-8", errors="replace")
    return bytes(data)


def message_row(message: Message, body_as: str = "binary") -> tuple[Any, ...]:
    """One JMS message as its column values in :data:`~amqp_jms.spark.schema.COLUMNS` order
    (times in epoch microseconds, ``properties`` as a ``(names, strings)`` pair of lists, or
    None; ``typed_properties`` as the property dict, which :class:`ColumnBuilder` writes as
    typed JSON or as a VARIANT, as the schema asks).

    Reads the message's ``MessageData`` (``view``: uncopied), not the public getters: this runs
    once per message in the executors, and the getters' checks (read-only state, conversions)
    cost more than the rest.
    """
    data = view(message)
    correlation = data.correlation_id
    if (
        type(correlation) is not str
        and correlation is not None
        and isinstance(correlation, bytes | bytearray)
    ):
        correlation = message.get_jms_correlation_id()
    props = data.properties
    if props:
        get = props.get
        count = get("JMSXDeliveryCount")
        content_type = get("JMS_AMQP_CONTENT_TYPE")
        group = get("JMSXGroupID")
        seq = get("JMSXGroupSeq")
        pairs: tuple[list[str], list[str | None]] | None = (
            list(props),
            [
                v if type(v) is str or v is None else _STRING_OF.get(type(v), _property_string)(v)
                for v in props.values()
            ],
        )
        typed: Mapping[str, Any] | None = props  # typed JSON or a VARIANT: the builder decides
        delivery_count = None if count is None else int(count)
        content = None if content_type is None else str(content_type)
        group_id = None if group is None else str(group)
        group_seq = None if seq is None else int(seq)
    else:
        pairs = typed = None
        delivery_count = content = group_id = group_seq = None
    text = body = map_body = stream_body = object_body = None
    kind = _KIND_NAMES[data.kind]
    if kind == "Text":
        text = data.body
    elif kind == "Bytes":
        body = _body(data.body, body_as)
    elif kind == "Map":
        map_body = dumps_map(data.body)
    elif kind == "Stream":
        stream_body = dumps_list(data.body)
    elif kind == "Object":
        value = data.body
        raw = getattr(value, "data", None)
        if type(value).__name__ == "JavaSerializedObject" and isinstance(raw, bytes | bytearray):
            body = _body(bytes(raw), body_as)
        else:
            import json

            object_body = json.dumps(to_typed(value), separators=(",", ":"))
    timestamp = data.timestamp
    expiration = data.expiration
    delivery_time = data.delivery_time
    return (
        data.message_id,
        correlation,
        _dest(data.destination),
        _dest(data.reply_to),
        data.type,
        data.delivery_mode,
        data.priority,
        data.redelivered,
        delivery_count,
        int(timestamp) * 1000 if timestamp else None,
        int(expiration) * 1000 if expiration else None,
        int(delivery_time) * 1000 if delivery_time else None,
        kind,
        text,
        body,
        map_body,
        stream_body,
        object_body,
        pairs,
        typed,
        content,
        group_id,
        group_seq,
    )


class ColumnBuilder:
    """Rows of one record batch, kept as one tuple per message until :meth:`batch` turns them
    into columns (a transpose in C, then one Arrow array per column)."""

    def __init__(self, schema: pa.Schema, body_as: str) -> None:
        self.schema = schema
        self.body_as = body_as
        self.rows: list[tuple[Any, ...]] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, message: Any) -> None:
        self.rows.append(message_row(message, self.body_as))

    def batch(self, amqp: pa.Array | None = None) -> pa.RecordBatch:
        """The rows added so far as a record batch of ``schema`` (``amqp``: the raw messages,
        when the schema has that column); the builder is empty again afterwards."""
        rows, self.rows = self.rows, []
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(_NAMES)
        arrays: list[pa.Array] = []
        for field, values in zip(self.schema, columns, strict=False):
            name = field.name
            if name in _TIMESTAMPS:  # microseconds as int64, viewed as the timestamp type
                arrays.append(pa.array(values, type=pa.int64()).view(field.type))
            elif name == "properties":
                arrays.append(_map_array(values, field.type))
            elif name == "typed_properties":
                arrays.append(_typed_array(values, field.type))
            else:
                arrays.append(pa.array(values, type=field.type))
        if len(self.schema) > len(_NAMES):
            arrays.append(amqp if amqp is not None else pa.nulls(len(rows), pa.binary()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _typed_array(values: Iterable[Mapping[str, Any] | str | None], arrow_type: pa.DataType) -> pa.Array:
    """``typed_properties``: typed JSON text (STRING), or a variant object (``typedPropertiesAs=
    variant``: a struct of ``value`` and ``metadata``, :mod:`.variant`). A value may be the
    property dict or already typed JSON (rows built from column dicts)."""
    if not pa.types.is_struct(arrow_type):
        return pa.array(
            [v if v is None or isinstance(v, str) else dumps_map(v) for v in values], type=arrow_type
        )
    from .typed_json import loads_map
    from .variant import encode_properties

    data: list[bytes | None] = []
    meta: list[bytes | None] = []
    nulls: list[bool] = []
    for v in values:
        if v is None:
            data.append(b"")
            meta.append(b"")
            nulls.append(True)
            continue
        value, metadata = encode_properties(loads_map(v) if isinstance(v, str) else v)
        data.append(value)
        meta.append(metadata)
        nulls.append(False)
    return pa.StructArray.from_arrays(
        [pa.array(data, type=pa.binary()), pa.array(meta, type=pa.binary())],
        fields=list(arrow_type),
        mask=pa.array(nulls, type=pa.bool_()) if any(nulls) else None,
    )


def _map_array(
    values: Iterable[tuple[list[str], list[str | None]] | None], map_type: pa.DataType
) -> pa.Array:
    """``MAP<STRING,STRING>`` from one ``(names, strings)`` pair (or None) per row, through flat
    key/value lists and offsets (pyarrow's inference from pairs costs several times more)."""
    keys: list[str] = []
    items: list[str | None] = []
    offsets = [0]
    nulls: list[bool] = []
    for pair in values:
        if pair is None:
            nulls.append(True)
        else:
            nulls.append(False)
            keys.extend(pair[0])
            items.extend(pair[1])
        offsets.append(len(keys))
    return pa.MapArray.from_arrays(
        pa.array(offsets, type=pa.int32()),
        pa.array(keys, type=map_type.key_type),
        pa.array(items, type=map_type.item_type),
        type=map_type,
        mask=pa.array(nulls, type=pa.bool_()) if any(nulls) else None,
    )


def message_batches(
    messages: Iterable[Any], schema: pa.Schema, body_as: str, include_amqp: bool
) -> Iterator[pa.RecordBatch]:
    """Messages (received or built) as record batches of ``schema``; with ``include_amqp`` the
    ``amqp`` column holds each message's bytes (re-encoded: these did not come from a log)."""
    from ._client import raw_bytes

    builder = ColumnBuilder(schema, body_as)
    raw: list[bytes] = []
    for message in messages:
        builder.add(message)
        if include_amqp:
            raw.append(raw_bytes(message))
        if len(builder) >= BATCH_ROWS:
            yield builder.batch(pa.array(raw, type=pa.binary()) if include_amqp else None)
            raw = []
    if len(builder):
        yield builder.batch(pa.array(raw, type=pa.binary()) if include_amqp else None)


def segment_batches(
    encoded: pa.Array, schema: pa.Schema, body_as: str, include_amqp: bool
) -> Iterator[pa.RecordBatch]:
    """A write-ahead segment's encoded messages as record batches: each message decoded once,
    the ``amqp`` column a slice of ``encoded`` itself."""
    from ._client import decoder, unreadable_errors

    decode = decoder()
    unreadable = unreadable_errors()
    builder = ColumnBuilder(schema, body_as)
    messages = _buffers(encoded)
    for start in range(0, len(encoded), BATCH_ROWS):
        with _no_gc():
            add = builder.rows.append
            for data in islice(messages, BATCH_ROWS):
                try:
                    message = decode(data)
                except unreadable as exc:
                    add(_unreadable_body_row(decode, data, exc, body_as))
                    continue
                add(message_row(message, body_as))
            del add  # it holds the rows' list: they must be garbage once the batch is built
            batch = builder.batch(encoded.slice(start, BATCH_ROWS) if include_amqp else None)
        yield batch


def _unreadable_body_row(decode: Any, data: bytes, exc: BaseException, body_as: str) -> tuple[Any, ...]:
    """The row of a logged message whose body does not decode (text bytes not in their charset,
    a map body with a key that is not a string …): the driver vets headers and properties only,
    so such a message is accepted and in the log. It is not dropped: its row has every header
    and property column, ``message_type`` and the body columns null (``includeAmqp`` keeps its
    bytes), and a WARNING names it."""
    import logging

    row = list(message_row(decode(data, body=False), body_as))  # headers: vetted on the driver
    row[_NAMES.index("message_type")] = None
    logging.getLogger(__name__).warning(
        "jms data source: message %s has a body that cannot be read (%s); its row has null "
        "message_type and body columns",
        row[0],
        exc,
    )
    return tuple(row)


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector off while one batch is built (as ``pickle`` loaders do).
    Why: every row is a few new containers, so the collector ran over the growing batch again
    and again (a fifth of the conversion time); the rows hold no cycles, and it is on again
    (if it was) before the batch leaves."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _buffers(array: pa.Array) -> Iterator[bytes]:
    """The values of a binary array as ``bytes``, sliced from one copy of its data buffer (no
    Python list of the whole segment)."""
    if array.null_count:
        raise ValueError("jms data source: a write-ahead segment holds a null message")
    if not len(array):
        return
    offsets_buffer, data_buffer = array.buffers()[1:3]
    view = memoryview(offsets_buffer)
    whole = view.cast("q") if pa.types.is_large_binary(array.type) else view.cast("i")
    offsets = whole[array.offset : array.offset + len(array) + 1]
    data = data_buffer.to_pybytes() if data_buffer is not None else b""
    begin = offsets[0]
    for end in offsets[1:]:
        yield data[begin:end]
        begin = end
