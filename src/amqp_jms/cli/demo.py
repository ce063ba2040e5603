"""``amqp-jms demo`` (``./scripts/demo``): the project's end-to-end job, with a report.

1. starts the embedded broker with a durable store in ``DATA/broker`` (or uses ``--url``);
2. writes an IBM MQ queue dump of orders (RFH2 JMS messages: text, map, bytes, stream) and
   bridges it into ``queue://orders`` (MQMD/RFH2 → JMS → AMQP);
3. produces the order stream with the JMS API (TextMessages of JSON and MapMessages with typed
   properties ``region``/``total``/``priority``, JMSType, correlation ids, some with a delivery
   delay or a TTL);
4. runs the Spark Structured Streaming pipeline: ``readStream.format("jms")`` with a selector,
   ``availableNow``, into Parquet under ``DATA/out/``, plus a per-region aggregate;
5. drains what the selector left, accounts for every order by its ``order_id`` (hits, duplicates,
   losses — which must be 0), prints it and writes ``DATA/report.png``.

The embedded broker serves its Prometheus metrics (``--metrics``, on a free port): the messages
each sending stage delivered are the broker's count of what entered the queue, and the report
shows the queue's counts at the end as the broker saw them (enqueued, consumed, expired,
dead-lettered, depth). With ``--url`` there is no such endpoint and the demo counts on its own.

Exit code 0 only when nothing was lost.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..exceptions import JMSException
from ._client import connect
from ._common import CommandFailed, Output, UsageError, add_common, require_extras
from ._demo_data import SELECTOR, Order, build_jms_message, orders, write_mq_dump
from ._demo_report import DemoReport, Stage, write_chart

__all__ = ["DEFAULT_MESSAGES", "register", "run", "run_demo"]

DEFAULT_MESSAGES = 5000
"""Orders by default. Measured: 5000 took 3 min on the project's 2-core machine while it was
shared (load ~8), most of it Spark (session start, the query runs, the final empty-check wait);
the broker, bridge and producers took under 5 s of it."""

QUEUE = "queue://orders"


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``demo`` subparser."""
    p = sub.add_parser(
        name,
        help=help_text,
        description="Run the end-to-end job: embedded broker with a durable store, an IBM MQ dump "
        "bridged into queue://orders, a JMS order stream, the Spark streaming pipeline with a "
        "selector into Parquet, and a report (tables + DATA/report.png). Fails if any message "
        "was lost.",
        epilog="examples:\n  amqp-jms demo\n  amqp-jms demo --messages 2000\n"
        "  amqp-jms demo --url amqp://broker.example:5672",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    p.add_argument(
        "--messages",
        "-n",
        type=int,
        default=DEFAULT_MESSAGES,
        help=f"orders in total, MQ dump included (default {DEFAULT_MESSAGES})",
    )
    p.add_argument("--url", help="use this broker instead of starting the embedded one")
    p.add_argument(
        "--data-dir", type=Path, default=Path("demo-data"), help="where everything goes (default ./demo-data)"
    )
    p.add_argument(
        "--mq-share", type=float, default=0.1, help="share of orders that arrive through the MQ dump"
    )
    p.add_argument("--seed", type=int, default=7, help="random seed of the order generator")
    p.set_defaults(func=run)


@contextlib.contextmanager
def _broker(url: str | None, data_dir: Path) -> Iterator[tuple[str, str | None]]:
    """(``url``, None) as is, or the embedded broker started as ``amqp-jms broker`` in a child
    process: (its URL, its metrics URL).

    A child process, not a thread: on 2 cores the broker, the producers and the Spark driver would
    otherwise share one GIL, and the broker is stopped with SIGTERM like in production.
    """
    if url:
        yield url, None
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    log = open(data_dir / "broker.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqp_jms.cli.main", "broker", "--port", "0", "--data-dir", str(data_dir),
         "--metrics", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "listening on " not in line:
            proc.wait(10)
            raise JMSException(
                f"the embedded broker did not start: {(data_dir / 'broker.log').read_text()[-500:]}"
            )
        metrics = line.split("(metrics on ", 1)[1].split(")")[0] if "(metrics on " in line else None
        yield line.split("listening on ", 1)[1].split()[0], metrics
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        log.close()


def _send_orders(url: str, batch: list[Order], out: Output, label: str) -> tuple[float, float]:
    """Send ``batch`` (persistent, asynchronously); (seconds until all are confirmed, last due time).

    ``jms.forceAsyncSend`` lets sends overlap; closing the connection waits for every outcome, so
    the time measured ends when the broker has stored the last order.
    """
    last_due = 0.0
    started = time.monotonic()
    with connect(_async_sends(url)) as conn:
        session = conn.create_session()
        producer = session.create_producer(conn_dest(QUEUE))
        with out.progress(label, len(batch)) as bar:
            for i, order in enumerate(batch):
                msg = build_jms_message(order, session)
                producer.set_priority(order.priority)
                producer.set_time_to_live(order.ttl_ms)
                producer.set_delivery_delay(order.delivery_delay_ms)
                producer.send(msg)
                if order.delivery_delay_ms:
                    last_due = max(last_due, time.time() + order.delivery_delay_ms / 1000)
                if i % 100 == 99:
                    bar.advance(100)
            bar.update(completed=len(batch))
    return time.monotonic() - started, last_due


def _queue_counts(metrics_url: str | None) -> dict[str, int] | None:
    """The orders queue's figures from the broker's metrics endpoint (None without one)."""
    if metrics_url is None:
        return None
    import urllib.request

    from ..broker.operations.metrics import parse

    with urllib.request.urlopen(metrics_url, timeout=30) as resp:
        samples = parse(resp.read().decode())
    name = conn_dest(QUEUE).get_queue_name()
    labels = (("address", name), ("queue", name))
    figures = ("enqueued_total", "dequeued_total", "expired_total", "depth", "delivering")
    counts = {f.removesuffix("_total"): int(samples.get((f"amqp_jms_broker_queue_{f}", labels), 0))
              for f in figures}
    counts["dead_lettered"] = sum(
        int(samples.get(("amqp_jms_broker_queue_dead_lettered_total", (*labels, ("reason", why))), 0))
        for why in ("delivery_limit", "rejected"))
    return counts


def _entered(before: dict[str, int] | None, metrics_url: str | None, own_count: int) -> int:
    """Messages that entered the queue since ``before``, by the broker's count; else ``own_count``."""
    after = _queue_counts(metrics_url)
    if before is None or after is None:
        return own_count
    return after["enqueued"] - before["enqueued"]


def _async_sends(url: str) -> str:
    """``url`` with ``jms.forceAsyncSend=true``, a failover URL's included (on its own query)."""
    from ..provider.failover.uri import with_client_options

    return with_client_options(url, [("jms.forceAsyncSend", "true")])


def conn_dest(text: str) -> Any:
    from ..destination import parse_destination

    return parse_destination(text)


def _drain(conn: Any, out: Output, expected: int) -> tuple[list[str], float]:
    """Consume everything left on the queue; the order ids found and the seconds it took."""
    session = conn.create_session()
    consumer = session.create_consumer(conn_dest(QUEUE))
    ids: list[str] = []
    started = time.monotonic()
    with out.progress("draining what the selector left", expected or None) as bar:
        while True:
            msg = consumer.receive(2000)
            if msg is None:
                break
            ids.append(str(msg.get_string_property("order_id")))
            bar.advance()
    seconds = time.monotonic() - started
    consumer.close()
    session.close()
    return ids, seconds


def run_demo(
    messages: int,
    data_dir: Path,
    *,
    url: str | None = None,
    mq_share: float = 0.1,
    seed: int = 7,
    out: Output | None = None,
) -> DemoReport:
    """Run the whole job; the report (``report.lost`` must be 0)."""
    from ..selector import Selector
    from .mq import import_dump
    from .pipeline import run_pipeline

    out = out or Output(quiet=True)
    t_start = time.monotonic()
    data_dir = Path(data_dir)
    for sub in ("broker", "out", "mq", "report.png"):
        p = data_dir / sub
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    data_dir.mkdir(parents=True, exist_ok=True)

    n_mq = max(1, min(messages - 1, round(messages * mq_share))) if messages > 1 else 0
    mq_orders = list(orders(n_mq, seed=seed + 1, prefix="mq", kinds=("text", "map", "bytes", "stream")))
    jms_orders = list(orders(messages - n_mq, seed=seed, prefix="ord"))
    selector = Selector(SELECTOR)
    all_ids = {o.order_id for o in mq_orders} | {o.order_id for o in jms_orders}
    expected_hits = {o.order_id for o in (*mq_orders, *jms_orders) if selector.matches(build_jms_message(o))}

    report = DemoReport(
        url=url or "embedded", selector=SELECTOR, produced=len(all_ids), selector_expected=len(expected_hits)
    )
    with _broker(url, data_dir / "broker") as (broker_url, metrics_url):
        report.url = broker_url
        out.info(f"broker: {broker_url}" + ("" if url else f" (embedded, store in {data_dir / 'broker'})"))

        # 1-2. the MQ dump, bridged into queue://orders
        dump = data_dir / "mq" / "orders.dmp"
        write_mq_dump(dump, mq_orders)
        t0 = time.monotonic()
        counts = _queue_counts(metrics_url)
        bridged = (
            import_dump(_async_sends(broker_url), dump, QUEUE, out)
            if mq_orders
            else 0
        )
        seconds = time.monotonic() - t0
        bridged = _entered(counts, metrics_url, bridged)
        report.stages.append(
            Stage(
                "MQ dump → AMQP bridge",
                len(mq_orders),
                bridged,
                seconds,
                f"{dump.name}: text/map/bytes/stream RFH2",
            )
        )

        # 3. the JMS order stream
        counts = _queue_counts(metrics_url)
        seconds, last_due = _send_orders(broker_url, jms_orders, out, "JMS producers → queue://orders")
        delayed = sum(1 for o in jms_orders if o.delivery_delay_ms)
        report.stages.append(
            Stage(
                "JMS producers",
                len(jms_orders),
                _entered(counts, metrics_url, len(jms_orders)),
                seconds,
                f"{delayed} delayed, {sum(1 for o in jms_orders if o.ttl_ms)} with TTL",
            )
        )
        wait = last_due - time.time()
        if wait > 0:  # availableNow reads what is there: let the delayed orders become deliverable
            out.info(f"waiting {wait:.1f} s for delayed deliveries")
            time.sleep(wait + 0.2)

        # 4. Spark: readStream jms with the selector → Parquet, then the aggregate
        out.info("Spark pipeline: readStream.format('jms') with the selector, availableNow → Parquet")
        # started here, on this thread: a SparkSession built on another thread gave the streaming
        # source no rows (measured with Spark 4.3), so the ~7 s start is not overlapped
        from .pipeline import spark_session

        spark = spark_session("local[2]", "amqp-jms demo")
        try:
            result = run_pipeline(
                spark,
                url=broker_url,
                destination=QUEUE,
                output=data_dir / "out",
                selector=SELECTOR,
                aggregate_by="region",
                out=out,
                max_runs=20,
            )
            found_rows = _order_ids(spark, data_dir / "out" / "data")
        finally:
            spark.stop()
        found = set(found_rows)
        report.parquet_rows = len(found_rows)
        report.selector_hits = len(found & expected_hits)
        report.duplicates = len(found_rows) - len(found)
        report.unexpected = len(found - expected_hits)
        report.by_region = result.aggregate
        report.stages.append(
            Stage(
                "Spark jms source → Parquet",
                report.produced,
                len(found_rows),
                result.seconds,
                f"selector hits {report.selector_hits}",
            )
        )

        # 5. what the selector left behind
        with connect(broker_url) as conn:
            rest, seconds = _drain(conn, out, report.produced - len(found))
        report.remaining = len(rest)
        report.stages.append(Stage("drain (not selected)", report.produced - len(found), len(rest), seconds))
        # lost: an order found nowhere, or one the selector should have delivered to Parquet that
        # is not there (even if it is still on the queue: the job's output lacks it)
        report.lost = len((all_ids - found - set(rest)) | (expected_hits - found))
        report.broker = _queue_counts(metrics_url) or {}
    report.output = str(data_dir / "out")
    report.seconds = time.monotonic() - t_start
    report.chart = str(write_chart(report, data_dir / "report.png"))
    return report


def _order_ids(spark: Any, parquet_dir: Path) -> list[str]:
    if not parquet_dir.exists():
        return []
    from pyspark.sql import functions as F

    df = spark.read.parquet(str(parquet_dir))
    return [str(r[0]) for r in df.select(F.col("properties")["order_id"]).collect()]


def run(args: argparse.Namespace, out: Output) -> int:
    if args.messages < 2:
        raise UsageError("--messages must be at least 2")
    if not 0.0 <= args.mq_share < 1.0:
        raise UsageError("--mq-share must be in [0, 1)")
    # before the broker, the MQ bridge and the producers: Spark's step comes last
    require_extras("amqp-jms demo", "spark", "demo", java=True)
    report = run_demo(
        args.messages, args.data_dir, url=args.url, mq_share=args.mq_share, seed=args.seed, out=out
    )
    out.emit(report.as_dict())
    report.print(out)
    if report.lost:
        raise CommandFailed(f"{report.lost} message(s) lost")
    return 0
