"""container_bench: the listener container against a hand-written receive loop (issue 28).

Same embedded broker (in its own process), same run, same work: N text messages preloaded on a
queue, each handled by a trivial handler (reads the body) and settled only after the handler
returned. The baseline is the loop a careful application writes by hand: one connection, one
INDIVIDUAL_ACKNOWLEDGE session, ``receive`` → handler → ``message.acknowledge()``. The container
(``ListenerContainer``, mode auto: the same guarantee) runs at concurrency 1, 4 and 8. Each run
is timed from creating the connection to the last message handled, and rounds rotate the
variants' order (each goes first once), keeping the best (the machine is shared).

Printed: messages/s of each, the container's ratio at each concurrency, the client process's
CPU time per message (all its threads; the broker is another process: the figure the machine's
load disturbs least), and the latency the container adds per message at concurrency 1
(``1/rate_container - 1/rate_loop``, and the same in client CPU).

The last line's ratio is the throughput ratio at concurrency 1 as the client's CPU sets it
(``cpu_per_message_loop / cpu_per_message_container``): both clients are CPU-bound with the
broker on another core, so that is the rate each sustains on an idle machine, and it is the
figure a shared machine disturbs least (the wall-clock ratio, also printed, swung from 0.6 to
2.0 between identical runs at a load average of 11 on 2 cores). **Goal: the
container at concurrency 1 ≥ 0.9× the hand-written loop** (last line).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from amqp_jms import ConnectionFactory, Queue, Session
from amqp_jms.container import ListenerContainer
from amqp_jms.testing.broker_process import BrokerProcess

GOAL = 0.9


def preload(url: str, queue: str, n: int) -> None:
    with ConnectionFactory(url + "?jms.forceAsyncSend=true").create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(queue))
        for i in range(n):
            p.send(s.create_text_message(f"order {i}"))


class Handler:
    """The same trivial handler for both: reads the body, counts, says when all are handled."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.done = threading.Event()

    def __call__(self, message: object) -> None:
        message.get_text()  # type: ignore[attr-defined]
        self.count += 1
        if self.count == self.n:
            self.done.set()


def hand_loop(url: str, queue: str, n: int) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(Session.INDIVIDUAL_ACKNOWLEDGE).create_consumer(Queue(queue))
        handler = Handler(n)
        for _ in range(n):
            m = consumer.receive(10_000)
            if m is None:
                raise SystemExit("hand loop: a message is missing")
            handler(m)
            m.acknowledge()
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return n / elapsed, cpu / n


def container(url: str, queue: str, n: int, concurrency: int) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    handler = Handler(n)
    c = ListenerContainer(url, handler, Queue(queue), concurrency=concurrency, receive_timeout_s=0.5,
                          telemetry=False)
    c.start()
    if not handler.done.wait(120):
        raise SystemExit(f"container: only {handler.count} of {n} handled")
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    c.stop()
    return n / elapsed, cpu / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a short run (< 60 s)")
    ap.add_argument("--messages", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    n = args.messages or (3000 if args.quick else 20000)
    rounds = args.rounds or (4 if args.quick else 8)
    broker = BrokerProcess()
    variants = {"hand-written loop": None, "container c=1": 1, "container c=4": 4, "container c=8": 8}
    best = dict.fromkeys(variants, 0.0)
    cpu = dict.fromkeys(variants, float("inf"))
    try:
        names = list(variants)
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:  # each goes first once
                conc = variants[name]
                q = f"bench-{r}-{conc or 0}"
                preload(broker.url, q, n)
                time.sleep(0.3)  # the broker settles what the preload left (its store, its loop)
                rate, per = hand_loop(broker.url, q, n) if conc is None else container(broker.url, q, n, conc)
                best[name] = max(best[name], rate)
                cpu[name] = min(cpu[name], per)
    finally:
        broker.stop()
    base = best["hand-written loop"]
    print(f"{n} messages, best of {rounds} rounds, broker in its own process")
    print(f"{'variant':22s} {'msgs/s':>10s} {'vs loop':>8s} {'client CPU us/msg':>18s}")
    for name, rate in best.items():
        print(f"{name:22s} {rate:10.0f} {rate / base:8.2f} {cpu[name] * 1e6:18.1f}")
    added_us = (1 / best["container c=1"] - 1 / base) * 1e6
    added_cpu = (cpu["container c=1"] - cpu["hand-written loop"]) * 1e6
    print(f"latency the container adds per message (c=1): {added_us:.1f} us wall, "
          f"{added_cpu:.1f} us client CPU")
    wall = best["container c=1"] / base
    cpu_ratio = cpu["hand-written loop"] / cpu["container c=1"]
    print(f"throughput ratio at c=1: {wall:.2f} wall clock, {cpu_ratio:.2f} from client CPU per message")
    print(f"container_bench: ratio {cpu_ratio:.2f} (goal {GOAL})")


if __name__ == "__main__":
    main()
