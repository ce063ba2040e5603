"""spark_bench: the jms data source against the client's own loops, same broker, same run.

1. ingest: N messages from the embedded broker into Parquet via ``readStream`` + ``availableNow``
   (SparkSession start excluded; the query's start to its end is timed), against the client's
   own receive loop draining N messages (transacted, committing every 10 000 like the source).
2. write: a batch ``df.write.format("jms")`` of N rows (``text`` column), against the client's
   send loop (one transacted session, persistent sends, one commit).

Goal: each Spark figure >= 0.8x the client's. The last line is the smaller ratio.
usage: spark_bench.py [--quick] [--n N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any

GOAL = 0.8


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


def _ingest(spark: Any, url: str, queue: str, n: int, work: str) -> float:
    stats = os.environ["AMQP_JMS_SPARK_STATS"]
    start = time.perf_counter()
    wall = time.time()
    df = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("walPath", os.path.join(work, "wal"))
        .option("pollMs", 500)
        .load()
    )
    query = (
        df.writeStream.format("parquet")
        .option("path", os.path.join(work, "out"))
        .option("checkpointLocation", os.path.join(work, "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    elapsed = time.perf_counter() - start
    for progress in query.recentProgress:
        _log(f"  batch {progress['batchId']}: {progress['numInputRows']} rows, {progress['durationMs']}")
    if os.path.exists(stats):  # the source's own phases (receiver thread in Spark's source process)
        with open(stats) as handle:
            for line in handle:
                at, _, text = line.partition(" ")
                _log(f"  +{float(at) - wall:6.2f} s {text.rstrip()}")
    rows = sum(p["numInputRows"] for p in query.recentProgress)
    if rows != n:
        raise SystemExit(f"spark ingested {rows} of {n}")
    return elapsed


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
    args = parser.parse_args()
    n = args.n or (10_000 if args.quick else 100_000)
    from amqp_jms.broker import Broker

    work = tempfile.mkdtemp(prefix="spark_bench-")
    try:
        with Broker(port=0) as broker:
            url = broker.url
            _send(url, "bench-client", n)
            client_rx = _receive(url, "bench-client", n)
            _log(f"client receive loop: {client_rx:.2f} s")
            spark = _spark(work)
            try:
                _send(url, "bench-spark", n)
                spark_rx = _ingest(spark, url, "bench-spark", n, work)
                _log(f"spark ingest: {spark_rx:.2f} s")
                client_tx = _send(url, "bench-client-tx", n)
                _log(f"client send loop: {client_tx:.2f} s")
                spark_tx = _write(spark, url, "bench-spark-tx", n)
                _log(f"spark write: {spark_tx:.2f} s")
            finally:
                spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ingest_ratio = client_rx / spark_rx
    write_ratio = client_tx / spark_tx
    print(f"n = {n} messages of 200 B text + 1 property")
    print(
        f"ingest: client receive loop {n / client_rx:,.0f} msg/s; "
        f"spark readStream->parquet {n / spark_rx:,.0f} msg/s; ratio {ingest_ratio:.2f}"
    )
    print(
        f"write: client send loop {n / client_tx:,.0f} msg/s; "
        f"spark df.write {n / spark_tx:,.0f} msg/s; ratio {write_ratio:.2f}"
    )
    print(f"spark_bench: ratio {min(ingest_ratio, write_ratio):.2f} (goal {GOAL})")


if __name__ == "__main__":
    main()
