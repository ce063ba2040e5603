"""Batch reads (browse; consuming reads refused) and batch writes against the embedded broker on local[2]."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.message import BytesMessage, MapMessage, TextMessage
from amqp_jms.types import Int

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def broker_url() -> Iterator[str]:
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def _send(url: str, queue: str, messages: list[Any]) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        session = conn.create_session(False)
        producer = session.create_producer(Queue(queue))
        for message in messages:
            producer.send(message)


def _drain(url: str, queue: str) -> list[Any]:
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(False).create_consumer(Queue(queue))
        while (message := consumer.receive(500)) is not None:
            out.append(message)
    return out


def _orders(n: int) -> list[Any]:
    out: list[Any] = []
    for i in range(n):
        msg = TextMessage(f"order {i}")
        msg.set_string_property("region", "EU" if i % 2 == 0 else "US")
        msg.set_int_property("total", i * 10)
        msg.set_jms_type("order")
        out.append(msg)
    return out


def test_browse_is_repeatable_and_consumes_nothing(spark: Any, broker_url: str) -> None:
    _send(broker_url, "browse", _orders(6))
    df = spark.read.format("jms").option("url", broker_url).option("destination", "queue://browse").load()
    assert df.count() == 6
    rows = sorted(df.collect(), key=lambda r: r.properties["total"].zfill(4))
    assert df.count() == 6  # a second action sees the same messages
    assert [r.text for r in rows] == [f"order {i}" for i in range(6)]
    first = rows[0]
    assert first.message_type == "Text" and first.jms_type == "order"
    assert first.destination == "queue://browse" and first.delivery_mode == 2 and first.priority == 4
    assert first.message_id.startswith("ID:") and first.timestamp is not None
    assert first.properties == {"region": "EU", "total": "0", "JMSXDeliveryCount": "1"}
    assert first.delivery_count == 1 and first.redelivered is False
    assert json.loads(first.typed_properties)["total"] == {"type": "int", "value": 0}
    assert len(_drain(broker_url, "browse")) == 6  # still all there


def test_browse_with_selector_pushed_to_the_broker(spark: Any, broker_url: str) -> None:
    _send(broker_url, "sel", _orders(10))
    df = (
        spark.read.format("jms")
        .option("url", broker_url)
        .option("destination", "queue://sel")
        .option("selector", "region = 'EU' AND total > 20")
        .load()
    )
    assert sorted(r.text for r in df.collect()) == ["order 4", "order 6", "order 8"]
    _drain(broker_url, "sel")


def test_consuming_batch_read_is_refused_and_takes_nothing(spark: Any, broker_url: str) -> None:
    """Spark gives a batch read no commit hook: a consuming one would accept messages before
    anything was written, and a filter Spark applies afterwards would throw the rest away."""
    _send(broker_url, "consume", _orders(4))
    df = (
        spark.read.format("jms")
        .option("url", broker_url)
        .option("destination", "queue://consume")
        .option("mode", "consume")
        .load()
    )
    with pytest.raises(Exception, match=r"consuming batch read .* is refused.*readStream"):
        df.filter("jms_type = 'order' AND text LIKE '%1'").collect()
    assert len(_drain(broker_url, "consume")) == 4  # nothing was taken


def test_header_filters_are_pushed_to_the_broker_as_a_selector(spark: Any, broker_url: str) -> None:
    """With Spark's pushdown switch on, a header filter becomes the browser's selector: the
    broker sends only matching messages, so maxMessages counts matches (without pushdown the
    first two messages would be browsed and Spark would keep one of them)."""
    from amqp_jms.spark.features import features

    if not features().filter_pushdown:
        pytest.skip(f"PySpark {features().version} has no filter pushdown for Python sources (4.1+)")
    messages = _orders(6)
    for i, message in enumerate(messages):
        message.set_jms_type("big" if i % 2 else "small")
    _send(broker_url, "pushed", messages)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        df = (
            spark.read.format("jms")
            .option("url", broker_url)
            .option("destination", "queue://pushed")
            .option("maxMessages", 2)
            .load()
            .filter("jms_type = 'big' AND priority >= 4 AND text <> 'x'")
        )
        assert sorted(r.text for r in df.collect()) == ["order 1", "order 3"]
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    assert len(_drain(broker_url, "pushed")) == 6  # browsing consumed nothing


def test_batch_write_every_body_kind_and_headers(spark: Any, broker_url: str) -> None:
    from amqp_jms.spark.typed_json import dumps_map

    rows = [
        ("hello", None, None, "c-1", "greeting", {"k": "v"}, None, 7),
        (None, bytearray(b"\x01\x02"), None, None, None, None, dumps_map({"n": Int(5)}), None),
        (None, None, dumps_map({"qty": Int(2)}), None, None, None, None, None),
    ]
    df = spark.createDataFrame(
        rows,
        "text string, body binary, map_body string, correlation_id string, jms_type string, "
        "properties map<string,string>, typed_properties string, priority int",
    ).coalesce(1)
    df.write.format("jms").option("url", broker_url).option("destination", "queue://written").mode(
        "append"
    ).save()
    got = _drain(broker_url, "written")
    assert len(got) == 3
    text, data, mapped = got
    assert isinstance(text, TextMessage) and text.get_text() == "hello"
    assert text.get_jms_correlation_id() == "c-1" and text.get_jms_type() == "greeting"
    assert text.get_string_property("k") == "v" and text.get_jms_priority() == 7
    assert isinstance(data, BytesMessage) and data.get_body(bytes) == b"\x01\x02"
    assert type(data.get_object_property("n")) is Int and data.get_int_property("n") == 5
    assert isinstance(mapped, MapMessage) and type(mapped.get_object("qty")) is Int


def test_unknown_option_fails_the_query(spark: Any, broker_url: str) -> None:
    with pytest.raises(Exception, match="unknown option 'destnation'"):
        spark.read.format("jms").option("url", broker_url).option("destnation", "queue://x").load().count()


def test_amqp_column_and_codec_functions(spark: Any, broker_url: str) -> None:
    from pyspark.sql import functions as F

    from amqp_jms.mapping import decode
    from amqp_jms.spark.functions import decode_amqp, encode_amqp

    _send(broker_url, "codec", _orders(3))
    df = (
        spark.read.format("jms")
        .option("url", broker_url)
        .option("destination", "queue://codec")
        .option("includeAmqp", "true")
        .load()
    )
    decoded = df.select("text", decode_amqp(F.col("amqp")).alias("m")).collect()
    assert sorted((r.text, r.m.text, r.m.properties["region"]) for r in decoded) == [
        ("order 0", "order 0", "EU"),
        ("order 1", "order 1", "US"),
        ("order 2", "order 2", "EU"),
    ]
    encoded = df.select(encode_amqp(F.col("text"), F.col("jms_type")).alias("raw")).collect()
    messages = sorted((decode(bytes(r.raw)) for r in encoded), key=lambda m: m.get_text())
    assert [(m.get_text(), m.get_jms_type()) for m in messages] == [(f"order {i}", "order") for i in range(3)]
    _drain(broker_url, "codec")


def test_browse_in_partitions_reads_each_message_once_in_parallel(spark: Any, broker_url: str) -> None:
    """partitionColumn/lowerBound/upperBound/numPartitions (the JDBC source's options): one task
    per disjoint selector range; every message in exactly one, those without the property, with
    a string in it or beyond the bounds included; the read's own selector still applies."""
    from pyspark.sql import functions as F

    from amqp_jms.types import Double

    messages: list[Any] = []
    for i in range(40):
        msg = TextMessage(f"m{i}")
        msg.set_int_property("n", i * 3 - 10)  # -10 … 107: below and above the bounds too
        msg.set_string_property("region", "EU" if i % 2 else "US")
        messages.append(msg)
    for label, value in (("none", None), ("text", "abc"), ("flag", True), ("nan", Double(float("nan")))):
        msg = TextMessage(label)
        if value is not None:
            msg.set_object_property("n", value)
        messages.append(msg)
    _send(broker_url, "parts", messages)

    def read(**extra: str) -> Any:
        reader = spark.read.format("jms").option("url", broker_url).option("destination", "queue://parts")
        for key, value in {"partitionColumn": "n", "lowerBound": "0", "upperBound": "100", **extra}.items():
            reader = reader.option(key, value)
        return reader.load()

    df = read(numPartitions="4")
    assert df.rdd.getNumPartitions() == 4
    rows = df.select("text", "message_id", F.spark_partition_id().alias("part")).collect()
    assert len(rows) == 44 and len({r.message_id for r in rows}) == 44  # in = out, no overlap
    expected = [f"m{i}" for i in range(40)] + ["none", "text", "flag", "nan"]
    assert sorted(r.text for r in rows) == sorted(expected)
    by_part: dict[int, list[str]] = {}
    for r in rows:
        by_part.setdefault(r.part, []).append(r.text)
    assert len(by_part) == 4  # every range had messages: the read really split
    assert {"none", "text", "flag", "nan", "m0"} <= set(by_part[0])  # below the first bound, or no number
    assert "m39" in by_part[3]  # above the last bound
    eu = read(numPartitions="3", selector="region = 'EU'").collect()
    assert sorted(r.text for r in eu) == sorted(f"m{i}" for i in range(1, 40, 2))
    assert len(_drain(broker_url, "parts")) == 44  # a browse: nothing consumed


def test_typed_properties_as_a_variant_are_queried_without_from_json_and_written_back(
    spark: Any, broker_url: str
) -> None:
    """typedPropertiesAs=variant: ``typed_properties`` is a Spark 4 VARIANT whose values keep
    their JMS types (``schema_of_variant`` says so); a DataFrame with that column writes the
    properties back with those types; the default stays typed JSON."""
    from amqp_jms.spark.variant import decode_properties
    from amqp_jms.types import Byte, Double, Long

    msg = TextMessage("typed")
    msg.set_int_property("total", 250)
    msg.set_object_property("tiny", Byte(7))
    msg.set_long_property("big", 1 << 40)
    msg.set_double_property("ratio", 0.5)
    msg.set_boolean_property("vip", True)
    msg.set_string_property("region", "EU")
    _send(broker_url, "variant", [msg])

    def load(**extra: str) -> Any:
        reader = spark.read.format("jms").option("url", broker_url).option("destination", "queue://variant")
        for key, value in extra.items():
            reader = reader.option(key, value)
        return reader.load()

    df = load(typedPropertiesAs="variant")
    assert df.schema["typed_properties"].dataType.typeName() == "variant"
    # the `column:path::type` shorthand is Spark 4.1+ SQL; variant_get works on every 4.x
    short = not spark.version.startswith("4.0.")
    total = "typed_properties:total::int" if short else "variant_get(typed_properties, '$.total', 'int')"
    vip = "typed_properties:vip::boolean" if short else "variant_get(typed_properties, '$.vip', 'boolean')"
    row = df.selectExpr(
        f"{total} AS total",
        "variant_get(typed_properties, '$.region', 'string') AS region",
        f"{vip} AS vip",
        "schema_of_variant(typed_properties) AS types",
    ).collect()[0]
    assert (row.total, row.region, row.vip) == (250, "EU", True)
    # schema_of_variant widens every integer to BIGINT; the values themselves keep their width
    for field in ("big: BIGINT", "ratio: DOUBLE", "region: STRING", "vip: BOOLEAN"):
        assert field in row.types, row.types
    cell = df.select("typed_properties").collect()[0].typed_properties  # a pyspark VariantVal
    assert cell.toPython()["tiny"] == 7
    assert type(decode_properties(cell.value, cell.metadata)["tiny"]) is Byte
    assert df.filter(f"{total} > 200").count() == 1
    assert load().schema["typed_properties"].dataType.typeName() == "string"  # the default is unchanged

    df.select("text", "typed_properties").write.format("jms").option("url", broker_url).option(
        "destination", "queue://variant-out"
    ).mode("append").save()
    (back,) = _drain(broker_url, "variant-out")
    assert type(back.get_object_property("tiny")) is Byte and type(back.get_object_property("total")) is Int
    assert type(back.get_object_property("big")) in (int, Long)  # a long (the client's is a plain int)
    assert back.get_long_property("big") == 1 << 40
    assert type(back.get_object_property("ratio")) in (float, Double)
    assert back.get_boolean_property("vip") is True and back.get_string_property("region") == "EU"
