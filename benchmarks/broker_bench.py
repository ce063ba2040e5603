"""Broker throughput: the embedded broker against RabbitMQ 3.10 (AMQP 1.0 plugin), same workload.

Measures brokers, not clients. The headline is driven by C clients (proton-c's proactor),
which are not the bottleneck: several sender and receiver processes at once through one queue
per run, in three modes: unsettled (the receiver accepts each message, the sender waits for
every outcome), presettled, and durable unsettled (the embedded broker's SQLite store in a temp
dir; RabbitMQ persists durable messages). The C clients are ``benchmarks/c/amqp_load.c`` (ours:
presettled and durable modes) and, as a cross-check of the unsettled mode,
Debian's proton examples ``send.c``/``receive.c`` (``libqpid-proton11-dev-examples``); the
benchmark builds them with gcc into a cache directory. Rate = messages received per second from
the first sender's start to the last receiver's exit. Broker CPU per message (from /proc) is
reported too.

Beside them, the earlier figures with one python-qpid-proton client (a producer and a consumer
connection in one Container, which is the bottleneck) are kept for comparison.

Both brokers run in their own processes at the same time; rounds interleave them (best round
kept per broker and mode, as the machine is shared).

    .venv/bin/python benchmarks/broker_bench.py [--quick] [--n N] [--rounds R] [--clients K]
                                                [--no-python] [--memory]

``--ab-src DIR`` also runs the embedded broker from another source tree (a branch), interleaved,
and prints its rates relative to this tree's: an A/B in one run, under the same load.
``--memory`` also queues 10^6 messages of 256 B in the embedded broker and reports its RSS.
The cost of the broker's metrics (docs/operations.md): ``--ab-src`` the tree before them for the
counting, and ``--ab-src src --ab-broker-arg=--metrics --ab-broker-arg=127.0.0.1:0 --scrape 1``
for the endpoint scraped every second while the runs go on (``--no-rabbitmq`` for A/B runs only).
``--metrics-scale N`` scrapes an in-process broker holding N queues and reports the scrape's time
and the longest the broker's event loop went without a turn meanwhile.
Last line: ``broker_bench: ratio <x> (goal 1.0)``: the worst per-mode ratio of the C-driven runs
(of the Python-driven ones if the C clients cannot be built).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
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

    def __init__(self, data_dir: str | None, extra: list[str] | None = None, src: str | None = None) -> None:
        cmd = [sys.executable, "-m", "amqp_jms.broker", "--port", "0", "-q", *(extra or [])]
        if data_dir:
            cmd += ["--data-dir", data_dir]
        env = dict(os.environ)
        if src is not None:  # another source tree (an A/B against a branch): its package first
            env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"(amqp://\S+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"broker did not start: {line!r}")
        self.url = m.group(1)
        metrics = re.search(r"metrics on (http://\S+?)\)", line)
        self.metrics_url = metrics.group(1) if metrics else None

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
C_MODES = ["unsettled", "presettled", "durable", "examples"]  # examples: Debian's send/receive

HERE = Path(__file__).resolve().parent
EXAMPLES = Path("/usr/share/proton/examples/c")


def build_c_clients() -> tuple[dict[str, Path], str]:
    """gcc-built ``amqp_load`` (and Debian's ``send``/``receive`` if installed) in a cache dir,
    rebuilt when a source changes; ({}, why) when the C clients cannot be built."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return {}, "gcc not found"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "amqp-jms" / "broker_bench"
    cache.mkdir(parents=True, exist_ok=True)
    sources = {"amqp_load": HERE / "c" / "amqp_load.c", "send": EXAMPLES / "send.c",
               "receive": EXAMPLES / "receive.c"}
    tools: dict[str, Path] = {}
    for name, src in sources.items():
        if not src.exists():
            continue  # no Debian examples: amqp_load alone
        exe = cache / f"{name}-{hashlib.sha256(src.read_bytes()).hexdigest()[:12]}"
        for old in cache.glob(f"{name}-*"):
            if old != exe:
                old.unlink()  # built from a source that has changed since
        if not exe.exists():
            r = subprocess.run([gcc, "-O2", "-o", str(exe), str(src), "-lqpid-proton"],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                why = f"gcc {src.name}: {r.stderr.strip()[-300:]} (install libqpid-proton11-dev)"
                if name == "amqp_load":
                    return {}, why
                print(f"skipping Debian's {name}: {why}", file=sys.stderr)
                continue
        tools[name] = exe
    return tools, ""


def run_c(tools: dict[str, Path], url: str, address: str, n: int, k: int, mode: str) -> float:
    """``k`` receivers then ``k`` senders, ``n // k`` messages each; received msg/s."""
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    per = n // k
    flags = {"unsettled": [], "presettled": ["presettled"], "durable": ["durable"], "examples": []}[mode]
    if mode == "examples":
        recv = [str(tools["receive"]), host, port, address, str(per)]
        send = [str(tools["send"]), host, port, address, str(per)]
    else:
        recv = [str(tools["amqp_load"]), "receive", host, port, address, str(per), *flags]
        send = [str(tools["amqp_load"]), "send", host, port, address, str(per), *flags]
    quiet = subprocess.DEVNULL
    receivers = [subprocess.Popen(recv, stdout=subprocess.PIPE if mode != "examples" else quiet,
                                  stderr=subprocess.PIPE, text=True) for _ in range(k)]
    procs = list(receivers)
    try:
        if mode == "examples":
            time.sleep(0.5)  # Debian's receive says nothing when attached: give it time
        else:
            for r in receivers:
                assert r.stdout is not None
                if r.stdout.readline().strip() != "ready":
                    raise RuntimeError(f"receiver did not attach: {r.stderr.read() if r.stderr else ''}")
        t0 = time.perf_counter()
        procs += [subprocess.Popen(send, stdout=quiet, stderr=subprocess.PIPE, text=True) for _ in range(k)]
        for p in procs:
            p.wait(timeout=120)
        t1 = time.perf_counter()
        bad = [p for p in procs if p.returncode != 0]
        if bad:
            err = bad[0].stderr.read() if bad[0].stderr else ""
            raise RuntimeError(f"{mode}: a C client failed ({bad[0].returncode}): {err.strip()[-300:]}")
        return per * k / (t1 - t0)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


class Peer:
    """A broker under test: its URL, the PID whose CPU we count, and its address prefix."""

    def __init__(self, name: str, url: str, pid: int, prefix: str) -> None:
        self.name, self.url, self.pid, self.prefix = name, url, pid, prefix
        self.best: dict[str, float] = {}
        self.cpu: dict[str, list[float]] = {}

    def _record(self, key: str, n: int, c0: float, rate: float) -> None:
        self.cpu.setdefault(key, []).append((cpu_seconds(self.pid) - c0) / n * 1e6)
        self.best[key] = max(self.best.get(key, 0.0), rate)

    def run(self, mode: str, n: int, presettled: bool, durable: bool, round_no: int) -> None:
        c0 = cpu_seconds(self.pid)
        rate = measure(self.url, f"{self.prefix}bench-{mode}-{round_no}", n, presettled=presettled,
                       durable=durable)
        self._record(f"py:{mode}", n, c0, rate)

    def run_c(self, tools: dict[str, Path], mode: str, n: int, k: int, round_no: int) -> None:
        c0 = cpu_seconds(self.pid)
        try:
            rate = run_c(tools, self.url, f"{self.prefix}cbench-{mode}-{round_no}", n, k, mode)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"{self.name} {mode} round {round_no} failed: {e}", file=sys.stderr)
            return
        self._record(f"c:{mode}", n, c0, rate)


class Scraper:
    """GETs each metrics URL every ``interval`` seconds on a thread, as Prometheus would."""

    def __init__(self, urls: list[str], interval: float) -> None:
        import threading

        self.urls, self.interval, self.scrapes, self.bytes = urls, interval, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import urllib.request

        while not self._stop.wait(self.interval):
            for url in self.urls:
                with urllib.request.urlopen(url, timeout=30) as resp:
                    self.bytes += len(resp.read())
                self.scrapes += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        print(f"scraped the metrics {self.scrapes} times ({self.bytes // max(1, self.scrapes)} bytes each)")


def bench(n_py: int, n_c: int, k: int, rounds: int, tools: dict[str, Path], extra: list[str] | None = None,
          ab_src: str | None = None, ab_extra: list[str] | None = None,
          modes: list[str] | None = None, rabbitmq: bool = True,
          scrape: float = 0.0) -> tuple[Peer, Peer | None, Peer | None]:
    """Both brokers up at once; rounds interleave them (the machine is shared: load drifts)."""
    from amqp_jms.testing.rabbitmq import RabbitMQ, unavailable_reason

    with contextlib.ExitStack() as stack:
        embedded: list[EmbeddedProcess] = []
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        emb = EmbeddedProcess(tmp, extra)
        stack.callback(emb.stop)
        embedded.append(emb)
        ours = Peer("embedded", emb.url, emb.proc.pid, "")
        other: Peer | None = None
        if ab_src is not None:
            emb_b = EmbeddedProcess(stack.enter_context(tempfile.TemporaryDirectory()),
                                    [*(extra or []), *(ab_extra or [])], ab_src)
            stack.callback(emb_b.stop)
            embedded.append(emb_b)
            other = Peer("embedded-B", emb_b.url, emb_b.proc.pid, "")
        theirs: Peer | None = None
        reason = unavailable_reason() if rabbitmq else "--no-rabbitmq"
        if reason is None:
            rmq = stack.enter_context(RabbitMQ())
            assert rmq.pid is not None
            theirs = Peer("rabbitmq", rmq.url, rmq.pid, "/queue/")
        else:
            print(f"RabbitMQ unavailable: {reason}", file=sys.stderr)
        peers = [p for p in (ours, other, theirs) if p is not None]
        urls = [e.metrics_url for e in embedded if e.metrics_url]
        if scrape and urls:
            stack.callback(Scraper(urls, scrape).stop)
        for p in peers:
            measure(p.url, p.prefix + "warmup", min(n_py or 2000, 2000), presettled=False, durable=False)
        c_modes = [m for m in C_MODES if m != "examples" or "send" in tools] if tools else []
        c_modes = [m for m in c_modes if modes is None or m in modes]
        py_modes = [m for m in MODES if modes is None or m[0] in modes]
        for r in range(rounds):
            order = peers if r % 2 == 0 else list(reversed(peers))
            for mode in c_modes:
                for p in order:
                    p.run_c(tools, mode, n_c, k, r)
            if n_py:
                for mode, pre, dur in py_modes:
                    for p in order:
                        p.run(mode, n_py, pre, dur, r)
        return ours, theirs, other


def report(ours: Peer, theirs: Peer | None, keys: list[str]) -> list[float]:
    """One line per mode; returns the ratios (embedded / RabbitMQ)."""
    ratios = []
    for key in keys:
        if key not in ours.best:
            continue
        our_cpu = statistics.mean(ours.cpu[key])
        line = f"{key.split(':', 1)[1]:>10}: embedded {ours.best[key]:7.0f} msg/s ({our_cpu:4.0f} us CPU/msg)"
        if theirs is not None and theirs.best.get(key):
            r = ours.best[key] / theirs.best[key]
            ratios.append(r)
            their_cpu = statistics.mean(theirs.cpu[key])
            line += (f"   rabbitmq {theirs.best[key]:7.0f} msg/s ({their_cpu:4.0f} us CPU/msg)   "
                     f"ratio {r:.2f}, CPU ratio {their_cpu / our_cpu:.2f}")
        print(line)
    return ratios


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
    from amqp_jms.broker.storage.message import BrokerMessage

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


def bench_metrics_scale(queues: int, scrapes: int = 5) -> tuple[float, float, float, int]:
    """A broker with ``queues`` queues (a message each) scraped ``scrapes`` times; (median scrape
    seconds, the loop's longest gap without a turn while idle and while scraped, bytes)."""
    import asyncio
    import concurrent.futures
    import urllib.request

    from amqp_jms.broker import Broker
    from amqp_jms.broker.storage.message import BrokerMessage

    encoded = bytes(Message(body=PAYLOAD, durable=False).encode())
    with Broker(metrics="127.0.0.1:0") as b:
        core = b.core
        assert core is not None and b.metrics_url is not None

        def fill() -> None:
            now = core.router.clock()
            for i in range(queues):
                core.router.queue(f"scale.{i}")
                core.router.publish(f"scale.{i}", BrokerMessage.parse(encoded, now=now))

        b.run_soon(fill)
        gaps: list[float] = []

        async def ticker(seconds: float) -> float:
            loop = asyncio.get_running_loop()
            last, worst = loop.time(), 0.0
            end = last + seconds
            while (now := loop.time()) < end:
                worst = max(worst, now - last)
                last = now
                await asyncio.sleep(0.001)
            return worst

        import gc

        pauses: list[tuple[float, int]] = []  # garbage collections: (seconds, generation)
        started: list[float] = []

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                started.append(time.perf_counter())
            elif started:
                pauses.append((time.perf_counter() - started.pop(), info["generation"]))

        gc.callbacks.append(on_gc)
        idle = b.call(ticker(1.0))
        times: list[float] = []
        size = 0
        pool = concurrent.futures.ThreadPoolExecutor(1)
        for _ in range(scrapes):
            fut = pool.submit(b.call, ticker(1.5), 30)
            time.sleep(0.2)
            t0 = time.perf_counter()
            with urllib.request.urlopen(b.metrics_url, timeout=60) as resp:
                size = len(resp.read())
            times.append(time.perf_counter() - t0)
            gaps.append(fut.result(30))
            time.sleep(1.0)  # the next scrape gets a new snapshot (MIN_INTERVAL)
        pool.shutdown()
        gc.callbacks.remove(on_gc)
        long_gc = [f"{p * 1000:.0f} ms (gen {g})" for p, g in pauses if p > 0.005]
        print(f"garbage collections over 5 ms meanwhile: {', '.join(long_gc) or 'none'}")
    return statistics.median(times), idle, max(gaps), size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small run (< 60 s)")
    ap.add_argument("--n", type=int, default=None, help="messages per C-driven mode and round")
    ap.add_argument("--n-python", type=int, default=None, help="messages per Python-driven mode and round")
    ap.add_argument("--clients", type=int, default=None, help="C senders (and as many receivers) at once")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (best kept)")
    ap.add_argument("--no-python", action="store_true", help="skip the Python-client figures")
    ap.add_argument("--broker-arg", action="append", default=[],
                    help="extra argument for the embedded broker's command line (repeatable)")
    ap.add_argument("--ab-src", default=None,
                    help="also run the embedded broker from this source directory (e.g. another branch's "
                    "src), interleaved with this one, and print B's rates relative to this tree's")
    ap.add_argument("--ab-broker-arg", action="append", default=[],
                    help="extra argument for B's command line only (repeatable)")
    ap.add_argument("--modes", default=None,
                    help="comma-separated subset of unsettled,presettled,durable,examples")
    ap.add_argument("--memory", action="store_true", help="also measure RSS with 10^6 queued messages")
    ap.add_argument("--metrics-scale", type=int, default=0, metavar="N",
                    help="only: scrape a broker holding N queues; scrape time and event-loop stall")
    ap.add_argument("--no-rabbitmq", action="store_true", help="the embedded broker(s) only (A/B runs)")
    ap.add_argument("--scrape", type=float, default=0.0, metavar="SECONDS",
                    help="scrape every embedded broker started with --metrics this often during the runs")
    args = ap.parse_args(argv)
    if args.metrics_scale:
        with open("/proc/loadavg") as f:
            print(f"load average before: {' '.join(f.read().split()[:3])}")
        took, idle, worst, size = bench_metrics_scale(args.metrics_scale)
        print(f"metrics: {args.metrics_scale} queues, scrape {took * 1000:.0f} ms ({size // 1024} KiB); "
              f"longest event-loop gap idle {idle * 1000:.1f} ms, during scrapes {worst * 1000:.1f} ms")
        # the figure: the loop's longest gap during a scrape against a 50 ms budget (lower is better)
        print(f"broker_bench metrics-scale: ratio {worst / 0.05:.2f} (goal <= 1.0)")
        return 0
    n_c = args.n or (10_000 if args.quick else 200_000)
    n_py = 0 if args.no_python else (args.n_python or (2000 if args.quick else 20000))
    k = args.clients or (2 if args.quick else 4)
    rounds = args.rounds or (1 if args.quick else 3)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    tools, why = build_c_clients()
    if not tools:
        print(f"C clients unavailable ({why}): Python-driven figures only", file=sys.stderr)
    with open("/proc/loadavg") as f:
        print(f"load average before: {' '.join(f.read().split()[:3])}")
    modes = args.modes.split(",") if args.modes else None
    ours, theirs, other = bench(n_py, n_c, k, rounds, tools, args.broker_arg, args.ab_src, args.ab_broker_arg,
                                modes, rabbitmq=not args.no_rabbitmq, scrape=args.scrape)
    ratios: list[float] = []
    if tools:
        print(f"C clients ({k} senders + {k} receivers at once, {n_c} messages per run, best of {rounds}):")
        ratios = report(ours, theirs, [f"c:{m}" for m in C_MODES])
    if n_py:
        print(f"Python client (1 producer + 1 consumer connection, {n_py} messages per run, "
              f"best of {rounds}):")
        py_ratios = report(ours, theirs, [f"py:{m}" for m, _, _ in MODES])
        ratios = ratios or py_ratios
    if other is not None:
        print(f"A/B: the embedded broker from {args.ab_src} (B) against this tree's (A):")
        for key in sorted(ours.best, key=lambda k: (k.startswith("py"), k)):
            if other.best.get(key):
                b_cpu, a_cpu = statistics.mean(other.cpu[key]), statistics.mean(ours.cpu[key])
                print(f"{key:>14}: B {other.best[key]:7.0f} msg/s ({b_cpu:4.0f} us CPU/msg)   "
                      f"B/A rate {other.best[key] / ours.best[key]:.2f}, CPU {b_cpu / a_cpu:.2f}")
                if theirs is None:
                    ratios.append(other.best[key] / ours.best[key])  # no RabbitMQ: the A/B is the figure
    if args.memory:
        before, after, paged = bench_memory(1_000_000)
        print(f"memory: 10^6 x 256 B queued: process RSS {after:.0f} MB (before {before:.0f} MB, "
              f"{paged} paged to disk; goal < 300 MB)")
    ratio = min(ratios) if ratios else 0.0
    print(f"broker_bench: ratio {ratio:.2f} (goal 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
