"""A streaming query rides through a broker killed with SIGKILL and restarted under it, with a
plain url (the receiver reconnects with back-off) and with a ``failover:`` url (the failover
provider reconnects) while a producer sends: what the receiver had not accepted comes again,
nothing is lost, and duplicates carry the same message_id. The broker runs as a subprocess
with a durable store."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from amqp_jms.testing.broker_process import RestartableBroker

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_SENT = 2000
FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=250"


def _paced_query(spark: Any, url: str, queue: str, tmp_path: Path) -> Any:
    """A processingTime query of ``queue`` into the memory table ``queue``, paced by small
    segments and a small buffer so that the broker dies mid-stream."""
    df = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("walPath", str(tmp_path / "wal"))
        .option("segmentMessages", 100)
        .option("maxMessagesPerTrigger", 200)
        .option("maxBufferedMessages", 200)
        .option("pollMs", 100)
        .load()
    )
    return (
        df.select("message_id", "text")
        .writeStream.format("memory")
        .queryName(queue)
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def _rows(spark: Any, table: str) -> list[Any]:
    return spark.sql(f"select message_id, text from {table}").collect()


def test_broker_killed_and_restarted_under_a_running_query_loses_nothing(
    spark: Any, broker_process: RestartableBroker, tmp_path: Path, send_texts: Any, check_each_once: Any
) -> None:
    url = f"amqp://127.0.0.1:{broker_process.port}"
    send_texts(url, "restart", _SENT)
    query = _paced_query(spark, url, "restart", tmp_path)
    try:
        deadline = time.monotonic() + 120
        while len(_rows(spark, "restart")) < 300:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.2)
        broker_process.kill()
        time.sleep(2)  # the receiver finds the broker gone and keeps trying
        broker_process.start()
        deadline = time.monotonic() + 180
        while len({r.text for r in _rows(spark, "restart")}) < _SENT:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, f"{len(_rows(spark, 'restart'))} rows"
            time.sleep(0.5)
        check_each_once(_rows(spark, "restart"), _SENT)
    finally:
        query.stop()


def _send_while(url: str, queue: str, texts: list[str], go: threading.Event, stop: threading.Event) -> None:
    """Persistent sends through the failover url: the first half at once, the rest paced once
    ``go`` is set (so sends are under way when the broker dies); a send the kill interrupted is
    sent again with the same message id (the failover provider's guarantee)."""
    from amqp_jms import Queue
    from amqp_jms.client import ConnectionFactory
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
    spark: Any, broker_process: RestartableBroker, tmp_path: Path, check_same_ids: Any
) -> None:
    sent = 3000
    url = f"failover:(amqp://127.0.0.1:{broker_process.port})?{FAST}"
    texts = [f"m{i}" for i in range(sent)]
    go, stop = threading.Event(), threading.Event()
    sender = threading.Thread(target=_send_while, args=(url, "fo_stream", texts, go, stop), daemon=True)
    sender.start()
    query = _paced_query(spark, url, "fo_stream", tmp_path)

    def rows() -> list[tuple[str, str]]:
        return [(r.message_id, r.text) for r in _rows(spark, "fo_stream")]

    try:
        deadline = time.monotonic() + 120
        while len(rows()) < 300:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.2)
        go.set()
        time.sleep(0.5)
        assert sender.is_alive() and len(rows()) < sent
        broker_process.kill()  # mid-stream: the sender and the receiver both lose their broker
        time.sleep(1)
        broker_process.start()
        deadline = time.monotonic() + 180
        while len({text for _, text in rows()}) < sent:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, f"{len(rows())} rows"
            time.sleep(0.5)
        sender.join(30)
        assert not sender.is_alive()
        got = rows()
        check_same_ids(got, set(texts))
        print(f"{len(got)} rows for {sent} messages")
    finally:
        go.set()
        stop.set()
        query.stop()
