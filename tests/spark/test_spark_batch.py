"""Batch reads (browse, consume) and batch writes against the embedded broker on local[2]."""

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


def test_consume_drains_in_one_transaction(spark: Any, broker_url: str) -> None:
    bytes_msg = BytesMessage()
    bytes_msg.write_bytes(b"\x00\x01raw")
    map_msg = MapMessage()
    map_msg.set_int("qty", 3)
    map_msg.set_string("sku", "A-1")
    _send(broker_url, "consume", [bytes_msg, map_msg, *_orders(3)])
    df = (
        spark.read.format("jms")
        .option("url", broker_url)
        .option("destination", "queue://consume")
        .option("mode", "consume")
        .option("timeoutMs", 500)
        .load()
    )
    rows = df.collect()
    assert len(rows) == 5
    by_type = {r.message_type: r for r in rows}
    assert by_type["Bytes"].body == bytearray(b"\x00\x01raw")
    assert json.loads(by_type["Map"].map_body) == {
        "qty": {"type": "int", "value": 3},
        "sku": {"type": "string", "value": "A-1"},
    }
    assert _drain(broker_url, "consume") == []  # consumed and committed


def test_consume_max_messages_leaves_the_rest(spark: Any, broker_url: str) -> None:
    _send(broker_url, "partial", _orders(5))
    df = (
        spark.read.format("jms")
        .option("url", broker_url)
        .option("destination", "queue://partial")
        .option("mode", "consume")
        .option("maxMessages", 2)
        .load()
    )
    assert [r.text for r in df.collect()] == ["order 0", "order 1"]
    assert [m.get_text() for m in _drain(broker_url, "partial")] == ["order 2", "order 3", "order 4"]


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
