"""sync_receive_bench: the receives a caller waits on, one message at a time, against the
physical limit of the same from any client.

The embedded broker runs as a subprocess (memory only). Baseline: the C load generator
(``benchmarks/c/amqp_load.c``) receiving with ``inflight=1``: one credit out at a time, topped
up as each message is taken and accepted, which is what a JMS pull consumer (prefetch 0) asks of
the peer per ``receive``. Ours, the same 256-byte messages put on the queue beforehand by the C
client, interleaved in the same rounds:

  receive()         a pull consumer (``jms.prefetchPolicy.all=0``), AUTO_ACKNOWLEDGE
  receive(timeout)  the same with ``receive(1000)`` (the message is there: no drain)
  receive_no_wait() the same with ``receive_no_wait()``: each credit goes out with a drain (Qpid
                    JMS's pull with no wait), whose answer, the message, the caller waits for
  request/reply     a request (the default producer: PERSISTENT, waits for its outcome) to a
                    responder on another connection, the reply awaited on a temporary queue;
                    the latency p50/p99 (no C equivalent: reported, not compared)

The last line is C's time per message over ours for ``receive()`` (goal 0.75: a waiting
receive within reach of the physical limit, as a waiting send).

    .venv/bin/python benchmarks/sync_receive_bench.py [--quick] [-n N] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from broker_bench import build_c_clients

from amqp_jms import ConnectionFactory, DeliveryMode, Queue
from amqp_jms.testing.broker_process import BrokerProcess

GOAL = 0.75
WARM = 50


def _c(tool: Path, url: str, *args: str) -> float:
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    t = time.perf_counter()
    subprocess.run([str(tool), args[0], host, port, *args[1:]], check=True, timeout=300,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def fill(tool: Path, url: str, address: str, n: int) -> None:
    _c(tool, url, "send", address, str(n))


def c_receive(tool: Path, url: str, address: str, n: int) -> float:
    """Seconds per message of the C receiver with one credit out at a time, timed from its
    "ready" (the link attached) to its exit (its connect left out; its close, one round trip,
    in)."""
    fill(tool, url, address, n)
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    proc = subprocess.Popen([str(tool), "receive", host, port, address, str(n), "inflight=1"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    t = time.perf_counter()
    if proc.wait(300) != 0:
        raise RuntimeError("amqp_load receive failed")
    return (time.perf_counter() - t) / n


def jms_receive(tool: Path, url: str, address: str, n: int, timeout_ms: int | None) -> float:
    """Seconds per message of ``receive()`` (``timeout_ms`` None), ``receive(timeout_ms)``, or
    ``receive_no_wait()`` (``timeout_ms`` 0)."""
    fill(tool, url, address, n + WARM)
    with ConnectionFactory(url + "?jms.prefetchPolicy.all=0").create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue(address))
        for _ in range(WARM):
            assert consumer.receive(5000) is not None
        receive = consumer.receive_no_wait if timeout_ms == 0 else consumer.receive
        t = time.perf_counter()
        for _ in range(n):
            m = receive() if not timeout_ms else receive(timeout_ms)
            assert m is not None
        return (time.perf_counter() - t) / n


def request_reply(url: str, address: str, n: int) -> list[float]:
    """Round-trip latencies (s) of ``n`` requests answered by a responder on its own connection."""
    stop = threading.Event()
    ready = threading.Event()

    def responder() -> None:
        with ConnectionFactory(url).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            consumer = s.create_consumer(Queue(address))
            producer = s.create_producer(None)
            producer.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
            ready.set()
            while not stop.is_set():
                req = consumer.receive(200)
                if req is not None:
                    reply = s.create_text_message(req.get_body(str))
                    reply.set_jms_correlation_id(req.get_jms_message_id())
                    producer.send(req.get_jms_reply_to(), reply)

    th = threading.Thread(target=responder, daemon=True)
    th.start()
    ready.wait(30)
    times: list[float] = []
    try:
        with ConnectionFactory(url).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            reply_to = s.create_temporary_queue()
            replies = s.create_consumer(reply_to)
            producer = s.create_producer(Queue(address))
            req = s.create_text_message("x" * 256)
            req.set_jms_reply_to(reply_to)
            pc = time.perf_counter
            for i in range(n + WARM):
                t0 = pc()
                producer.send(req)
                assert replies.receive(5000) is not None
                if i >= WARM:
                    times.append(pc() - t0)
    finally:
        stop.set()
        th.join(10)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run (< 60 s)")
    ap.add_argument("-n", type=int, default=None, help="messages per measurement")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    n = args.n or (1000 if args.quick else 5000)
    rounds = args.rounds or (2 if args.quick else 3)
    tools, why = build_c_clients()
    if not tools:
        print(f"sync_receive_bench: skipped: {why}")
        return 0
    tool = tools["amqp_load"]
    broker = BrokerProcess()
    best: dict[str, float] = {}
    rr: list[float] = []
    try:
        for r in range(rounds):
            figures = {
                "C one credit": c_receive(tool, broker.url, f"rc-{r}", n),
                "receive()": jms_receive(tool, broker.url, f"rj-{r}", n, None),
                "receive(timeout)": jms_receive(tool, broker.url, f"rt-{r}", n, 1000),
                "receive_no_wait()": jms_receive(tool, broker.url, f"rn-{r}", n, 0),
            }
            lat = request_reply(broker.url, f"rr-{r}", n)
            print(f"round {r + 1}: " + ", ".join(f"{k} {v * 1e6:.0f} us" for k, v in figures.items())
                  + f", request/reply p50 {statistics.median(lat) * 1e6:.0f} us", flush=True)
            for k, v in figures.items():
                best[k] = min(best.get(k, v), v)
            if not rr or statistics.median(lat) < statistics.median(rr):
                rr = lat
    finally:
        broker.stop()
    c = best["C one credit"]
    for k in ("receive()", "receive(timeout)", "receive_no_wait()"):
        print(f"{k:17s} {best[k] * 1e6:6.0f} us/message ({1 / best[k]:,.0f} msg/s), "
              f"{c / best[k]:.2f}x C with one credit out ({c * 1e6:.0f} us)")
    q = statistics.quantiles(rr, n=100)
    print(f"request/reply     p50 {statistics.median(rr) * 1e6:.0f} us, p99 {q[98] * 1e6:.0f} us "
          f"({len(rr)} round trips)")
    print(f"sync_receive_bench: ratio {c / best['receive()']:.2f} (goal {GOAL})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
