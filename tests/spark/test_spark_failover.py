"""The ``jms`` source and sink with a ``failover:`` url ride through a lost connection: the
writer's task re-sends what a failover voided (same message ids), and a streaming query over a
broker SIGKILLed and restarted on its store loses nothing (duplicates only with the same
message_id). Real faults: a :class:`FaultProxy` drop, a broker subprocess killed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.testing.broker_process import BrokerProcess
from amqp_jms.testing.proxy import FaultProxy

pytestmark = [pytest.mark.spark, pytest.mark.slow]

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=250"


def _drain_texts(url: str, queue: str) -> list[tuple[str, str]]:
    """(message_id, text) of everything on ``queue``."""
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(False).create_consumer(Queue(queue))
        while (message := consumer.receive(1000)) is not None:
            out.append((message.get_jms_message_id(), message.get_text()))
    return out


def _check_each_once(pairs: list[tuple[str, str]], expected: set[str]) -> None:
    """Every text arrived; copies of one text all carry one message id."""
    assert {text for _, text in pairs} == expected
    ids: dict[str, set[str]] = {}
    for message_id, text in pairs:
        ids.setdefault(text, set()).add(message_id)
    assert all(len(v) == 1 for v in ids.values()), [t for t, v in ids.items() if len(v) > 1][:5]


def test_writer_with_failover_url_resends_what_a_dropped_connection_voided(spark: Any) -> None:
    from amqp_jms.broker import Broker

    n = 20000
    with Broker(port=0) as broker, FaultProxy(broker.port) as proxy:
        df = spark.range(n).selectExpr("concat('w', cast(id as string)) as text").coalesce(1)
        dropped: list[tuple[int, bool]] = []
        done = threading.Event()

        def drop_mid_write() -> None:
            while proxy.accepted == 0 and not done.is_set():
                time.sleep(0.01)
            time.sleep(0.3)  # the task is sending its partition in one transaction
            dropped.append((proxy.drop(), done.is_set()))

        dropper = threading.Thread(target=drop_mid_write, daemon=True)
        dropper.start()
        try:
            df.write.format("jms").option("url", f"failover:({proxy.url})?{FAST}").option(
                "destination", "queue://fo-written"
            ).mode("append").save()
        finally:
            done.set()
            dropper.join(10)
        assert dropped and dropped[0][0] >= 1 and not dropped[0][1], dropped  # dropped mid-write
        assert proxy.accepted >= 2  # the task's connection came back through failover
        _check_each_once(_drain_texts(broker.url, "fo-written"), {f"w{i}" for i in range(n)})


class _Restartable:
    """The broker as a subprocess on a store, killed (SIGKILL) and restarted on the same port."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = str(data_dir)
        self.proc = BrokerProcess("--data-dir", self.data_dir)
        self.port = self.proc.addr[1]

    def kill(self) -> None:
        self.proc.proc.kill()
        self.proc.proc.wait()
        self.proc.stop()

    def start(self) -> None:
        self.proc = BrokerProcess("--data-dir", self.data_dir, "--port", str(self.port))


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[_Restartable]:
    broker = _Restartable(tmp_path / "store")
    try:
        yield broker
    finally:
        broker.proc.stop()


def _send_while(url: str, queue: str, texts: list[str], go: threading.Event, stop: threading.Event) -> None:
    """Persistent sends through the failover url: the first half at once, the rest paced once
    ``go`` is set (so sends are under way when the broker dies); a send the kill interrupted is
    sent again with the same message id (the failover provider's guarantee)."""
    from amqp_jms.message import TextMessage

    with ConnectionFactory(url).create_connection() as conn:
        producer = conn.create_session(False).create_producer(Queue(queue))
        for i, text in enumerate(texts):
            if i == len(texts) // 2:
                go.wait(120)
            if stop.is_set():
                return
            producer.send(TextMessage(text))
            if i >= len(texts) // 2:
                time.sleep(0.002)


def test_streaming_query_with_failover_url_rides_through_a_broker_restart(
    spark: Any, restartable: _Restartable, tmp_path: Path
) -> None:
    sent = 3000
    url = f"failover:(amqp://127.0.0.1:{restartable.port})?{FAST}"
    texts = [f"m{i}" for i in range(sent)]
    go, stop = threading.Event(), threading.Event()
    sender = threading.Thread(target=_send_while, args=(url, "fo-stream", texts, go, stop), daemon=True)
    sender.start()
    df = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", "queue://fo-stream")
        .option("walPath", str(tmp_path / "wal"))
        .option("segmentMessages", 100)
        .option("maxMessagesPerTrigger", 200)
        .option("maxBufferedMessages", 200)  # paced, so the broker dies mid-stream
        .option("pollMs", 100)
        .load()
    )
    query = (
        df.select("message_id", "text")
        .writeStream.format("memory")
        .queryName("fo_stream")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )

    def rows() -> list[tuple[str, str]]:
        return [(r.message_id, r.text) for r in spark.sql("select message_id, text from fo_stream").collect()]

    try:
        deadline = time.monotonic() + 120
        while len(rows()) < 300:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.2)
        go.set()
        time.sleep(0.5)
        assert sender.is_alive() and len(rows()) < sent
        restartable.kill()  # mid-stream: the sender and the receiver both lose their broker
        time.sleep(1)
        restartable.start()
        deadline = time.monotonic() + 180
        while len({text for _, text in rows()}) < sent:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, f"{len(rows())} rows"
            time.sleep(0.5)
        sender.join(30)
        assert not sender.is_alive()
        got = rows()
        _check_each_once(got, set(texts))
        print(f"{len(got)} rows for {sent} messages")
    finally:
        go.set()
        stop.set()
        query.stop()
