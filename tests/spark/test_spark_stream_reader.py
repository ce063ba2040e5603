"""The stream reader's offset protocol, driven directly (no Spark) against the embedded broker.

Spark calls initialOffset/latestOffset/partitions/commit on the driver and read() on executors;
calling them in the same order here checks the WAL design quickly: accept only after append,
segments as offsets, replay of planned-but-uncommitted batches, deletion after commit.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.exceptions import IllegalStateException
from amqp_jms.message import TextMessage
from amqp_jms.spark.options import parse_options
from amqp_jms.spark.stream import JmsStreamReader


@pytest.fixture(scope="module")
def broker_url() -> Iterator[str]:
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def _send(url: str, queue: str, count: int, start: int = 0) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        producer = conn.create_session(False).create_producer(Queue(queue))
        for i in range(start, start + count):
            producer.send(TextMessage(f"m{i}"))


def _remaining(url: str, queue: str) -> list[str]:
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(False).create_consumer(Queue(queue))
        while (message := consumer.receive(300)) is not None:
            out.append(message.get_text())
    return out


def _reader(url: str, queue: str, wal: Path, **extra: str) -> JmsStreamReader:
    options = {"url": url, "destination": f"queue://{queue}", "walPath": str(wal), "pollMs": "200", **extra}
    reader = JmsStreamReader(parse_options(options))
    return pickle.loads(pickle.dumps(reader))  # Spark pickles it; nothing may connect before use


def _texts(reader: JmsStreamReader, start: dict[str, Any], end: dict[str, Any]) -> list[str]:
    texts: list[str] = []
    for partition in reader.partitions(start, end):
        for batch in reader.read(pickle.loads(pickle.dumps(partition))):
            texts.extend(batch.column("text").to_pylist())
    return texts


def test_batches_respect_the_limit_and_segments_go_after_commit(broker_url: str, tmp_path: Path) -> None:
    _send(broker_url, "r1", 25)
    reader = _reader(broker_url, "r1", tmp_path, segmentMessages="4")
    start = reader.initialOffset()
    assert reader.getDefaultReadLimit() == ReadAllAvailable()
    end = reader.latestOffset(start, ReadMaxRows(10))
    assert end == {"segment": 3}  # 4 + 4 + 2 messages
    assert _texts(reader, start, end) == [f"m{i}" for i in range(10)]
    assert _texts(reader, start, end) == [f"m{i}" for i in range(10)]  # a replay reads the same
    # Spark commits batch 0, then plans batch 1 from its end
    end2 = reader.latestOffset(end, ReadAllAvailable())
    on_disk = sorted(p.name for p in tmp_path.iterdir())
    assert on_disk == [f"seg-{i:020d}.arrow" for i in range(4, end2["segment"] + 1)]  # 1-3 deleted
    reader.commit(end)
    texts = _texts(reader, end, end2)
    assert texts == [f"m{i}" for i in range(10, 25)]
    reader.commit(end2)
    assert list(tmp_path.iterdir()) == []
    assert reader.latestOffset(end2, ReadAllAvailable()) == end2  # nothing new: same offset


def test_restart_offers_segments_written_before_the_crash(broker_url: str, tmp_path: Path) -> None:
    _send(broker_url, "r2", 6)
    first = _reader(broker_url, "r2", tmp_path)
    end = first.latestOffset(first.initialOffset(), ReadAllAvailable())
    first.stop()  # the process dies here: Spark never recorded ``end``
    _send(broker_url, "r2", 3, start=6)
    second = _reader(broker_url, "r2", tmp_path)
    pending = second.latestOffset({"segment": 0}, ReadAllAvailable())
    assert pending == end  # the accepted messages come back from the log first
    assert _texts(second, {"segment": 0}, pending) == [f"m{i}" for i in range(6)]
    after = second.latestOffset(pending, ReadAllAvailable())
    assert _texts(second, pending, after) == ["m6", "m7", "m8"]
    second.stop()


def test_available_now_stops_at_the_first_empty_poll(broker_url: str, tmp_path: Path) -> None:
    _send(broker_url, "r3", 5)
    reader = _reader(broker_url, "r3", tmp_path, maxMessagesPerTrigger="3")
    reader.prepareForTriggerAvailableNow()
    limit = reader.getDefaultReadLimit()
    assert limit == ReadMaxRows(3)
    a = reader.latestOffset(reader.initialOffset(), limit)
    assert _texts(reader, {"segment": 0}, a) == ["m0", "m1", "m2"]
    b = reader.latestOffset(a, limit)
    assert _texts(reader, a, b) == ["m3", "m4"]
    _send(broker_url, "r3", 2, start=5)  # arrives after the target: not read by this run
    assert reader.latestOffset(b, limit) == b
    reader.stop()
    assert _remaining(broker_url, "r3") == ["m5", "m6"]


def test_missing_segment_is_an_error_not_a_gap(broker_url: str, tmp_path: Path) -> None:
    reader = _reader(broker_url, "r4", tmp_path)
    with pytest.raises(IllegalStateException, match="segment 1 is missing"):
        reader.partitions({"segment": 0}, {"segment": 1})
