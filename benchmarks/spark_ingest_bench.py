"""spark_ingest: how the stream source's ingest scales with ``numReceivers`` (1, 2, 4), against
the client's own receive loop with as many competing consumers, in the same run.

For each k in (1, 2, 4) a queue of N messages (200 B text + 1 property; filled first, untimed) is
taken from one broker subprocess with a durable store by:

* **client loops**, right before and right after the query (the baseline is their mean, so a
  load that changes during the run moves both sides alike): k processes, each the client's own
  receive loop (``spark_bench._receive``'s shape: CLIENT_ACKNOWLEDGE, an acknowledge every 10^4
  and at the end) competing on the queue until it is empty; rate = N over first attach to last
  acknowledge. This is what the broker and the machine give k plain consumers.
* **Spark**: ``readStream`` with ``numReceivers=k`` + ``availableNow`` → Parquet on ``local[2]``
  (a warm-up query runs first so that no measured query pays the Python workers' start; not with
  ``--quick``, whose first start-to-end figure includes it). Two rates: the receivers' own (all
  their messages over the longest one's start to last accept, from their ``receiver ended``
  lines: Spark's start-up is not in it) and query start to end.

Where the time goes: each phase's CPU seconds per process (``/proc/<pid>/stat``, sampled every
0.2 s over this process's descendants, by what they run: the broker; Spark's JVM, driver and
executors in local mode; the Python workers forked by ``pyspark.daemon``, the executors' decode
tasks and the planner's short-lived workers; the driver-side streaming source runner, which holds
the receiving thread with one receiver; the receiver processes (k > 1); the client loops), the
whole machine's busy share of its cores (``/proc/stat``: other sessions' work included) and the
load average beside every figure. From those, CPU per message by process and the rate the cores
would allow this run's processes alone (cores / total CPU per message): on a shared machine the
wall-clock rates move with the other work, the CPU per message far less.

Last line: how close the receivers come to linear from 1 to 2 receivers, ``rate(2) / (2 ×
rate(1))`` (goal 0.8: 1.6× on two receivers). Printed beside it: the same for the client loops
(what the broker and the cores allowed plain consumers in the same minutes).

usage: spark_ingest_bench.py [--quick] [--n N] [--receivers 1,2,4]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_bench import Ingest, _ingest, _load, _log, _send, _spark

from amqp_jms.testing.broker_process import BrokerProcess

GOAL = 0.8
TICKS = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1


# --- per-process CPU -------------------------------------------------------------------------


def _category(cmdline: str) -> str:
    if "-m amqp_jms.spark.receiver_process" in cmdline:
        return "receiver processes"
    if "-m amqp_jms.broker" in cmdline:
        return "broker"
    if "python_streaming_source_runner" in cmdline:
        return "source runner"
    if cmdline.startswith("java") or "/java" in cmdline.split(" ")[0]:
        return "spark JVM"
    if "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline:
        return "python workers"
    if "spark_ingest_loop" in cmdline or "multiprocessing" in cmdline:
        return "client loops"
    return "other"


def _stat(pid: str) -> tuple[int, float, str] | None:
    """(parent pid, CPU seconds, start time) of a process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS, fields[19]


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class CpuSampler:
    """CPU seconds by category over this process's descendants (a process that ends between two
    samples keeps what the last sample saw: up to 0.2 s of its CPU is missed)."""

    def __init__(self) -> None:
        self.root = os.getpid()
        self._seen: dict[tuple[int, str], tuple[str, float]] = {}
        self._names: dict[tuple[int, str], str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        stats = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                stat = _stat(name)
                if stat is not None:
                    stats[int(name)] = stat
        mine = {self.root}
        grew = True
        while grew:  # descendants, by walking parent links until nothing is added
            grew = False
            for pid, (ppid, _, _) in stats.items():
                if ppid in mine and pid not in mine:
                    mine.add(pid)
                    grew = True
        with self._lock:
            for pid in mine - {self.root}:
                _, cpu, started = stats[pid]
                key = (pid, started)
                category = self._seen[key][0] if key in self._seen else "other"
                if category == "other":  # (again until known: a launcher script may exec java)
                    command = _cmdline(str(pid))
                    self._names[key] = command[:100]
                    category = _category(command)
                self._seen[key] = (category, cpu)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def totals(self) -> dict[str, float]:
        self._sample()
        out: dict[str, float] = {}
        with self._lock:
            for category, cpu in self._seen.values():
                out[category] = out.get(category, 0.0) + cpu
        return out

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def log_processes(self) -> None:
        """Each process seen, its category and CPU seconds (stderr: to check the categories)."""
        with self._lock:
            for key, (category, cpu) in sorted(self._seen.items(), key=lambda kv: -kv[1][1]):
                if cpu >= 0.1:
                    _log(f"  pid {key[0]}: {category}, {cpu:.1f} cpu s: {self._names.get(key, '')}")


def _machine() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot (``/proc/stat``)."""
    with open("/proc/stat") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / TICKS, sum(values) / TICKS


class Phase:
    """One measured phase: its CPU seconds by category, the machine's busy share, load."""

    def __init__(self, sampler: CpuSampler) -> None:
        self.sampler = sampler

    def __enter__(self) -> Phase:
        self.cpu0, self.machine0, self.wall0 = self.sampler.totals(), _machine(), time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall = time.perf_counter() - self.wall0
        cpu1, machine1 = self.sampler.totals(), _machine()
        self.cpu = {k: v - self.cpu0.get(k, 0.0) for k, v in cpu1.items() if v - self.cpu0.get(k, 0.0) > 0.05}
        busy, total = machine1[0] - self.machine0[0], machine1[1] - self.machine0[1]
        self.busy_share = busy / total if total else 0.0
        self.load = _load()

    def per_message(self, n: int) -> str:
        """CPU per message by category, and the rate the machine's cores would allow if this
        run's processes had them to themselves (cores / total CPU per message): a load-proof
        figure, where wall-clock rates on a shared machine are not."""
        total = sum(self.cpu.values())
        parts = ", ".join(
            f"{k} {v / n * 1e6:.0f}" for k, v in sorted(self.cpu.items(), key=lambda kv: -kv[1])
        )
        share = total / (self.wall * CORES) if self.wall else 0.0
        return (
            f"cpu us/msg: {parts}; total {total / n * 1e6:.0f} -> {CORES} cores allow "
            f"{CORES * n / total if total else 0:,.0f} msg/s; "
            f"this run's processes had {share:.0%} of the cores"
        )

    def describe(self) -> str:
        parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(self.cpu.items(), key=lambda kv: -kv[1]))
        return (
            f"{self.wall:.1f} s; cpu s: {parts}; machine busy {self.busy_share:.0%} of {CORES} cores; "
            f"load {self.load}"
        )


# --- the client loops ------------------------------------------------------------------------


def _loop_worker(url: str, queue: str, results: Any) -> None:
    """One competing client receive loop (a process of its own): (attach, last ack, count, cpu)."""
    from amqp_jms import Queue, Session
    from amqp_jms.client import ConnectionFactory

    got = 0
    last = began = time.time()
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue(queue))
        began = time.time()
        cpu = time.thread_time()
        while consumer.receive(1000) is not None:
            got += 1
            if got % 10000 == 0:
                session.acknowledge()
                last = time.time()
        session.acknowledge()
        if got % 10000:
            last = time.time()
        cpu = time.thread_time() - cpu
    results.put((began, last, got, cpu))


def _client_loops(url: str, queue: str, n: int, k: int) -> float:
    """k competing receive loops over ``queue`` (holding n): their messages per second together."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_loop_worker, args=(url, queue, results), name="spark_ingest_loop")
        for _ in range(k)
    ]
    for proc in procs:
        proc.start()
    rows = [results.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    got = sum(r[2] for r in rows)
    if got != n:
        raise SystemExit(f"{k} client loops got {got} of {n}")
    seconds = max(r[1] for r in rows) - min(r[0] for r in rows)
    _log(
        f"  {k} client loop(s): {', '.join(str(r[2]) for r in rows)} messages, {seconds:.2f} s, "
        f"thread cpu {sum(r[3] for r in rows):.2f} s"
    )
    return n / seconds


# --- the run ---------------------------------------------------------------------------------


class Row:
    """One k: the client loops before and after the query (their mean is the baseline: a load
    that changes during the run moves both sides alike), and the query."""

    def __init__(
        self, k: int, loop_rates: tuple[float, float], loop_phase: Phase, spark: Ingest, spark_phase: Phase
    ) -> None:
        self.k, self.loop_rates, self.loop_phase = k, loop_rates, loop_phase
        self.spark, self.spark_phase = spark, spark_phase
        self.loops = sum(loop_rates) / len(loop_rates)

    @property
    def receivers_rate(self) -> float:
        """All receivers' messages over the longest one's start to last accept."""
        return self.spark.received / self.spark.accepted_s if self.spark.accepted_s else 0.0

    @property
    def end_to_end(self) -> float:
        return self.spark.received / self.spark.elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="4,000 messages, receivers 1 and 2 (< 60 s)")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--receivers", default=None, help="comma-separated (default 1,2,4; --quick 1,2)")
    args = parser.parse_args()
    n = args.n or (4_000 if args.quick else 100_000)
    ks = [int(k) for k in (args.receivers or ("1,2" if args.quick else "1,2,4")).split(",")]
    if 1 not in ks or 2 not in ks:
        raise SystemExit("--receivers must include 1 and 2 (the last line compares them)")
    began, loads = time.perf_counter(), [_load()]
    work = tempfile.mkdtemp(prefix="spark_ingest-")
    sampler = CpuSampler()
    broker = BrokerProcess("--data-dir", os.path.join(work, "store"))
    rows: list[Row] = []
    try:
        url = broker.url
        spark = _spark(work)
        try:
            if not args.quick:  # (--quick: the first query's start-to-end pays the workers' start)
                _send(url, "warmup", 500)
                warm = _ingest(spark, url, "warmup", 500, work, 2).elapsed  # starts the Python workers
                _log(f"warm-up query (500 messages, 2 receivers): {warm:.1f} s; load {_load()}")
            for k in ks:

                def loops(tag: str, k: int = k) -> tuple[float, Phase]:
                    _send(url, f"loops-{k}-{tag}", n)
                    with Phase(sampler) as phase:
                        rate = _client_loops(url, f"loops-{k}-{tag}", n, k)
                    _log(f"{k} client loops ({tag}): {rate:,.0f} msg/s; {phase.describe()}")
                    return rate, phase

                before, loop_phase = loops("before")
                _send(url, f"spark-{k}", n)
                with Phase(sampler) as spark_phase:
                    ingest = _ingest(spark, url, f"spark-{k}", n, work, k)
                after, _ = loops("after")
                row = Row(k, (before, after), loop_phase, ingest, spark_phase)
                _log(
                    f"numReceivers={k}: receivers {row.receivers_rate:,.0f} msg/s, start to end "
                    f"{row.end_to_end:,.0f} msg/s; {spark_phase.describe()}"
                )
                rows.append(row)
                loads.append(_load())
        finally:
            spark.stop()
    finally:
        broker.stop()
        sampler.stop()
        sampler.log_processes()
        shutil.rmtree(work, ignore_errors=True)
    by_k = {row.k: row for row in rows}
    one = by_k[1]
    print(
        f"n = {n} messages of 200 B text + 1 property per run; broker subprocess with a store; "
        f"Spark local[2]; {CORES} cores; {time.perf_counter() - began:.0f} s in all; load average "
        f"(1, 5, 15 min) during the run: {' | '.join(loads)}"
    )
    print(
        "k | client loops msg/s (x k=1) | receivers msg/s (x k=1) | receivers/loops | "
        "spark start-to-end msg/s | load"
    )
    for row in rows:
        print(
            f"{row.k} | {row.loops:,.0f} ({row.loops / one.loops:.2f}) | {row.receivers_rate:,.0f} "
            f"({row.receivers_rate / one.receivers_rate:.2f}) | {row.receivers_rate / row.loops:.2f} | "
            f"{row.end_to_end:,.0f} | {row.spark_phase.load}"
        )
    for row in rows:
        print(
            f"k={row.k} client loops: {row.loop_rates[0]:,.0f} before, {row.loop_rates[1]:,.0f} after "
            f"the query; before: {row.loop_phase.describe()}"
        )
        print(f"k={row.k} client loops: {row.loop_phase.per_message(n)}")
        print(
            f"k={row.k} spark query: {row.spark_phase.describe()}; receivers' threads "
            f"{row.spark.cpu_s:.1f} cpu s ({row.spark.cpu_s / max(row.spark.received, 1) * 1e6:.0f} us/msg)"
        )
        print(f"k={row.k} spark query: {row.spark_phase.per_message(n)}")
    two = by_k[2]
    loops_linear = two.loops / (2 * one.loops)
    linear = two.receivers_rate / (2 * one.receivers_rate)
    print(
        f"1 -> 2 receivers: {two.receivers_rate / one.receivers_rate:.2f}x (linear: 2x); the client "
        f"loops in the same minutes: {two.loops / one.loops:.2f}x, closeness to linear {loops_linear:.2f}"
    )
    print(f"spark_ingest: ratio {linear:.2f} (goal {GOAL})")


if __name__ == "__main__":
    main()
