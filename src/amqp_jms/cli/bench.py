"""``amqp-jms bench``: send then receive N messages through any broker and report the throughput.

A quick, honest number for "how fast is this broker/URL from here": each phase is timed from the
first call to the last acknowledgement, through the public JMS API (so URL options such as
``jms.forceAsyncSend`` or ``jms.prefetchPolicy.all`` show their effect).
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from ._client import connect
from ._common import CommandFailed, Output, UsageError, add_common, add_url, parse_destination_arg

__all__ = ["PhaseResult", "register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``bench`` subparser."""
    p = sub.add_parser(
        name,
        help=help_text,
        description="Send --messages messages of --size bytes to a destination, then receive them "
        "all, and print msgs/s and MiB/s per phase. The destination defaults to a fresh queue.",
        epilog="examples:\n  amqp-jms bench --messages 20000\n"
        "  amqp-jms bench --url 'amqp://127.0.0.1:5672?jms.forceAsyncSend=true' --non-persistent",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    add_url(p)
    p.add_argument("--destination", "-d", help="queue or topic to use (default: queue://bench-<random>)")
    p.add_argument("--messages", "-n", type=int, default=10000, help="messages per phase (default 10000)")
    p.add_argument("--size", type=int, default=256, help="body size in bytes (default 256)")
    p.add_argument("--non-persistent", action="store_true", help="send NON_PERSISTENT (default PERSISTENT)")
    p.add_argument("--phase", choices=("both", "send", "receive"), default="both", help="what to measure")
    p.add_argument("--timeout", type=float, default=30.0, help="receive gives up after this idle time (s)")
    p.set_defaults(func=run)


@dataclass(frozen=True)
class PhaseResult:
    """One measured phase."""

    phase: str
    messages: int
    seconds: float
    size: int

    @property
    def rate(self) -> float:
        return self.messages / self.seconds if self.seconds > 0 else 0.0

    @property
    def mib_per_s(self) -> float:
        return self.rate * self.size / (1024 * 1024)


def run(args: argparse.Namespace, out: Output) -> int:
    if args.messages < 1 or args.size < 0:
        raise UsageError("--messages must be at least 1 and --size not negative")
    dest = parse_destination_arg(args.destination or f"queue://bench-{uuid.uuid4().hex[:8]}")
    payload = os.urandom(args.size)
    results: list[PhaseResult] = []
    with connect(args.url) as conn:
        session = conn.create_session()
        consumer = None
        if args.phase in ("both", "receive") and str(dest).startswith("topic://"):
            consumer = session.create_consumer(dest)  # a topic only keeps what a subscriber sees
        if args.phase in ("both", "send"):
            producer = session.create_producer(dest)
            if args.non_persistent:
                producer.set_delivery_mode(1)
            with out.progress(f"send → {dest}", args.messages) as bar:
                t0 = time.perf_counter()
                step = max(1, args.messages // 100)
                for i in range(args.messages):
                    msg = session.create_bytes_message()
                    msg.write_bytes(payload)
                    producer.send(msg)
                    if i % step == step - 1:
                        bar.advance(step)
                producer.close()
                results.append(PhaseResult("send", args.messages, time.perf_counter() - t0, args.size))
                bar.update(completed=args.messages)
        if args.phase in ("both", "receive"):
            if consumer is None:
                consumer = session.create_consumer(dest)
            got = 0
            with out.progress(f"receive ← {dest}", args.messages) as bar:
                t0 = time.perf_counter()
                t_last = t0
                while got < args.messages:
                    m = consumer.receive(int(args.timeout * 1000))
                    if m is None:
                        break
                    got += 1
                    t_last = time.perf_counter()
                    if got % 100 == 0:
                        bar.advance(100)
                bar.update(completed=got)
            consumer.close()
            results.append(PhaseResult("receive", got, max(t_last - t0, 1e-9), args.size))
    for r in results:
        out.emit(
            {
                "phase": r.phase,
                "messages": r.messages,
                "seconds": round(r.seconds, 4),
                "msgs_per_s": round(r.rate, 1),
                "mib_per_s": round(r.mib_per_s, 3),
                "size": r.size,
                "url": args.url,
                "destination": str(dest),
            }
        )
    out.table(
        f"amqp-jms bench: {args.url} {dest}",
        ["phase", "messages", "seconds", "msgs/s", "MiB/s"],
        [[r.phase, r.messages, f"{r.seconds:.2f}", f"{r.rate:,.0f}", f"{r.mib_per_s:.2f}"] for r in results],
    )
    if args.phase in ("both", "receive") and results[-1].messages < args.messages:
        raise CommandFailed(f"received only {results[-1].messages} of {args.messages}")
    return 0
