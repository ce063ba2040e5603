"""``amqp-jms pipeline``: the Spark Structured Streaming ingest of a JMS destination into Parquet.

``readStream.format("jms")`` (with the selector pushed to the broker) → ``writeStream`` Parquet,
either once over everything available (``--trigger available-now``, the default: a catch-up job)
or continuously (``--trigger 10s``) until Ctrl-C. Optionally writes a per-key aggregate of the
output (``--aggregate-by region``). :func:`run_pipeline` is also what ``amqp-jms demo`` runs.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._common import DEFAULT_URL, Output, UsageError, add_common, add_url, require_extras

__all__ = ["PipelineResult", "aggregate", "register", "run", "run_pipeline", "spark_session"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``pipeline`` subparser."""
    p = sub.add_parser(
        name,
        help=help_text,
        description="Stream a JMS destination into Parquet with Spark: readStream.format('jms') with "
        "an optional selector (evaluated by the broker), at-least-once through a write-ahead "
        "log and Spark's checkpoint. Re-running resumes where the last run stopped.",
        epilog="examples:\n  amqp-jms pipeline queue://orders --output out/orders\n"
        "  amqp-jms pipeline queue://orders --selector \"region = 'EU'\" --aggregate-by region\n"
        "  amqp-jms pipeline topic://ticks --subscription ticks --client-id etl --trigger 10s",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    add_url(p)
    p.add_argument("destination", help="queue://NAME, topic://NAME or a plain NAME")
    p.add_argument("--output", "-o", type=Path, default=Path("pipeline-out"), help="Parquet output directory")
    p.add_argument("--checkpoint", type=Path, help="Spark checkpoint dir (default OUTPUT/_checkpoint)")
    p.add_argument("--wal", type=Path, help="the source's write-ahead log dir (default OUTPUT/_wal)")
    p.add_argument("--selector", "-s", help="JMS message selector (pushed to the broker)")
    p.add_argument("--subscription", help="durable subscription name (topics; with --client-id)")
    p.add_argument("--client-id", help="JMS client ID")
    p.add_argument(
        "--trigger",
        default="available-now",
        help="'available-now' (default: process everything there, then stop) or an interval like 10s",
    )
    p.add_argument(
        "--until-empty",
        action="store_true",
        help="with available-now: run again (resuming) until a run reads nothing",
    )
    p.add_argument(
        "--max-per-trigger", type=int, default=0, help="messages per micro-batch (default no limit)"
    )
    p.add_argument(
        "--aggregate-by", metavar="PROPERTY", help="also write count/sum per value of this property"
    )
    p.add_argument(
        "--sum", metavar="PROPERTY", default="total", help="the numeric property to sum (default total)"
    )
    p.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    p.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="extra jms source option"
    )
    p.set_defaults(func=run)


@dataclass
class PipelineResult:
    """What one pipeline run did."""

    rows: int
    distinct_ids: int
    seconds: float
    batches: int
    output: Path
    aggregate: list[dict[str, Any]] = field(default_factory=list)

    @property
    def duplicates(self) -> int:
        return self.rows - self.distinct_ids


_INTERVAL = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds|m|min|minutes)?$")


def parse_trigger(text: str) -> dict[str, Any]:
    """``available-now`` → ``{"availableNow": True}``; ``10s`` → ``{"processingTime": "10 seconds"}``."""
    if text.replace("_", "-").lower() in ("available-now", "availablenow", "once"):
        return {"availableNow": True}
    m = _INTERVAL.match(text.strip().lower())
    if not m:
        raise UsageError(f"--trigger {text!r}: expected available-now or an interval like 10s, 500ms, 1m")
    value, unit = float(m.group(1)), m.group(2) or "s"
    ms = (
        value
        * {"ms": 1, "s": 1000, "sec": 1000, "seconds": 1000, "m": 60000, "min": 60000, "minutes": 60000}[unit]
    )
    return {"processingTime": f"{int(ms)} milliseconds"}


def spark_session(master: str = "local[2]", app: str = "amqp-jms pipeline") -> Any:
    """A quiet local SparkSession with the ``jms`` format registered."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, and no hostname warning
    require_extras("the pipeline", "spark", java=True)
    from pyspark.sql import SparkSession

    from ..spark import register

    spark = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def run_pipeline(
    spark: Any,
    *,
    url: str = DEFAULT_URL,
    destination: str,
    output: Path,
    checkpoint: Path | None = None,
    wal: Path | None = None,
    selector: str | None = None,
    subscription: str | None = None,
    client_id: str | None = None,
    trigger: str = "available-now",
    max_per_trigger: int = 0,
    aggregate_by: str | None = None,
    sum_property: str = "total",
    extra_options: dict[str, str] | None = None,
    out: Output | None = None,
    max_runs: int = 1,
) -> PipelineResult:
    """Run the streaming ingest (until done for available-now, else until KeyboardInterrupt).

    With ``available-now`` and ``max_runs > 1`` the query is started again (resuming from its
    checkpoint) until a run reads nothing, at most ``max_runs`` times: catch-up until empty.
    """
    output = Path(output)
    checkpoint = Path(checkpoint) if checkpoint else output / "_checkpoint"
    wal = Path(wal) if wal else output / "_wal"
    data_dir = output / "data"
    # absolute: the source refuses a relative walPath (each process would resolve it on its own)
    opts: dict[str, str] = {
        "url": url,
        "destination": destination,
        "walPath": str(wal.absolute()),
        "bodyAs": "string",
    }
    if selector:
        opts["selector"] = selector
    if subscription:
        opts["subscription"] = subscription
    if client_id:
        opts["clientId"] = client_id
    if max_per_trigger:
        opts["maxMessagesPerTrigger"] = str(max_per_trigger)
    if "availableNow" in parse_trigger(trigger):
        # availableNow ends at the first receive that times out. The first message can take
        # seconds: the embedded broker answered a selector consumer on a 3000-message queue after
        # 1.5-2.8 s (measured on a busy 2-core machine), far over the 200 ms default
        opts["pollMs"] = "10000"
    opts.update(extra_options or {})
    started = time.monotonic()
    out = out or Output(quiet=True)
    batches = 0
    read_total = 0
    available_now = "availableNow" in parse_trigger(trigger)
    with out.progress(f"streaming {destination} → Parquet", None) as bar:
        for _run in range(max_runs if available_now else 1):
            query = (
                spark.readStream.format("jms")
                .options(**opts)
                .load()
                .writeStream.format("parquet")
                .option("path", str(data_dir))
                .option("checkpointLocation", str(checkpoint))
                .trigger(**parse_trigger(trigger))
                .start()
            )

            def read_so_far(q: Any = query) -> int:
                return sum(int(p.get("numInputRows", 0)) for p in q.recentProgress)

            try:
                while not query.awaitTermination(0.5):
                    bar.update(completed=read_total + read_so_far())
            except KeyboardInterrupt:
                query.stop()
                raise
            exc = query.exception()
            if exc is not None:
                raise RuntimeError(f"the streaming query failed: {exc}")
            n = read_so_far()
            read_total += n
            batches += sum(1 for p in query.recentProgress if p.get("numInputRows", 0) > 0)
            bar.update(completed=read_total)
            # an availableNow run ends at the source's first receive timeout, which on a loaded
            # machine can come before the destination is empty: run again (resuming from the
            # checkpoint) until a run finds nothing
            if n == 0:
                break
    seconds = time.monotonic() - started
    rows, distinct = 0, 0
    agg: list[dict[str, Any]] = []
    if data_dir.exists() and any(data_dir.glob("*.parquet")):
        df = spark.read.parquet(str(data_dir))
        from pyspark.sql import functions as F

        counts = df.agg(F.count("*").alias("rows"), F.countDistinct("message_id").alias("ids")).collect()[0]
        rows, distinct = int(counts["rows"]), int(counts["ids"])
        if aggregate_by:
            agg = aggregate(df, aggregate_by, sum_property, output / f"by_{aggregate_by}")
    return PipelineResult(rows, distinct, seconds, batches, output, agg)


def aggregate(df: Any, key: str, sum_property: str, target: Path) -> list[dict[str, Any]]:
    """Count, distinct messages and the sum of ``sum_property`` per value of property ``key``."""
    from pyspark.sql import functions as F

    keyed = df.dropDuplicates(["message_id"]).withColumn(key, F.col("properties")[key])
    result = (
        keyed.groupBy(key)
        .agg(
            F.count("*").alias("messages"),
            F.round(F.sum(F.col("properties")[sum_property].cast("double")), 2).alias(f"sum_{sum_property}"),
        )
        .orderBy(key)
    )
    result.write.mode("overwrite").parquet(str(target))
    return [r.asDict() for r in result.collect()]


def run(args: argparse.Namespace, out: Output) -> int:
    extra: dict[str, str] = {}
    for spec in args.option:
        k, sep, v = spec.partition("=")
        if not sep or not k:
            raise UsageError(f"--option {spec!r}: expected KEY=VALUE")
        extra[k] = v
    if args.subscription and not args.client_id:
        raise UsageError("--subscription needs --client-id")
    parse_trigger(args.trigger)
    if args.selector:
        from ..selector import Selector

        Selector(args.selector)  # an InvalidSelectorException (exit 1, with the position) before Spark starts
    out.info(f"starting Spark ({args.master}) …")
    spark = spark_session(args.master)
    try:
        result = run_pipeline(
            spark,
            url=args.url,
            destination=args.destination,
            output=args.output,
            checkpoint=args.checkpoint,
            wal=args.wal,
            selector=args.selector,
            subscription=args.subscription,
            client_id=args.client_id,
            trigger=args.trigger,
            max_per_trigger=args.max_per_trigger,
            aggregate_by=args.aggregate_by,
            sum_property=args.sum,
            extra_options=extra,
            out=out,
            max_runs=20 if args.until_empty else 1,
        )
    finally:
        spark.stop()
    out.emit(
        {
            "rows": result.rows,
            "distinct_messages": result.distinct_ids,
            "duplicates": result.duplicates,
            "seconds": round(result.seconds, 2),
            "output": str(result.output),
            "aggregate": result.aggregate,
        }
    )
    out.table(
        f"pipeline {args.destination} → {result.output}",
        ["rows", "distinct", "duplicates", "seconds"],
        [[result.rows, result.distinct_ids, result.duplicates, f"{result.seconds:.1f}"]],
    )
    if result.aggregate:
        cols = list(result.aggregate[0])
        out.table(f"by {args.aggregate_by}", cols, [[r[c] for c in cols] for r in result.aggregate])
    return 0
