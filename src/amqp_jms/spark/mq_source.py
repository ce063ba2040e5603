"""``spark.read.format("jms-mq-dump")``: IBM MQ queue dumps (or raw MQMD + data files) as JMS rows.

The migration pipeline is MQ dump -> Spark -> AMQP destination: this source reads IBM
``dmpmqmsg`` files, or files each holding one MQMD followed by its data, maps every message
through ``amqp_jms.mq.from_mq`` (IBM's JMS view of it) and yields the same row schema as the
``jms`` source (``amqp_jms.spark.schema``), so ``df.write.format("jms")`` can send the result on.

Options: ``path`` (a file, a directory or a glob; ``load(path)`` sets it), ``fileFormat``
(``auto`` — sniffed from the first bytes —, ``dump`` or ``raw``), ``bodyAs`` (``binary`` or
``string``), ``includeAmqp`` (``true`` adds the ``amqp`` column: the message as the AMQP JMS
mapping encodes it). One partition per file. Register with :func:`register_mq`.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

__all__ = ["MQDumpDataSource", "MQDumpOptions", "MQDumpReader", "MQFilePartition", "register_mq"]

_FORMATS = ("auto", "dump", "raw")
_ARROW = {
    "string": pa.string(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "map<string,string>": pa.map_(pa.string(), pa.string()),
}


def _columns(body_as: str, include_amqp: bool) -> list[tuple[str, str]]:
    """The ``jms`` source's columns (``amqp_jms.spark.schema.COLUMNS``) with this read's options."""
    from .schema import COLUMNS

    cols = [(n, "string" if n == "body" and body_as == "string" else t) for n, t in COLUMNS]
    return [*cols, ("amqp", "binary")] if include_amqp else cols


def ddl_schema(body_as: str = "binary", include_amqp: bool = False) -> str:
    """The row schema as a DDL string: it needs no SparkContext, which Spark's planner and executor
    Python workers do not have."""
    return ", ".join(f"`{n}` {t}" for n, t in _columns(body_as, include_amqp))


def arrow_row_schema(body_as: str = "binary", include_amqp: bool = False) -> pa.Schema:
    return pa.schema([(n, _ARROW[t]) for n, t in _columns(body_as, include_amqp)])


@dataclass(frozen=True)
class MQDumpOptions:
    path: str
    file_format: str = "auto"
    body_as: str = "binary"
    include_amqp: bool = False


def parse_mq_options(options: Mapping[str, str]) -> MQDumpOptions:
    opts = {k.lower(): v for k, v in options.items()}
    path = opts.get("path")
    if not path:
        raise ValueError(
            'jms-mq-dump: give the dump file, directory or glob with load(path) or option("path")'
        )
    file_format = opts.get("fileformat", "auto").lower()
    if file_format not in _FORMATS:
        raise ValueError(f"jms-mq-dump: fileFormat {file_format!r} is not one of {', '.join(_FORMATS)}")
    body_as = opts.get("bodyas", "binary").lower()
    if body_as not in ("binary", "string"):
        raise ValueError(f"jms-mq-dump: bodyAs {body_as!r} is not binary or string")
    include = opts.get("includeamqp", "false").lower()
    if include not in ("true", "false"):
        raise ValueError(f"jms-mq-dump: includeAmqp {include!r} is not true or false")
    return MQDumpOptions(path, file_format, body_as, include == "true")


@dataclass(frozen=True)
class MQFilePartition(InputPartition):
    """One input file."""

    path: str


def _files(path: str) -> list[str]:
    if os.path.isdir(path):
        return sorted(
            os.path.join(path, n)
            for n in os.listdir(path)
            if not n.startswith((".", "_")) and os.path.isfile(os.path.join(path, n))
        )
    if any(c in path for c in "*?["):
        return sorted(p for p in glob.glob(path) if os.path.isfile(p))
    if os.path.isfile(path):
        return [path]
    raise FileNotFoundError(f"jms-mq-dump: no such file or directory: {path}")


def read_mq_file(path: str, file_format: str = "auto") -> Iterator[tuple[Any, bytes]]:
    """``(MQMD, data)`` pairs of one file: a dmpmqmsg dump, or one raw MQMD + data message."""
    from ..mq import MQMessage, iter_dump

    with open(path, "rb") as fp:
        head = fp.read(4)
        if file_format == "raw" or (file_format == "auto" and head == b"MD  "):
            mq = MQMessage.from_bytes(head + fp.read())
            yield mq.md, mq.data
            return
    with open(path, encoding="utf-8", errors="strict") as text:
        yield from iter_dump(text)


class MQDumpReader(DataSourceReader):
    def __init__(self, options: MQDumpOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        return [MQFilePartition(p) for p in _files(self.options.path)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from ..mq import MQFormatError, from_mq
        from .columns import message_batches

        assert isinstance(partition, MQFilePartition)
        opts = self.options
        schema = arrow_row_schema(opts.body_as, opts.include_amqp)
        counted = [0]

        def messages() -> Iterator[Any]:
            for md, data in read_mq_file(partition.path, opts.file_format):
                counted[0] += 1
                yield from_mq(md, data)

        try:
            yield from message_batches(messages(), schema, opts.body_as, opts.include_amqp)
        except MQFormatError as exc:
            raise MQFormatError(f"{partition.path}, message {counted[0]}: {exc.reason}") from exc
        except UnicodeDecodeError as exc:
            raise MQFormatError(
                f"{partition.path} is neither an MQ message nor a UTF-8 dump: {exc}"
            ) from None


class MQDumpDataSource(DataSource):
    """``format("jms-mq-dump")``: batch reads of IBM MQ dump files as JMS rows."""

    @classmethod
    def name(cls) -> str:
        return "jms-mq-dump"

    def schema(self) -> str:
        opts = parse_mq_options(self.options)
        return ddl_schema(opts.body_as, opts.include_amqp)

    def reader(self, schema: Any) -> DataSourceReader:
        return MQDumpReader(parse_mq_options(self.options))


def register_mq(spark: Any) -> None:
    """Register ``format("jms-mq-dump")`` with ``spark`` (a ``SparkSession``)."""
    spark.dataSource.register(MQDumpDataSource)
