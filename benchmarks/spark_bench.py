"""spark_bench: the jms data source against the client's own loops, same broker, same run.

The broker runs as a subprocess with a durable store (``python -m amqp_jms.broker --data-dir``),
as in production, not inside the benchmark's process.

1. ingest: N messages into Parquet via ``readStream`` + ``availableNow`` (SparkSession start
   excluded), against the client's own receive loop draining N messages (transacted, committing
   every 10 000 like the source). Reported three ways: query start to end; the rate after the
   first batch (whose Python-worker start-up is reported apart); and *per receiver*: the rate at
   which the source's receiver made messages durable and accepted them, from its own start to its
   end (the executors' decoding and the sink overlap it). The ratio on the last line is the
   per-receiver one, so that a ``--quick`` ratio is not start-up noise.
2. executor conversion: one write-ahead segment of 2x10^4 encoded messages turned into Arrow
   record batches of the row schema (what each executor task does), msg/s of CPU on one core, the
   best of three runs, beside the decode alone. Goal 100 000.
3. write: a batch ``df.write.format("jms")`` of N rows (``text`` column), against the client's
   send loop (one transacted session, persistent sends, one commit).

4. receivers: the ingest again with ``numReceivers=2`` (full runs; ``--receivers R`` to choose,
   ``--quick`` skips it to stay under a minute): rate start to end and the receivers' own. A
   warm-up query of 10^3 messages runs first then, so that neither measured query pays the
   Python workers' start (the first query's first batch otherwise waits for it).

Goal: each Spark ratio >= 0.8x the client's. The last line is the per-receiver ingest ratio
(one receiver).
usage: spark_bench.py [--quick] [--n N] [--receivers R]
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import tempfile
import time
from typing import Any

from amqp_jms.testing.broker_process import BrokerProcess

GOAL = 0.8
CONVERSION_GOAL = 100_000


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _send(url: str, queue: str, n: int) -> float:
    from amqp_jms import Queue
    from amqp_jms.client import ConnectionFactory
    from amqp_jms.message import TextMessage

    body = "x" * 200
    start = time.perf_counter()
    with ConnectionFactory(url).create_connection() as conn:
        session = conn.create_session(True)
        producer = session.create_producer(Queue(queue))
        for i in range(n):
            msg = TextMessage(body)
            msg.set_int_property("n", i)
            producer.send(msg)
            if i % 10000 == 9999:
                session.commit()
        session.commit()
    return time.perf_counter() - start


def _receive(url: str, queue: str, n: int) -> float:
    from amqp_jms import Queue
    from amqp_jms.client import ConnectionFactory

    start = time.perf_counter()
    got = 0
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session(True)
        consumer = session.create_consumer(Queue(queue))
        while got < n:
            if consumer.receive(5000) is None:
                break
            got += 1
            if got % 10000 == 0:
                session.commit()
        session.commit()
    elapsed = time.perf_counter() - start
    if got != n:
        raise SystemExit(f"client receive loop got {got} of {n}")
    return elapsed


def _spark(work: str) -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # the source's receiver appends its timings here (amqp_jms.spark.receiver); inherited by Spark
    os.environ["AMQP_JMS_SPARK_STATS"] = os.path.join(work, "source-stats.txt")
    from pyspark.sql import SparkSession

    from amqp_jms.spark import register

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("spark_bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def _ingest(
    spark: Any, url: str, queue: str, n: int, work: str, receivers: int = 1
) -> tuple[float, float, float, float]:
    """Query start to end, first batch done after, steady rate after it, and the rate per
    receiver (all receivers' messages over the longest receiver's run, divided by their number)."""
    stats = os.environ["AMQP_JMS_SPARK_STATS"]
    if os.path.exists(stats):
        os.unlink(stats)
    start = time.perf_counter()
    wall = time.time()
    df = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("walPath", os.path.join(work, f"wal-{queue}"))
        .option("pollMs", 500)
        .option("numReceivers", receivers)
        .load()
    )
    query = (
        df.writeStream.format("parquet")
        .option("path", os.path.join(work, f"out-{queue}"))
        .option("checkpointLocation", os.path.join(work, f"chk-{queue}"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    elapsed = time.perf_counter() - start
    for progress in query.recentProgress:
        _log(f"  batch {progress['batchId']}: {progress['numInputRows']} rows, {progress['durationMs']}")
    received = 0
    longest = 0.0
    if os.path.exists(stats):  # the source's own phases (receiver threads in the driver's processes)
        import re

        with open(stats) as handle:
            for line in handle:
                at, _, text = line.partition(" ")
                _log(f"  +{float(at) - wall:6.2f} s {text.rstrip()}")
                ended = re.match(r"receiver ended: (\d+) messages.* ([\d.]+) s since start", text)
                if ended:
                    received += int(ended.group(1))
                    longest = max(longest, float(ended.group(2)))
    receiver_rate = received / longest / receivers if longest > 0 else 0.0
    progress = [p for p in query.recentProgress if p["numInputRows"]]
    rows = sum(p["numInputRows"] for p in progress)
    if rows != n:
        raise SystemExit(f"spark ingested {rows} of {n}")
    first_rows = progress[0]["numInputRows"] if progress else 0
    # the first batch's end, from its progress (trigger start + duration), in query seconds
    first = progress[0] if progress else query.recentProgress[0]
    began = datetime.datetime.fromisoformat(first["timestamp"].replace("Z", "+00:00")).timestamp()
    startup = began + first["durationMs"]["triggerExecution"] / 1000.0 - wall
    steady_s = elapsed - startup
    _log(f"  first batch: {first_rows} rows, done {startup:.2f} s after the query started")
    steady = (n - first_rows) / steady_s if steady_s > 0 and n > first_rows else n / elapsed
    return elapsed, startup, steady, receiver_rate


def _conversion(n: int, work: str) -> tuple[float, float]:
    """msg/s of one executor task turning a segment of n encoded messages into Arrow batches,
    and of the decode alone (``mapping.decode``, the part a C section decoder speeds up), both
    on one core (process time, the best of three runs). A first small segment warms the worker
    up as Spark's reused Python workers are (pyarrow's first conversion imports pandas: a third
    of a second, once per worker process)."""
    from amqp_jms import mapping
    from amqp_jms.destination import Queue
    from amqp_jms.message import TextMessage
    from amqp_jms.spark.stream import decode_segment
    from amqp_jms.spark.wal import WriteAheadLog

    encoded = []
    for i in range(n):
        msg = TextMessage("x" * 200)
        msg.set_int_property("n", i)
        msg._destination = Queue("bench")
        msg._message_id = f"ID:bench:{i}"
        msg._timestamp = 1_700_000_000_000
        encoded.append(bytes(mapping.encode(msg)))
    path = os.path.join(work, "conversion-wal")
    wal = WriteAheadLog(path)
    wal.append(encoded[:500])
    wal.append(encoded)
    assert sum(batch.num_rows for batch in decode_segment(path, 1, "binary", False)) == 500
    cpu = decode_cpu = float("inf")
    for _ in range(3):  # the best of three: on a shared machine the same work's CPU time varies
        began = time.process_time()
        rows = sum(batch.num_rows for batch in decode_segment(path, 2, "binary", False))
        cpu = min(cpu, time.process_time() - began)
        assert rows == n
        began = time.process_time()
        for data in encoded:
            mapping.decode(data)
        decode_cpu = min(decode_cpu, time.process_time() - began)
    return n / cpu, n / decode_cpu


def _write(spark: Any, url: str, queue: str, n: int) -> float:
    df = spark.range(n).selectExpr("repeat('x', 200) as text", "map('n', cast(id as string)) as properties")
    df = df.repartition(2).cache()
    df.count()
    start = time.perf_counter()
    df.write.format("jms").option("url", url).option("destination", f"queue://{queue}").mode("append").save()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10^4 messages (< 60 s)")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument(
        "--receivers",
        type=int,
        default=None,
        help="also ingest with numReceivers=R (default 2; --quick: 1, none)",
    )
    args = parser.parse_args()
    n = args.n or (10_000 if args.quick else 100_000)
    if args.receivers is None:
        args.receivers = 1 if args.quick else 2
    work = tempfile.mkdtemp(prefix="spark_bench-")
    broker = BrokerProcess("--data-dir", os.path.join(work, "store"))
    try:
        url = broker.url
        conversion, decode_only = _conversion(min(n, 20_000), work)
        _log(f"executor conversion: {conversion:,.0f} msg/s per core (decode alone {decode_only:,.0f})")
        _send(url, "bench-client", n)
        client_rx = _receive(url, "bench-client", n)
        _log(f"client receive loop: {client_rx:.2f} s")
        spark = _spark(work)
        try:
            warm: float | None = None
            if args.receivers > 1:  # 1 vs 2 receivers: neither run may be the one paying the start-up
                _send(url, "bench-warmup", 1000)
                warm = _ingest(spark, url, "bench-warmup", 1000, work)[0]
                _log(f"warm-up query (10^3 messages, Python workers' start): {warm:.2f} s")
            _send(url, "bench-spark", n)
            spark_rx, startup, steady, receiver_rate = _ingest(spark, url, "bench-spark", n, work)
            _log(f"spark ingest: {spark_rx:.2f} s")
            two: tuple[float, float, float, float] | None = None
            if args.receivers > 1:
                _send(url, "bench-spark-2", n)
                two = _ingest(spark, url, "bench-spark-2", n, work, args.receivers)
                _log(f"spark ingest, {args.receivers} receivers: {two[0]:.2f} s")
            client_tx = _send(url, "bench-client-tx", n)
            _log(f"client send loop: {client_tx:.2f} s")
            spark_tx = _write(spark, url, "bench-spark-tx", n)
            _log(f"spark write: {spark_tx:.2f} s")
        finally:
            spark.stop()
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    client_rate = n / client_rx
    ingest_ratio = receiver_rate / client_rate
    write_ratio = client_tx / spark_tx
    print(f"n = {n} messages of 200 B text + 1 property; broker subprocess with a store; 1 receiver")
    if warm is not None:
        print(f"a warm-up query (10^3 messages) ran first, {warm:.1f} s: the Python workers' start is in it")
    print(
        f"ingest: client receive loop {client_rate:,.0f} msg/s; spark readStream->parquet "
        f"{n / spark_rx:,.0f} msg/s start to end, first batch after {startup:.1f} s, steady "
        f"{steady:,.0f} msg/s after it (ratio {steady / client_rate:.2f})"
    )
    print(
        f"ingest per receiver: the source's receiver made {receiver_rate:,.0f} msg/s durable and accepted "
        f"(receive + WAL append + accept, its start to its end); ratio {ingest_ratio:.2f} (goal {GOAL})"
    )
    print(
        f"executor conversion: {conversion:,.0f} msg/s per core (goal {CONVERSION_GOAL:,}); "
        f"the decode alone {decode_only:,.0f} msg/s"
    )
    print(
        f"write: client send loop {n / client_tx:,.0f} msg/s; "
        f"spark df.write {n / spark_tx:,.0f} msg/s; ratio {write_ratio:.2f}"
    )
    print(f"spark_bench: ratio {ingest_ratio:.2f} (goal {GOAL})")


if __name__ == "__main__":
    main()
