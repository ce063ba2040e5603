"""``format("jms-mq-dump")``: MQ dump files -> the jms row schema (reader directly, and in Spark)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from amqp_jms import mapping
from amqp_jms.destination import Queue
from amqp_jms.message import BytesMessage, MapMessage, TextMessage
from amqp_jms.mq import MQFormatError, to_mq, write_dump
from amqp_jms.spark.mq_source import (
    MQDumpDataSource,
    MQDumpReader,
    parse_mq_options,
    register_mq,
)
from amqp_jms.spark.schema import COLUMNS
from amqp_jms.testing.messages import with_fields, with_properties
from amqp_jms.types import Int


def orders(n: int) -> list[Any]:
    out = []
    for i in range(n):
        m: Any = (
            TextMessage(f"order {i}") if i % 3 == 0 else MapMessage({"id": Int(i)}) if i % 3 == 1 else None
        )
        if m is None:
            m = BytesMessage()
            m = with_fields(m, body=bytes([i % 256]) * 3)
        m = with_properties(m, {"region": "EU" if i % 2 else "US"})
        m.set_jms_timestamp(1_763_740_800_000 + i)
        m.set_jms_destination(Queue("ORDERS.IN"))
        out.append(to_mq(m, queue_manager="QM1"))
    return out


@pytest.fixture
def dump_dir(tmp_path: Path) -> Path:
    msgs = orders(10)
    write_dump([(m.md, m.data) for m in msgs[:6]], tmp_path / "a.dmp")
    write_dump([(m.md, m.data) for m in msgs[6:9]], tmp_path / "b.dmp")
    (tmp_path / "c.msg").write_bytes(msgs[9].to_bytes())  # a raw MQMD + data file
    return tmp_path


def rows_of(reader: MQDumpReader) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for part in reader.partitions():
        for batch in reader.read(part):
            rows.extend(batch.to_pylist())
    return rows


def test_reader_reads_dumps_and_raw_files_into_the_jms_schema(dump_dir: Path) -> None:
    reader = MQDumpReader(parse_mq_options({"path": str(dump_dir), "includeAmqp": "true"}))
    assert [os.path.basename(p.path) for p in reader.partitions()] == ["a.dmp", "b.dmp", "c.msg"]  # type: ignore[attr-defined]
    rows = rows_of(reader)
    assert len(rows) == 10
    assert list(rows[0]) == [name for name, _ in COLUMNS] + ["amqp"]
    assert rows[0]["message_type"] == "Text" and rows[0]["text"] == "order 0"
    assert rows[1]["message_type"] == "Map" and rows[2]["body"] == b"\x02\x02\x02"
    assert rows[9]["destination"] == "queue://ORDERS.IN" and rows[9]["delivery_count"] == 1
    assert dict(rows[1]["properties"])["region"] == "EU"
    back = mapping.decode(rows[3]["amqp"])
    assert back.get_body(str) == "order 3" and back.get_string_property("region") == "EU"


def test_glob_and_single_file(dump_dir: Path) -> None:
    assert len(rows_of(MQDumpReader(parse_mq_options({"path": str(dump_dir / "*.dmp")})))) == 9
    assert len(rows_of(MQDumpReader(parse_mq_options({"path": str(dump_dir / "b.dmp")})))) == 3


def test_bad_input_names_file_and_message(tmp_path: Path) -> None:
    (tmp_path / "bad.dmp").write_text("N\nA PRI x\n")
    with pytest.raises(MQFormatError, match=r"bad\.dmp, message 0: .*line 2"):
        rows_of(MQDumpReader(parse_mq_options({"path": str(tmp_path / "bad.dmp")})))
    with pytest.raises(FileNotFoundError):
        MQDumpReader(parse_mq_options({"path": str(tmp_path / "missing")})).partitions()


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({}, "load\\(path\\)"),
        ({"path": "x", "fileFormat": "xml"}, "fileFormat"),
        ({"path": "x", "bodyAs": "hex"}, "bodyAs"),
    ],
)
def test_option_errors(options: dict[str, str], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_mq_options(options)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("amqp-jms-mq-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register_mq(session)
    try:
        yield session
    finally:
        session.stop()


@pytest.mark.spark
def test_spark_read_format_jms_mq_dump(spark: Any, dump_dir: Path) -> None:
    assert MQDumpDataSource.name() == "jms-mq-dump"
    df = spark.read.format("jms-mq-dump").option("bodyAs", "string").load(str(dump_dir))
    assert df.columns == [name for name, _ in COLUMNS]
    rows = df.orderBy("timestamp").collect()
    assert len(rows) == 10
    assert rows[0]["text"] == "order 0" and rows[2]["body"] == "\x02\x02\x02"
    assert df.where("properties['region'] = 'EU'").count() == 5
