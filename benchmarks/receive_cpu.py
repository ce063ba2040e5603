"""receive_cpu: the application thread's CPU per received message, this tree against another.

Why CPU time and not throughput: the receive policy, the vetting and the acknowledgement run on
the thread that calls ``receive`` (the blocking face) or on the event loop (the asyncio face);
their cost is that thread's CPU time per message, which a shared, loaded machine changes far
less than it changes wall-clock throughput (the I/O thread and the broker share the cores with
everything else). Each figure: a queue filled with n messages (untimed), then an
AUTO_ACKNOWLEDGE consumer with the default prefetch receives them all; ``time.thread_time()`` of
the receiving thread over the receives, in microseconds per message.

``--ab-src DIR`` runs the same figures, alternating, with another tree's ``src`` (a checkout
of the base commit, say) on the path; the ratio is that tree's CPU over this tree's, each the
least of its rounds (the goal, 1.0 within noise: this tree's receive costs no more). Without it
the other side is this tree
too (a check of the noise). Each side runs in its own process with its own broker process.

    PYTHONPATH=src .venv/bin/python benchmarks/receive_cpu.py --ab-src /tmp/base/src [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL = 1.0
HERE = Path(__file__).resolve()
SRC = HERE.parents[1] / "src"


def _child(url: str, n: int) -> dict[str, float]:
    """In the child process: both figures against the broker at ``url``."""
    import asyncio

    from amqp_jms import ConnectionFactory, DeliveryMode, Queue
    from amqp_jms.aio import AsyncConnectionFactory

    def fill(address: str) -> None:
        with ConnectionFactory(url).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue(address))
            p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
            body = b"x" * 256
            for _ in range(n):
                m = s.create_bytes_message()
                m.write_bytes(body)
                p.send(m)

    def blocking(address: str) -> float:
        fill(address)
        with ConnectionFactory(url).create_connection() as conn:
            c = conn.create_session().create_consumer(Queue(address))
            conn.start()
            t0 = time.thread_time()
            for i in range(n):
                if c.receive(10_000) is None:
                    raise RuntimeError(f"receive: only {i} of {n}")
            return (time.thread_time() - t0) / n * 1e6

    def aio(address: str) -> float:
        fill(address)

        async def run() -> float:
            async with await AsyncConnectionFactory(url).create_connection() as conn:
                s = await conn.create_session()
                c = await s.create_consumer(Queue(address))
                await conn.start()
                t0 = time.thread_time()
                for i in range(n):
                    if await c.receive(10_000) is None:
                        raise RuntimeError(f"asyncio receive: only {i} of {n}")
                return (time.thread_time() - t0) / n * 1e6

        return asyncio.run(run())

    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    return {"blocking receive": blocking(f"cpu-b-{tag}"), "asyncio receive": aio(f"cpu-a-{tag}")}


def _run_side(src: Path, url: str, n: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, str(HERE), "--child", url, "-n", str(n)], env=env,
                         capture_output=True, text=True, check=True, timeout=600)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small run (< 60 s)")
    ap.add_argument("-n", type=int, default=None, help="messages per figure")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--ab-src", type=Path, default=None, help="the other tree's src folder")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    n = args.n or (3000 if args.quick else 20_000)
    if args.child:
        print(json.dumps(_child(args.child, n)))
        return 0
    rounds = args.rounds or (2 if args.quick else 5)
    other = args.ab_src or SRC
    sys.path.insert(0, str(HERE.parent))
    from client_bench import broker_process

    figures: dict[str, dict[str, list[float]]] = {}
    with broker_process() as url:
        for r in range(rounds):
            # alternate which side goes first, so a change of load hits both alike
            order = [("this", SRC), ("other", other)] if r % 2 == 0 else [("other", other), ("this", SRC)]
            for side, src in order:
                for name, us in _run_side(src, url, n).items():
                    figures.setdefault(name, {}).setdefault(side, []).append(us)
                    print(f"round {r + 1} {name:18} {side:5} {us:7.1f} us/msg", flush=True)
    print(f"\nload average: {os.getloadavg()[0]:.1f}")
    print(f"{'figure':20} {'this':>9} {'other':>9} {'other/this':>10}   us of CPU per message: the least "
          "of the rounds (what the code costs; the load only adds), then the median")
    ratios = []
    for name, sides in figures.items():
        this, oth = min(sides["this"]), min(sides["other"])
        ratios.append(oth / this)
        medians = f"median {statistics.median(sides['this']):.1f} / {statistics.median(sides['other']):.1f}"
        print(f"{name:20} {this:9.1f} {oth:9.1f} {oth / this:10.2f}   {medians}")
    print(f"receive_cpu: ratio {min(ratios):.2f} (goal {GOAL:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
