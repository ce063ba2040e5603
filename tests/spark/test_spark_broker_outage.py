"""A broker killed with SIGKILL and restarted 2 s later under a streaming query with a
``failover:`` url, once per trigger: rows in, rows out, duplicates and lost are counted.

- ``availableNow``, with one and with two receivers: the reconnect gap is not the end of the
  data; the query reads everything and ends, and a rerun on the same checkpoint and walPath
  writes nothing again.
- ``processingTime``, with one and with two receivers: what the log holds is not written again
  when the broker redelivers it (the accepts the kill voided, or that the broker had not stored
  yet); with two, only a redelivery handed to the other receiver, flagged redelivered.

The broker is a subprocess with a durable store (``amqp_jms.testing.broker_process``); every
message is sent before the query starts, so every copy the sink sees came from the source.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from amqp_jms.testing.broker_process import RestartableBroker

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_SENT = 3000
_DOWN_S = 2.0
_SCHEMA = "message_id string, text string, redelivered boolean"
FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=100&failover.maxReconnectDelay=500"


def _query(
    spark: Any, url: str, queue: str, tmp_path: Path, trigger: dict[str, Any], receivers: int = 1
) -> Any:
    """``queue`` into Parquet files under ``tmp_path/out``, in small segments and batches (the
    query is still running when the broker dies)."""
    df = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("walPath", str(tmp_path / "wal"))
        .option("segmentMessages", 100)
        .option("maxMessagesPerTrigger", 200)
        .option("pollMs", 100)
        .option("numReceivers", receivers)
        .load()
    )
    return (
        df.select("message_id", "text", "redelivered")
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(**trigger)
        .start()
    )


def _rows(spark: Any, tmp_path: Path) -> list[tuple[str, str, bool]]:
    """(message_id, text, redelivered) of what the sink committed (the files its
    ``_spark_metadata`` log lists)."""
    if not (tmp_path / "out" / "_spark_metadata").exists():
        return []
    rows = spark.read.schema(_SCHEMA).parquet(str(tmp_path / "out")).collect()
    return [(r.message_id, r.text, r.redelivered) for r in rows]


def _counts(rows: list[tuple[str, str, bool]]) -> dict[str, int]:
    """Rows in (sent), out, duplicates (rows beyond the first of a message id), of those the
    ones docs/spark.md does not allow (a second copy not flagged redelivered), and lost."""
    texts = {text for _, text, _ in rows}
    ids = Counter(message_id for message_id, _, _ in rows)
    first_deliveries = Counter(message_id for message_id, _, redelivered in rows if not redelivered)
    return {
        "in": _SENT,
        "out": len(rows),
        "duplicates": sum(n - 1 for n in ids.values()),
        "unflagged": sum(n - 1 for n in first_deliveries.values()),
        "lost": len({f"m{i}" for i in range(_SENT)} - texts),
    }


def _kill_mid_stream(query: Any, tmp_path: Path, broker: RestartableBroker) -> None:
    """SIGKILL the broker while the receiver is taking messages at full speed (its log has
    reached its fifth segment, of 30), so that accepts are on their way, then restart it."""
    deadline = time.monotonic() + 120
    while max((int(p.name[4:24]) for p in (tmp_path / "wal").rglob("seg-*.arrow")), default=0) < 5:
        assert query.exception() is None and query.isActive and time.monotonic() < deadline
        time.sleep(0.01)
    broker.kill()
    time.sleep(_DOWN_S)
    broker.start()


@pytest.mark.parametrize("receivers", [1, 2])
def test_available_now_waits_through_a_broker_outage_and_a_rerun_writes_nothing_again(
    spark: Any, broker_process: RestartableBroker, tmp_path: Path, send_texts: Any, receivers: int
) -> None:
    """One receiver: every message once. Two: a redelivery the broker hands to the other
    receiver (not the one whose log holds it) may be a second row, flagged redelivered
    (docs/spark.md, Redeliveries); nothing else."""
    url = f"failover:(amqp://127.0.0.1:{broker_process.port})?{FAST}"
    send_texts(f"amqp://127.0.0.1:{broker_process.port}", "outage_now", _SENT)
    query = _query(spark, url, "outage_now", tmp_path, {"availableNow": True}, receivers)
    try:
        _kill_mid_stream(query, tmp_path, broker_process)
        assert query.awaitTermination(180), "the availableNow query did not end"
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    first = _counts(_rows(spark, tmp_path))
    rerun = _query(spark, url, "outage_now", tmp_path, {"availableNow": True}, receivers)
    try:
        assert rerun.awaitTermination(120) and rerun.exception() is None
    finally:
        rerun.stop()
    both = _counts(_rows(spark, tmp_path))
    print(f"{receivers} receivers: first run {first}; with the rerun {both}")
    assert first["lost"] == 0 and first["unflagged"] == 0
    assert first["out"] == _SENT + first["duplicates"]
    if receivers == 1:
        assert first["duplicates"] == 0
    assert both == first


@pytest.mark.parametrize("receivers", [1, 2])
def test_processing_time_does_not_write_again_what_the_log_holds_after_a_broker_outage(
    spark: Any, broker_process: RestartableBroker, tmp_path: Path, send_texts: Any, receivers: int
) -> None:
    """One receiver: every message once. Two: as under ``availableNow``, only a redelivery
    handed to the other receiver may be a second row, flagged redelivered; nothing lost."""
    url = f"failover:(amqp://127.0.0.1:{broker_process.port})?{FAST}"
    send_texts(f"amqp://127.0.0.1:{broker_process.port}", "outage_tick", _SENT)
    trigger = {"processingTime": "200 milliseconds"}
    query = _query(spark, url, "outage_tick", tmp_path, trigger, receivers)
    try:
        _kill_mid_stream(query, tmp_path, broker_process)
        deadline = time.monotonic() + 180
        while len({text for _, text, _ in _rows(spark, tmp_path)}) < _SENT:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, _counts(_rows(spark, tmp_path))
            time.sleep(0.5)
        # redeliveries of what the broker had not stored as accepted come once it is back
        time.sleep(2)
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    counts = _counts(_rows(spark, tmp_path))
    print(f"{receivers} receivers: {counts}")
    assert counts["lost"] == 0 and counts["unflagged"] == 0
    assert counts["out"] == _SENT + counts["duplicates"]
    if receivers == 1:
        assert counts["duplicates"] == 0
