"""Broker throughput: the embedded broker against RabbitMQ 3.10 (AMQP 1.0 plugin), same workload.

A raw python-qpid-proton client (one Container: a producer connection and a consumer
connection) moves N 256-byte messages through one queue, 1 producer -> 1 consumer, in three
modes: unsettled (consumer accepts each message), presettled, and ``durable=true`` unsettled.
The rate is messages received per second from the first send to the last receive. Both brokers
run in their own processes; the baseline (RabbitMQ) is measured in the same run.

    .venv/bin/python benchmarks/broker_bench.py [--quick] [--n N] [--memory]

``--memory`` also queues 10^6 messages of 256 B in the embedded broker and reports its RSS.
Last line: ``broker_bench: ratio <x> (goal 1.0)`` (the worst of the per-mode ratios).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

from proton import Message
from proton.handlers import MessagingHandler
from proton.reactor import AtMostOnce, Container

PAYLOAD = b"x" * 256


class Run(MessagingHandler):
    def __init__(self, url: str, address: str, n: int, *, presettled: bool, durable: bool) -> None:
        super().__init__(prefetch=500, auto_accept=not presettled)
        self.url, self.address, self.n = url, address, n
        self.presettled, self.durable = presettled, durable
        self.sent = 0
        self.received = 0
        self.t0 = 0.0
        self.t1 = 0.0

    def on_start(self, event: Any) -> None:
        c = event.container
        self.rconn = c.connect(self.url, reconnect=False)
        self.sconn = c.connect(self.url, reconnect=False)
        opts = [AtMostOnce()] if self.presettled else None
        c.create_receiver(self.rconn, self.address, options=opts)
        c.create_sender(self.sconn, self.address, options=opts)

    def on_sendable(self, event: Any) -> None:
        if not self.t0:
            self.t0 = time.perf_counter()
        s = event.sender
        while s.credit and self.sent < self.n:
            s.send(Message(body=PAYLOAD, durable=self.durable))
            self.sent += 1

    def on_message(self, event: Any) -> None:
        self.received += 1
        if self.received == self.n:
            self.t1 = time.perf_counter()
            self.rconn.close()
            self.sconn.close()

    def rate(self) -> float:
        return self.n / (self.t1 - self.t0) if self.t1 else 0.0


def measure(url: str, address: str, n: int, *, presettled: bool, durable: bool) -> float:
    h = Run(url, address, n, presettled=presettled, durable=durable)
    Container(h).run()
    return h.rate()


class EmbeddedProcess:
    """The embedded broker in its own process (as a user runs it: ``python -m amqp_jms.broker``)."""

    def __init__(self, data_dir: str | None) -> None:
        cmd = [sys.executable, "-m", "amqp_jms.broker", "--port", "0", "-q"]
        if data_dir:
            cmd += ["--data-dir", data_dir]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"(amqp://\S+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"broker did not start: {line!r}")
        self.url = m.group(1)

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (to compare brokers independent of the client)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


Result = dict[str, tuple[float, float]]  # mode -> (msg/s, broker CPU µs per message)


def run_modes(url: str, pid: int, address: str, n: int) -> Result:
    out: Result = {}
    measure(url, address + "warmup", min(n, 2000), presettled=False, durable=False)
    for name, pre, dur in MODES:
        c0 = cpu_seconds(pid)
        rate = measure(url, f"{address}bench-{name}", n, presettled=pre, durable=dur)
        out[name] = (rate, (cpu_seconds(pid) - c0) / n * 1e6)
    return out


MODES = [("unsettled", False, False), ("presettled", True, False), ("durable", False, True)]


def bench_embedded(n: int) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        b = EmbeddedProcess(tmp)
        try:
            return run_modes(b.url, b.proc.pid, "", n)
        finally:
            b.stop()


def bench_rabbitmq(n: int) -> Result | None:
    from amqp_jms.testing.rabbitmq import RabbitMQ, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"RabbitMQ unavailable: {reason}", file=sys.stderr)
        return None
    with RabbitMQ() as rmq:
        assert rmq.pid is not None
        return run_modes(rmq.url, rmq.pid, "/queue/", n)


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def bench_memory(count: int) -> tuple[float, float, int]:
    """Queue ``count`` 256 B messages in an in-process broker; (RSS MB before, after, paged).

    Messages are published through the router (parse + route, as for a transfer) rather than
    over a socket, so the figure is the broker's storage cost, not the client's speed.
    """
    from amqp_jms.broker import Broker
    from amqp_jms.broker.message import BrokerMessage

    encoded = bytes(Message(body=PAYLOAD, durable=False).encode())
    with Broker() as b:
        before = _rss_mb()
        core = b.core
        assert core is not None

        def publish(n: int) -> None:
            router = core.router
            router.queue("memory")
            now = router.clock()
            for _ in range(n):
                data = bytes(bytearray(encoded))  # a distinct object per message, as from a socket
                router.publish("memory", BrokerMessage.parse(data, now=now))

        done = 0
        while done < count:
            k = min(50_000, count - done)
            b.run_soon(publish, k)
            done += k
        after = _rss_mb()
        paged = int(b.run_soon(lambda: core.router.queues["memory"].paged))
    return before, after, paged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small run (< 60 s)")
    ap.add_argument("--n", type=int, default=None, help="messages per mode")
    ap.add_argument("--memory", action="store_true", help="also measure RSS with 10^6 queued messages")
    args = ap.parse_args(argv)
    n = args.n or (5000 if args.quick else 50000)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    ours = bench_embedded(n)
    for k, (rate, cpu) in ours.items():
        print(f"embedded  {k:>10}: {rate:9.0f} msg/s   broker CPU {cpu:6.0f} us/msg")
    theirs = bench_rabbitmq(n)
    ratios = []
    if theirs:
        for k, (rate, cpu) in theirs.items():
            r = ours[k][0] / rate if rate else 0.0
            ratios.append(r)
            print(f"rabbitmq  {k:>10}: {rate:9.0f} msg/s   broker CPU {cpu:6.0f} us/msg   "
                  f"ratio {r:.2f} (CPU ratio {cpu / ours[k][1] if ours[k][1] else 0:.2f})")
    if args.memory:
        before, after, paged = bench_memory(1_000_000)
        print(f"memory: 10^6 x 256 B queued: process RSS {after:.0f} MB (before {before:.0f} MB, "
              f"{paged} paged to disk; goal < 300 MB)")
    ratio = min(ratios) if ratios else 0.0
    print(f"broker_bench: ratio {ratio:.2f} (goal 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
