"""Waiting figures for client_bench: what a synchronous JMS application gets, against the C
one-in-flight client (``benchmarks/c/amqp_load.c inflight=1``: the next message sent only when
the last one's outcome arrived, the physical limit of a synchronous send from any client), with
an A/B of the same figures on another checkout of amqp-jms in the same run.

Figures (256-byte messages, the JMS defaults unless said):

- persistent sync send: ``send`` waits for each outcome (PERSISTENT, the JMS default);
- transacted, commit every 10 / every 100: persistent sends in a transacted session;
- request/reply round trip p50/p99: a request to a queue with a temporary reply queue, answered
  by a responder in another process; the C figure beside it is one send's round trip;
- 1, 4 and 8 durable producers: that many processes, one connection each, sending persistent
  messages synchronously at once, on a broker with a store (``--data-dir``); the C client runs
  the same number of ``inflight=1 durable`` processes. Rates are all messages over the time from
  the first producer's start to the last one's end.

Each amqp-jms figure runs in a fresh process (``python sync_figures.py worker ...``) with the
checkout under test first on ``PYTHONPATH``, so this checkout and the A/B one are measured by
the same code; the worker times only its own sends (connecting is not timed).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BODY = b"x" * 256
PRODUCERS = (1, 4, 8)
#: the figures one ``series`` worker measures in turn: (name, commit every; 0 = not transacted)
SERIES = (("persistent sync send", 0), ("transacted, commit every 10", 10),
          ("transacted, commit every 100", 100))

__all__ = ["PRODUCERS", "Figure", "run_figures"]


# -- the worker (runs in its own process, with the checkout under test on sys.path) ---------------
def _worker(kind: str, url: str, address: str, n: int, arg: int) -> dict[str, float | list[float]]:
    from amqp_jms import BytesMessage, ConnectionFactory, DeliveryMode, Queue

    with ConnectionFactory(url).create_connection() as conn:
        if kind == "responder":
            s = conn.create_session()
            c = s.create_consumer(Queue(address))
            p = s.create_producer(None)
            p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
            conn.start()
            print("ready", flush=True)
            for _ in range(n):
                req = c.receive(30000)
                if req is None:
                    break
                reply = BytesMessage()
                reply.write_bytes(BODY)
                reply.set_jms_correlation_id(req.get_jms_message_id())
                p.send(req.get_jms_reply_to(), reply)
            return {}
        if kind == "requester":
            s = conn.create_session()
            replies = s.create_temporary_queue()
            c = s.create_consumer(replies)
            p = s.create_producer(Queue(address))
            conn.start()
            print("ready", flush=True)
            sys.stdin.readline()
            lat: list[float] = []
            pc = time.perf_counter
            for _ in range(n):
                m = BytesMessage()
                m.write_bytes(BODY)
                m.set_jms_reply_to(replies)
                t0 = pc()
                p.send(m)
                if c.receive(30000) is None:
                    raise RuntimeError("no reply")
                lat.append(pc() - t0)
            return {"latencies": lat}
        if kind == "series":  # one sender after the other in this process, each timed alone
            print("ready", flush=True)
            sys.stdin.readline()
            rates: dict[str, float | list[float]] = {}
            for name, every in SERIES:
                t = _send(conn, f"{address}-{every}", n, every)
                rates[name] = n / (t["end"] - t["start"])
            return rates
        print("ready", flush=True)
        sys.stdin.readline()  # all producers start together
        times: dict[str, float | list[float]] = dict(_send(conn, address, n, 0))
        return times


def _send(conn: Any, address: str, n: int, every: int) -> dict[str, float]:
    """``n`` persistent sends, waiting for each (``every`` 0), or in a transaction committed
    every ``every``; 20 more before, untimed; wall-clock start and end."""
    from amqp_jms import BytesMessage, Queue

    transacted = every > 0
    s = conn.create_session(transacted)
    p = s.create_producer(Queue(address))
    for _ in range(20):  # warm-up, untimed
        m = BytesMessage()
        m.write_bytes(BODY)
        p.send(m)
    if transacted:
        s.commit()
    start = time.time()
    for i in range(1, n + 1):
        m = BytesMessage()
        m.write_bytes(BODY)
        p.send(m)
        if transacted and i % every == 0:
            s.commit()
    if transacted:
        s.commit()
    end = time.time()
    s.close()
    return {"start": start, "end": end}


def _worker_main(argv: list[str]) -> int:
    kind, url, address, n, arg = argv[0], argv[1], argv[2], int(argv[3]), int(argv[4])
    result = _worker(kind, url, address, n, arg)
    print("result " + json.dumps(result), flush=True)
    return 0


# -- running workers -------------------------------------------------------------------------------
def _spawn(src: Path, kind: str, url: str, address: str, n: int, arg: int = 0) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(HERE)]))
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "worker", kind, url, address,
                             str(n), str(arg)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env)


def _ready(p: subprocess.Popen[str]) -> None:
    assert p.stdout is not None
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        raise RuntimeError(f"worker did not start: {line!r}")


def _result(p: subprocess.Popen[str]) -> dict[str, object]:
    assert p.stdout is not None
    out = p.stdout.read()
    p.wait(300)
    for line in out.splitlines():
        if line.startswith("result "):
            parsed: dict[str, object] = json.loads(line[7:])
            return parsed
    raise RuntimeError(f"worker failed (exit {p.returncode}): {out[-300:]!r}")


def jms_producers(src: Path, url: str, address: str, n: int, k: int) -> float:
    """``k`` producer processes of the checkout at ``src`` sending ``n`` each at once: msg/s."""
    procs = [_spawn(src, "send", url, f"{address}-{i}", n) for i in range(k)]
    for p in procs:
        _ready(p)
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    results = [_result(p) for p in procs]
    start = min(float(r["start"]) for r in results)  # type: ignore[arg-type]
    end = max(float(r["end"]) for r in results)  # type: ignore[arg-type]
    return k * n / (end - start)


def jms_series(src: Path, url: str, address: str, n: int) -> dict[str, float]:
    """The ``SERIES`` figures of the checkout at ``src``, one process: {name: msg/s}."""
    p = _spawn(src, "series", url, address, n)
    _ready(p)
    assert p.stdin is not None
    p.stdin.write("go\n")
    p.stdin.flush()
    return {k: float(v) for k, v in _result(p).items()}  # type: ignore[arg-type]


def jms_request_reply(src: Path, url: str, address: str, n: int) -> list[float]:
    """Round-trip latencies (s) of ``n`` requests answered by a responder process."""
    responder = _spawn(src, "responder", url, address, n)
    _ready(responder)
    requester = _spawn(src, "requester", url, address, n)
    _ready(requester)
    assert requester.stdin is not None
    requester.stdin.write("go\n")
    requester.stdin.flush()
    lat = _result(requester)["latencies"]
    _result(responder)
    return list(lat)  # type: ignore[call-overload]


def c_producers(tool: Path, url: str, address: str, n: int, k: int) -> float:
    """``k`` C one-in-flight durable senders of ``n`` each at once: msg/s (their connects taken
    off: the same ``k`` processes sending 20 each are timed first)."""
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)

    def run(count: int, tag: str) -> float:
        t = time.perf_counter()
        procs = [subprocess.Popen([str(tool), "send", host, port, f"{address}-{tag}-{i}", str(count),
                                   "inflight=1", "durable"]) for i in range(k)]
        for p in procs:
            if p.wait(300) != 0:
                raise RuntimeError("amqp_load failed")
        return time.perf_counter() - t

    small = run(20, "w")
    return k * n / max(1e-6, run(n + 20, "m") - small)


# -- the figures -----------------------------------------------------------------------------------
class Figure:
    """One figure: amqp-jms (this checkout), the A/B checkout, and the C client, best of rounds
    (rates in msg/s; latencies in s, lower is better)."""

    def __init__(self, name: str, unit: str) -> None:
        self.name, self.unit = name, unit
        self.values: dict[str, list[float]] = {}

    def add(self, who: str, value: float) -> None:
        self.values.setdefault(who, []).append(value)

    def best(self, who: str) -> float | None:
        v = self.values.get(who)
        if not v:
            return None
        return min(v) if self.unit == "us" else max(v)


@contextmanager
def _store_broker(src: Path) -> Iterator[str]:
    """The embedded broker of the checkout at ``src``, with a store in a fresh folder."""
    from amqp_jms.testing.broker_process import BrokerProcess

    saved = os.environ.get("PYTHONPATH")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PYTHONPATH"] = str(src)  # (BrokerProcess passes its environment on)
        try:
            broker = BrokerProcess("--data-dir", tmp)
        finally:
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved
        try:
            yield broker.url
        finally:
            broker.stop()


def run_figures(url: str, n: int, rounds: int, ab_src: Path | None,
                log: Callable[[str], None]) -> list[Figure]:
    """Every waiting figure, this checkout then the A/B one then C, interleaved per round;
    ``url``: the memory broker; the producer figures start their own broker with a store."""
    from broker_bench import build_c_clients

    def c_tool() -> Path | None:
        """amqp_load, built again if it went missing (the build cache is shared by every
        checkout on the machine, and one built from another amqp_load.c replaces it)."""
        return build_c_clients()[0].get("amqp_load")

    tool = c_tool()
    why = "" if tool is not None else build_c_clients()[1]
    if tool is None:
        log(f"C one-in-flight client unavailable ({why}): waiting figures have no C baseline")
    ours = HERE.parent / "src"
    trees = [("amqp-jms", ours)] + ([("A/B", ab_src)] if ab_src is not None else [])
    figs = {name: Figure(name, unit) for name, unit in [
        ("persistent sync send", "msg/s"), ("transacted, commit every 10", "msg/s"),
        ("transacted, commit every 100", "msg/s"), ("request/reply p50", "us"),
        ("request/reply p99", "us"),
        *[(f"{k} durable producer{'s' if k > 1 else ''} (store)", "msg/s") for k in PRODUCERS]]}
    n_rr = max(200, n // 2)
    for r in range(rounds):
        def note(fig: Figure, who: str, value: float, r: int = r) -> None:
            fig.add(who, value)
            log(f"round {r + 1} {fig.name:34s} {who:9s} {value:10.0f} {fig.unit}")

        order = trees if r % 2 == 0 else trees[::-1]  # who goes first alternates by round
        for who, src in order:
            for name, rate in jms_series(src, url, f"ser-{who[:2]}{r}", n).items():
                note(figs[name], who, rate)
        for who, src in order:
            lat = sorted(jms_request_reply(src, url, f"rr-{who[:2]}{r}", n_rr))
            note(figs["request/reply p50"], who, statistics.median(lat) * 1e6)
            note(figs["request/reply p99"], who, lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6)
        if tool is not None:
            c_rate = c_producers(c_tool() or tool, url, f"c-{r}", n, 1)
            for name, _ in SERIES:
                note(figs[name], "C", c_rate)
            note(figs["request/reply p50"], "C", 1e6 / c_rate)  # one send's round trip
            note(figs["request/reply p99"], "C", 1e6 / c_rate)
        for who, src in order:  # each checkout against its own broker (its store's group commit)
            with _store_broker(src) as store_url:
                for k in PRODUCERS:
                    fig = figs[f"{k} durable producer{'s' if k > 1 else ''} (store)"]
                    note(fig, who, jms_producers(src, store_url, f"dp{k}-{who[:2]}{r}", n, k))
                    if tool is not None and who == "amqp-jms":
                        note(fig, "C", c_producers(c_tool() or tool, store_url, f"dpc{k}-{r}", n, k))
    return list(figs.values())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        raise SystemExit(_worker_main(sys.argv[2:]))
    raise SystemExit("run through client_bench.py (--only waiting)")
