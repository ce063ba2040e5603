"""spark_bench: the jms data source against the client's own loops, same broker, same run.

The broker runs as a subprocess with a durable store (``python -m amqp_jms.broker --data-dir``),
as in production, not inside the benchmark's process.

1. ingest: N messages into Parquet via ``readStream`` + ``availableNow`` (SparkSession start
   excluded), against the client's own receive loop draining N messages (CLIENT_ACKNOWLEDGE,
   acknowledging every 10 000, as the source's receiver acknowledges each durable segment).
   Reported three ways: query start to end; the rate after the first batch (whose Python-worker
   start-up is reported apart); and *per receiver*: the rate at which the source's receiver made
   messages durable and accepted them, from its start to its last accept (finding the queue
   empty afterwards is not in it), so that a ``--quick`` ratio is not start-up noise.

   A fair baseline on a shared machine: the loop runs right before *and* right after each
   measurement, with the same SparkSession up (each run fills its queue first, untimed, so no
   send overlaps a measurement), and each baseline is the mean of the two loop rates around it: a
   load that changes during the run moves both sides alike. The ratio on the last line is the
   receiver *alone* (``SegmentReceiver`` as the stream reader starts it for availableNow, in
   this process, no query running) between two loops: receive + WAL append + accept against
   the client's own loop, in the same conditions. The receiver inside the query is printed too,
   with its own ratio: there it shares the cores with Spark's executors, which the loop never
   does (on a cluster they are other machines). Printed beside both, the receiving thread's CPU
   per message (``time.thread_time`` from the consumer's attach to the last accept, as
   ``benchmarks/receive_cpu.py`` measures; the I/O thread left out on both sides), which a
   loaded machine moves far less than it moves wall-clock rates.
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
(one receiver, alone, between two loops).
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


def _receive(url: str, queue: str, n: int) -> tuple[float, float]:
    """The client's own receive loop: seconds from connecting to the last acknowledge, and the
    receiving thread's CPU seconds from the consumer's attach to the last acknowledge."""
    from amqp_jms import Queue, Session
    from amqp_jms.client import ConnectionFactory

    start = time.perf_counter()
    got = 0
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue(queue))
        cpu = time.thread_time()  # from the consumer's attach, as the receiver counts it
        while got < n:
            if consumer.receive(5000) is None:
                break
            got += 1
            if got % 10000 == 0:
                session.acknowledge()
        session.acknowledge()
        elapsed = time.perf_counter() - start
        cpu = time.thread_time() - cpu
    if got != n:
        raise SystemExit(f"client receive loop got {got} of {n}")
    return elapsed, cpu


class Loops:
    """The baseline loop, run around each measurement: each run fills a queue of its own first
    (untimed, so the broker holds one queue's worth at a time, as in the measurements), and
    ``rate(*runs)`` is the mean of those runs' rates."""

    def __init__(self, url: str, n: int) -> None:
        self.url, self.n = url, n
        self.runs: list[tuple[float, float]] = []  # (seconds, thread cpu seconds)

    def run(self) -> int:
        queue = f"bench-client-{len(self.runs)}"
        _send(self.url, queue, self.n)
        seconds, cpu = _receive(self.url, queue, self.n)
        self.runs.append((seconds, cpu))
        _log(f"client receive loop {len(self.runs) - 1}: {seconds:.2f} s ({self.n / seconds:,.0f} msg/s), "
             f"thread cpu {cpu:.2f} s; load {_load()}")
        return len(self.runs) - 1

    def rate(self, *runs: int) -> float:
        """The mean of the given runs' msg/s."""
        return sum(self.n / self.runs[i][0] for i in runs) / len(runs)

    def cpu_per_message(self, *runs: int) -> float:
        return sum(self.runs[i][1] for i in runs) / len(runs) / self.n


def _ratio(a: float, b: float) -> float:
    """``a / b``, 0 for a figure that was not measured (a receiver older than its CPU figure)."""
    return a / b if b else 0.0


def _load() -> str:
    with open("/proc/loadavg") as handle:
        return " ".join(handle.read().split()[:3])


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


class Ingest:
    """One measured query's figures."""

    def __init__(self, elapsed: float, startup: float, steady: float, received: int, accepted_s: float,
                 cpu_s: float, receivers: int) -> None:
        self.elapsed, self.startup, self.steady = elapsed, startup, steady
        self.received, self.accepted_s, self.cpu_s, self.receivers = received, accepted_s, cpu_s, receivers

    @property
    def receiver_rate(self) -> float:
        """Per receiver: all receivers' messages over the longest one's start-to-last-accept,
        divided by their number."""
        return self.received / self.accepted_s / self.receivers if self.accepted_s > 0 else 0.0

    @property
    def receiver_cpu_per_message(self) -> float:
        return self.cpu_s / self.received if self.received else 0.0


def _ingest(spark: Any, url: str, queue: str, n: int, work: str, receivers: int = 1) -> Ingest:
    """Run one availableNow query over ``queue`` (filled beforehand) and read its figures: query
    start to end, first batch done after, steady rate after it, and the receivers' own lines."""
    import re

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
    accepted_s = cpu_s = 0.0
    if os.path.exists(stats):  # the source's own phases (receiver threads in the driver's processes)
        with open(stats) as handle:
            for line in handle:
                at, _, text = line.partition(" ")
                _log(f"  +{float(at) - wall:6.2f} s {text.rstrip()}")
                ended = re.match(r"receiver ended: (\d+) messages", text)
                if ended:
                    received += int(ended.group(1))
                    # (a receiver older than these figures: its end, and no CPU figure)
                    cpu = re.search(r"thread cpu ([\d.]+) s", text)
                    cpu_s += float(cpu.group(1)) if cpu else 0.0
                    last = re.search(r"last accept ([\d.]+) s", text) or re.search(
                        r"([\d.]+) s since start", text
                    )
                    accepted_s = max(accepted_s, float(last.group(1)) if last else 0.0)
    progress = [p for p in query.recentProgress if p["numInputRows"]]
    rows = sum(p["numInputRows"] for p in progress)
    if rows != n or received != n:
        raise SystemExit(f"spark ingested {rows} of {n} (its receivers accepted {received})")
    first_rows = progress[0]["numInputRows"] if progress else 0
    # the first batch's end, from its progress (trigger start + duration), in query seconds
    first = progress[0] if progress else query.recentProgress[0]
    began = datetime.datetime.fromisoformat(first["timestamp"].replace("Z", "+00:00")).timestamp()
    startup = began + first["durationMs"]["triggerExecution"] / 1000.0 - wall
    steady_s = elapsed - startup
    _log(f"  first batch: {first_rows} rows, done {startup:.2f} s after the query started; load {_load()}")
    steady = (n - first_rows) / steady_s if steady_s > 0 and n > first_rows else n / elapsed
    return Ingest(elapsed, startup, steady, received, accepted_s, cpu_s, receivers)


def _receiver_alone(url: str, queue: str, n: int, work: str) -> Ingest:
    """The source's receiver on its own (no query, no executors): a ``SegmentReceiver`` as the
    stream reader starts it for ``availableNow``, in this process, over ``queue`` (filled
    beforehand), until it finds the queue empty. Its rate is its start to its last accept."""
    from amqp_jms.spark.options import parse_options
    from amqp_jms.spark.receiver import SegmentReceiver
    from amqp_jms.spark.wal import WriteAheadLog

    path = os.path.join(work, f"wal-{queue}")
    options = parse_options(
        {"url": url, "destination": f"queue://{queue}", "walPath": path, "maxBufferedMessages": str(2 * n)}
    )
    began = time.monotonic()
    receiver = SegmentReceiver(options, WriteAheadLog(path), True, None)
    try:
        if not receiver.wait_drained(600):
            raise SystemExit(f"the receiver alone did not finish {queue}")
        ended = time.monotonic() - began
    finally:
        receiver.stop()
    stats = receiver.stats
    _log(f"receiver alone: {stats.summary()}; load {_load()}")
    if stats.messages != n:
        raise SystemExit(f"the receiver alone took {stats.messages} of {n}")
    # (a receiver older than these figures: until it found the queue empty, and no CPU figure)
    seconds = getattr(stats, "accepted_at", 0.0) or ended
    return Ingest(seconds, 0.0, 0.0, stats.messages, seconds, getattr(stats, "cpu_s", 0.0), 1)


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
    loads = [_load()]
    work = tempfile.mkdtemp(prefix="spark_bench-")
    broker = BrokerProcess("--data-dir", os.path.join(work, "store"))
    try:
        url = broker.url
        conversion, decode_only = _conversion(min(n, 20_000), work)
        _log(f"executor conversion: {conversion:,.0f} msg/s per core (decode alone {decode_only:,.0f})")
        loops = Loops(url, n)
        two_receivers = args.receivers > 1
        spark = _spark(work)
        try:
            warm: float | None = None
            if two_receivers:  # 1 vs 2 receivers: neither run may be the one paying the start-up
                _send(url, "bench-warmup", 1000)
                warm = _ingest(spark, url, "bench-warmup", 1000, work).elapsed
                _log(f"warm-up query (10^3 messages, Python workers' start): {warm:.2f} s")
            # loop, receiver alone, loop, query, loop [, query with R receivers, loop]; each
            # fills its queue first (untimed): no send overlaps a measurement
            runs = [loops.run()]
            _send(url, "bench-alone", n)
            alone = _receiver_alone(url, "bench-alone", n, work)
            runs.append(loops.run())
            loads.append(_load())
            _send(url, "bench-spark", n)
            one = _ingest(spark, url, "bench-spark", n, work)
            loads.append(_load())
            runs.append(loops.run())
            _log(f"spark ingest: {one.elapsed:.2f} s")
            two: Ingest | None = None
            if two_receivers:
                _send(url, "bench-spark-2", n)
                two = _ingest(spark, url, "bench-spark-2", n, work, args.receivers)
                loads.append(_load())
                runs.append(loops.run())
                _log(f"spark ingest, {args.receivers} receivers: {two.elapsed:.2f} s")
            client_tx = _send(url, "bench-client-tx", n)
            _log(f"client send loop: {client_tx:.2f} s")
            spark_tx = _write(spark, url, "bench-spark-tx", n)
            _log(f"spark write: {spark_tx:.2f} s")
            loads.append(_load())
        finally:
            spark.stop()
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    alone_loop = loops.rate(runs[0], runs[1])
    ingest_ratio = alone.receiver_rate / alone_loop
    query_loop = loops.rate(runs[1], runs[2])
    cpu_loop = loops.cpu_per_message(*runs[:3])
    write_ratio = client_tx / spark_tx
    print(f"n = {n} messages of 200 B text + 1 property; broker subprocess with a store; 1 receiver; "
          f"load average (1, 5, 15 min) during the run: {' | '.join(loads)}")
    if warm is not None:
        print(f"a warm-up query (10^3 messages) ran first, {warm:.1f} s: the Python workers' start is in it")
    print(
        f"client receive loop, run before and after each measurement: "
        f"{', '.join(f'{n / loops.runs[i][0]:,.0f}' for i in runs)} msg/s"
    )
    print(
        f"ingest per receiver, alternated with the loop (no executors running): the source's receiver "
        f"made {alone.receiver_rate:,.0f} msg/s durable and accepted (receive + WAL append + accept, "
        f"its start to its last accept, {alone.accepted_s:.1f} s) against the loop's {alone_loop:,.0f}; "
        f"ratio {ingest_ratio:.2f} (goal {GOAL})"
    )
    print(
        f"ingest per receiver inside the query (beside Spark's executors on the same cores): "
        f"{one.receiver_rate:,.0f} msg/s ({one.accepted_s:.1f} s) against the loop around it "
        f"{query_loop:,.0f}; ratio {one.receiver_rate / query_loop:.2f}"
    )
    print(
        f"receiving thread's CPU per message: loop {cpu_loop * 1e6:.1f} us, receiver alone "
        f"{alone.receiver_cpu_per_message * 1e6:.1f} us, inside the query "
        f"{one.receiver_cpu_per_message * 1e6:.1f} us (receive + append + accept); loop/receiver "
        f"{_ratio(cpu_loop, alone.receiver_cpu_per_message):.2f} and "
        f"{_ratio(cpu_loop, one.receiver_cpu_per_message):.2f}"
    )
    print(
        f"spark readStream->parquet: {n / one.elapsed:,.0f} msg/s start to end, first batch after "
        f"{one.startup:.1f} s, steady {one.steady:,.0f} msg/s after it (ratio {one.steady / query_loop:.2f})"
    )
    if two is not None:
        pair = loops.rate(runs[2], runs[3])
        print(
            f"numReceivers={args.receivers}: start to end {n / two.elapsed:,.0f} msg/s "
            f"({two.elapsed:.1f} s); the receivers together {two.received / two.accepted_s:,.0f} msg/s "
            f"({two.receiver_rate:,.0f} each; loop around it {pair:,.0f}, ratio per receiver "
            f"{two.receiver_rate / pair:.2f}); 1 receiver start to end {n / one.elapsed:,.0f} msg/s, "
            f"its own {one.receiver_rate:,.0f} msg/s"
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
