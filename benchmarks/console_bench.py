"""console_bench: the broker's AMQP throughput with console pages being read, against none.

The embedded broker runs as a subprocess with ``--console``; the C load generator
(``benchmarks/c/amqp_load.c``, built as broker_bench builds it) sends and receives N unsettled
messages through one queue, first with nobody on the console, then while a client reads console
pages as fast as it can (the queues page and the queue's message page, one after the other: far
more than a tab refreshing every 2 s), interleaved over the rounds. The ratio is the best rate
with the console read over the best rate without (goal >= 0.9: an open console must not slow
the AMQP side). Also printed: how many pages a second the console served meanwhile.

    .venv/bin/python benchmarks/console_bench.py [--quick] [-n N] [--rounds R]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from broker_bench import build_c_clients, run_c

from amqp_jms.testing.broker_process import BrokerProcess

GOAL = 0.9


def reader(base: str, stop: threading.Event, pages: list[int]) -> None:
    """Read console pages back to back until ``stop``; count them."""
    urls = [base + "queues", base + "queues/bench-console-page"]
    i = 0
    while not stop.is_set():
        try:
            with urllib.request.urlopen(urls[i % 2], timeout=10) as r:
                r.read()
            pages[0] += 1
        except OSError:
            time.sleep(0.05)
        i += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run (< 60 s)")
    ap.add_argument("-n", type=int, default=None, help="messages per measurement")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    n = args.n or (20_000 if args.quick else 100_000)
    rounds = args.rounds or (2 if args.quick else 3)
    tools, why = build_c_clients()
    if not tools:
        print(f"console_bench: skipped: {why}")
        return 0
    proc = BrokerProcess("--console", "--metrics", "127.0.0.1:0")
    try:
        url = proc.url
        base = proc.console_url
        assert base is not None, "the broker did not print its console address"
        # a page with messages on it: 100 waiting in the queue the message page shows
        host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
        subprocess.run([str(tools["amqp_load"]), "send", host, port, "bench-console-page", "100"],
                       check=True, timeout=60)
        best = {"without": 0.0, "with": 0.0}
        served = []
        for r in range(rounds):
            rate = run_c(tools, url, f"bench-console-{r}-a", n, 1, "unsettled")
            best["without"] = max(best["without"], rate)
            print(f"round {r + 1} without console {rate:10.0f} msg/s", flush=True)
            stop, pages = threading.Event(), [0]
            t = threading.Thread(target=reader, args=(base, stop, pages), daemon=True)
            t.start()
            t0 = time.perf_counter()
            rate = run_c(tools, url, f"bench-console-{r}-b", n, 1, "unsettled")
            stop.set()
            t.join(15)
            per_s = pages[0] / (time.perf_counter() - t0)
            served.append(per_s)
            best["with"] = max(best["with"], rate)
            print(f"round {r + 1} console being read {rate:10.0f} msg/s ({per_s:.0f} pages/s)", flush=True)
    finally:
        proc.stop()
    ratio = best["with"] / best["without"]
    print(f"best without {best['without']:.0f} msg/s, with the console read {best['with']:.0f} msg/s, "
          f"console pages served {max(served):.0f}/s")
    print(f"console_bench: ratio {ratio:.2f} (goal {GOAL})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
