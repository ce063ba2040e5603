"""Broker throughput: the embedded broker against RabbitMQ 3.10 (AMQP 1.0 plugin), same workload.

A raw python-qpid-proton client (one Container: a producer connection and a consumer
connection) moves N 256-byte messages through one queue, 1 producer -> 1 consumer, in three
modes: unsettled (consumer accepts each message), presettled, and ``durable=true`` unsettled.
The rate is messages received per second from the first send to the last receive. Both brokers
run in their own processes at the same time; the baseline (RabbitMQ) is measured in the same run,
in interleaved rounds (best round kept per broker and mode, as the machine is shared). Broker CPU
per message (from /proc) is reported too: it does not depend on the client's speed.

    .venv/bin/python benchmarks/broker_bench.py [--quick] [--n N] [--memory]

``--memory`` also queues 10^6 messages of 256 B in the embedded broker and reports its RSS.
Last line: ``broker_bench: ratio <x> (goal 1.0)`` (the worst of the per-mode ratios).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
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


MODES = [("unsettled", False, False), ("presettled", True, False), ("durable", False, True)]


class Peer:
    """A broker under test: its URL, the PID whose CPU we count, and its address prefix."""

    def __init__(self, name: str, url: str, pid: int, prefix: str) -> None:
        self.name, self.url, self.pid, self.prefix = name, url, pid, prefix
        self.best: dict[str, float] = {}
        self.cpu: dict[str, list[float]] = {}

    def run(self, mode: str, n: int, presettled: bool, durable: bool, round_no: int) -> None:
        c0 = cpu_seconds(self.pid)
        rate = measure(self.url, f"{self.prefix}bench-{mode}-{round_no}", n, presettled=presettled,
                       durable=durable)
        self.cpu.setdefault(mode, []).append((cpu_seconds(self.pid) - c0) / n * 1e6)
        self.best[mode] = max(self.best.get(mode, 0.0), rate)


def bench(n: int, rounds: int) -> tuple[Peer, Peer | None]:
    """Both brokers up at once; rounds interleave them (the machine is shared: load drifts)."""
    from amqp_jms.testing.rabbitmq import RabbitMQ, unavailable_reason

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        emb = EmbeddedProcess(tmp)
        stack.callback(emb.stop)
        ours = Peer("embedded", emb.url, emb.proc.pid, "")
        theirs: Peer | None = None
        reason = unavailable_reason()
        if reason is None:
            rmq = stack.enter_context(RabbitMQ())
            assert rmq.pid is not None
            theirs = Peer("rabbitmq", rmq.url, rmq.pid, "/queue/")
        else:
            print(f"RabbitMQ unavailable: {reason}", file=sys.stderr)
        peers = [p for p in (ours, theirs) if p is not None]
        for p in peers:
            measure(p.url, p.prefix + "warmup", min(n, 2000), presettled=False, durable=False)
        for r in range(rounds):
            for mode, pre, dur in MODES:
                for p in peers if r % 2 == 0 else reversed(peers):
                    p.run(mode, n, pre, dur, r)
        return ours, theirs


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
    ap.add_argument("--n", type=int, default=None, help="messages per mode and round")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (best kept)")
    ap.add_argument("--memory", action="store_true", help="also measure RSS with 10^6 queued messages")
    args = ap.parse_args(argv)
    n = args.n or (3000 if args.quick else 20000)
    args.rounds = args.rounds or (1 if args.quick else 3)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    ours, theirs = bench(n, args.rounds)
    ratios = []
    for mode, _, _ in MODES:
        our_cpu = statistics.mean(ours.cpu[mode])
        line = f"{mode:>10}: embedded {ours.best[mode]:7.0f} msg/s ({our_cpu:4.0f} us CPU/msg)"
        if theirs is not None:
            r = ours.best[mode] / theirs.best[mode] if theirs.best[mode] else 0.0
            ratios.append(r)
            their_cpu = statistics.mean(theirs.cpu[mode])
            line += (f"   rabbitmq {theirs.best[mode]:7.0f} msg/s ({their_cpu:4.0f} us CPU/msg)   "
                     f"ratio {r:.2f}, CPU ratio {their_cpu / our_cpu:.2f}")
        print(line)
    if args.memory:
        before, after, paged = bench_memory(1_000_000)
        print(f"memory: 10^6 x 256 B queued: process RSS {after:.0f} MB (before {before:.0f} MB, "
              f"{paged} paged to disk; goal < 300 MB)")
    ratio = min(ratios) if ratios else 0.0
    print(f"broker_bench: ratio {ratio:.2f} (goal 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
