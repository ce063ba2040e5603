"""sync_send_bench: where the time of one synchronous (waiting) send goes, against the physical
limit of a synchronous send from any client (issue 25, "measure first").

The embedded broker runs as a subprocess (memory only, or ``--data-dir`` for the durable store).
Baseline: the C load generator (``benchmarks/c/amqp_load.c``) with ``inflight=1 durable``, one
message in flight, the next sent when the last one's outcome arrives. Ours: amqp-jms's default
producer (PERSISTENT: every ``send`` waits for the outcome), the same 256-byte body. Both run
interleaved in the same rounds on the same broker.

For amqp-jms, each send is timed per hop (the provider's I/O thread is timed by wrapping its
own methods for the run: a measuring tool, not a test):

  hand-off    caller's ``send`` -> the I/O thread starts the transfer
  to socket   the transfer -> its bytes handed to the socket
  broker      bytes written -> the answer's bytes read (the broker and the network)
  to outcome  bytes read -> the accepted outcome found
  wake-up     outcome found -> ``send`` returns in the caller

The client's own cost per send is amqp-jms's time per send minus the C client's. The last line
is C's time per send over ours (goal 0.75: a waiting send at >= 0.75x the physical limit).

A last run splits the whole round trip between the caller, the kernel and the broker, on a
broker whose event loop stamps its wake-ups and writes (``_stamped_broker.py``; Linux, where
``time.perf_counter`` reads one clock in every process):

  caller, to the socket     ``send`` called -> the transfer's bytes handed to the socket
  socket send, broker wakes  -> the broker's loop returns from its wait
  broker                     -> the broker hands its answer to the socket (the store's too)
  answer to the caller       -> the caller has read the answer (the broker's send, the
                                caller's wake-up, the read)
  caller, from the answer    -> ``send`` returns
The asyncio face's ``await producer.send()`` (the same default producer) runs in the same rounds
and is reported beside it, not timed per hop.

    .venv/bin/python benchmarks/sync_send_bench.py [--quick] [-n N] [--data-dir]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from bisect import bisect_left
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from broker_bench import build_c_clients

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.provider.amqp import connection as amqp_connection
from amqp_jms.provider.amqp import producer as amqp_producer
from amqp_jms.provider.amqp import write_through
from amqp_jms.testing.broker_process import BrokerProcess

HERE = Path(__file__).resolve().parent
GOAL = 0.75
HOPS = ("hand-off", "to socket", "broker", "to outcome", "wake-up")
SPLIT = ("caller, to the socket", "socket send, broker wakes", "broker", "answer to the caller",
         "caller, from the answer")


class HopClock:
    """Wraps the provider's transfer, socket write, socket read and outcome handling to stamp
    the time each is reached for the send in flight (one at a time: a synchronous producer)."""

    def __init__(self) -> None:
        self.t: dict[str, float] = {}
        pc = time.perf_counter
        t = self.t
        transfer = amqp_producer.AmqpProducer._transfer
        outcome = amqp_producer.AmqpProducer.on_delivery_raw
        alone = amqp_producer.AmqpProducer.accepted_alone
        on_data = amqp_connection.AmqpProvider._on_data
        handle_here = amqp_connection.AmqpProvider._handle_here

        def _transfer(self: Any, data: bytes, fut: Any, here: bool = False) -> None:
            t["transfer"] = pc()
            t.pop("written", None)
            transfer(self, data, fut, here)

        def _outcome(self: Any, delivery: Any) -> bool:
            t["outcome"] = pc()
            return bool(outcome(self, delivery))

        def _alone(self: Any, delivery: Any, tag: str, fut: Any) -> bool:
            # the outcome found by the caller that read it (its event, settled later, stamps
            # "outcome" again during the next send: before this one, so overwritten here)
            took = bool(alone(self, delivery, tag, fut))
            if took:
                t["outcome"] = pc()
            return took

        def _on_data(self: Any, data: bytes) -> None:
            t["read"] = pc()
            on_data(self, data)

        def _handle_here(self: Any, data: bytes, fut: Any, done: Any = None) -> bool:
            t["read"] = pc()  # read by the waiting caller itself (AmqpProvider.answer_here)
            return bool(handle_here(self, data, fut, done))

        amqp_producer.AmqpProducer._transfer = _transfer  # type: ignore[method-assign]
        amqp_producer.AmqpProducer.on_delivery_raw = _outcome  # type: ignore[method-assign]
        amqp_producer.AmqpProducer.accepted_alone = _alone  # type: ignore[method-assign]
        amqp_connection.AmqpProvider._on_data = _on_data  # type: ignore[method-assign]
        amqp_connection.AmqpProvider._handle_here = _handle_here  # type: ignore[method-assign]

    def watch_writes(self, provider: Any) -> None:
        """Stamp "written" as the bytes go to the socket: asyncio's write, or the C call that
        makes the transfer and writes it (``write_through``: stamped as it starts, so both
        stamp the moment the client hands the socket its bytes, give or take proton's work)."""
        write = provider._transport.write
        t, pc = self.t, time.perf_counter

        def _write(data: bytes) -> None:
            t.setdefault("written", pc())
            write(data)

        provider._transport.write = _write
        transfer_out, read_in = write_through.transfer_out, write_through.read_in
        if transfer_out is not None and not getattr(transfer_out, "stamped", False):
            def _transfer_out(*args: Any) -> Any:
                t.setdefault("written", pc())
                return transfer_out(*args)

            _transfer_out.stamped = True  # type: ignore[attr-defined]
            write_through.transfer_out = _transfer_out
        if read_in is not None and not getattr(read_in, "stamped", False):
            def _read_in(*args: Any) -> Any:
                t["read"] = pc()  # (the C read of a waiting caller, as _handle_here is stamped)
                return read_in(*args)

            _read_in.stamped = True  # type: ignore[attr-defined]
            write_through.read_in = _read_in


def c_one_in_flight(tool: Path, url: str, address: str, n: int) -> float:
    """Seconds per send of the C client, one message in flight (its connect excluded: a warm-up
    of 50 sends is timed separately and taken off)."""
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)

    def run(count: int) -> float:
        t = time.perf_counter()
        subprocess.run([str(tool), "send", host, port, address, str(count), "inflight=1", "durable"],
                       check=True, timeout=300)
        return time.perf_counter() - t

    small, big = run(50), run(n + 50)
    return (big - small) / n


def jms_sync(url: str, address: str, n: int, clock: HopClock) -> tuple[float, dict[str, list[float]]]:
    hops: dict[str, list[float]] = {h: [] for h in HOPS}
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        clock.watch_writes(conn._provider)
        p = s.create_producer(Queue(address))
        m = s.create_text_message("x" * 256)
        for _ in range(50):
            p.send(m)
        t = clock.t
        pc = time.perf_counter
        start = pc()
        for _ in range(n):
            t0 = pc()
            p.send(m)
            t1 = pc()
            if "written" in t and t0 <= t["transfer"] <= t["written"] <= t["read"] <= t["outcome"] <= t1:
                hops["hand-off"].append(t["transfer"] - t0)
                hops["to socket"].append(t["written"] - t["transfer"])
                hops["broker"].append(t["read"] - t["written"])
                hops["to outcome"].append(t["outcome"] - t["read"])
                hops["wake-up"].append(t1 - t["outcome"])
        return (pc() - start) / n, hops


def _broker_stamps(broker: BrokerProcess, path: Path) -> tuple[list[float], list[float]]:
    """The stamped broker's wake-ups and writes since the last call (``_stamped_broker.py``)."""
    path.unlink(missing_ok=True)
    os.kill(broker.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the stamped broker wrote no stamps: {broker.stderr()}")
        time.sleep(0.02)
    lines = dict(line.split(" ", 1) for line in path.read_text().splitlines())
    return [float(x) for x in lines["P"].split()], [float(x) for x in lines["W"].split()]


def _broker_view(polls: list[float], writes: list[float]) -> tuple[list[float], list[float]]:
    """From the broker's stamps alone, for any client: its work per transfer (woken -> answer
    written) and what the client and the kernel take both ways (answer written -> woken by
    the next transfer)."""
    work, away = [], []
    for j, w in enumerate(writes):
        i = bisect_left(polls, w)
        if 0 < i < len(polls) and (j == 0 or writes[j - 1] < polls[i - 1]):
            work.append(w - polls[i - 1])
            away.append(polls[i] - w)
    return work, away


def split_round_trip(n: int, durable: bool, clock: HopClock, tool: Path
                     ) -> tuple[dict[str, list[float]], dict[str, tuple[list[float], list[float]]]]:
    """One waiting send's round trip cut at the caller's and the broker's stamps (``SPLIT``),
    and the broker's view of amqp-jms and of the C client one in flight (``_broker_view``);
    ``durable``: the broker on a store."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stamps"
        store = ["--data-dir", str(Path(tmp) / "store")] if durable else []
        broker = BrokerProcess(*store, entry=[str(HERE / "_stamped_broker.py")],
                               env=dict(os.environ, SYNC_SEND_STAMPS=str(path)))
        sends: list[tuple[float, float, float, float]] = []
        try:
            with ConnectionFactory(broker.url).create_connection() as conn:
                s = conn.create_session()
                clock.watch_writes(conn._provider)
                p = s.create_producer(Queue("sync-split"))
                m = s.create_text_message("x" * 256)
                for _ in range(50):
                    p.send(m)
                _broker_stamps(broker, path)  # (the warm-up's, dropped)
                t, pc = clock.t, time.perf_counter
                for _ in range(n):
                    t0 = pc()
                    p.send(m)
                    t1 = pc()
                    if "written" in t and t0 <= t["written"] <= t["read"] <= t1:
                        sends.append((t0, t["written"], t["read"], t1))
            polls, writes = _broker_stamps(broker, path)
            view = {"amqp-jms": _broker_view(polls, writes)}
            c_one_in_flight(tool, broker.url, "sync-split-c", n)
            view["C one in flight"] = _broker_view(*_broker_stamps(broker, path))
        finally:
            broker.stop()
    hops: dict[str, list[float]] = {h: [] for h in SPLIT}
    for t0, written, read, t1 in sends:
        i = bisect_left(polls, written)
        if i == len(polls):
            continue
        woke = polls[i]
        j = bisect_left(writes, woke)
        if j == len(writes) or writes[j] > read:
            continue  # (no answer written between: a timer's wake-up, not this transfer's)
        for hop, span in zip(SPLIT, (written - t0, woke - written, writes[j] - woke, read - writes[j],
                                     t1 - read)):
            hops[hop].append(span)
    return hops, view


def jms_asyncio(url: str, address: str, n: int) -> float:
    """Seconds per ``await producer.send()`` on the asyncio face (PERSISTENT: each awaits its
    outcome)."""
    import asyncio

    from amqp_jms.aio import AsyncConnectionFactory

    async def run() -> float:
        async with await AsyncConnectionFactory(url).create_connection() as conn:
            s = await conn.create_session()
            p = await s.create_producer(Queue(address))
            m = s.create_text_message("x" * 256)
            for _ in range(50):
                await p.send(m)
            start = time.perf_counter()
            for _ in range(n):
                await p.send(m)
            return (time.perf_counter() - start) / n

    return asyncio.run(run())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run (< 60 s)")
    ap.add_argument("-n", type=int, default=None, help="sends per measurement")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--data-dir", action="store_true", help="the broker with its durable store")
    args = ap.parse_args()
    n = args.n or (2000 if args.quick else 10000)
    rounds = args.rounds or (2 if args.quick else 3)
    tools, why = build_c_clients()
    if not tools:
        print(f"sync_send_bench: skipped: {why}")
        return 0
    clock = HopClock()
    with tempfile.TemporaryDirectory() as tmp:
        broker = BrokerProcess(*(["--data-dir", tmp] if args.data_dir else []))
        try:
            best_c, best_j, best_a, best_hops = float("inf"), float("inf"), float("inf"), None
            for r in range(rounds):
                c = c_one_in_flight(tools["amqp_load"], broker.url, f"sync-c-{r}", n)
                j, hops = jms_sync(broker.url, f"sync-j-{r}", n, clock)
                a = jms_asyncio(broker.url, f"sync-a-{r}", n)
                print(f"round {r + 1}: C one in flight {c * 1e6:6.0f} us/send, "
                      f"amqp-jms {j * 1e6:6.0f} us/send, asyncio {a * 1e6:6.0f} us/send", flush=True)
                best_c = min(best_c, c)
                best_a = min(best_a, a)
                if j < best_j:
                    best_j, best_hops = j, hops
        finally:
            broker.stop()
    assert best_hops is not None
    print(f"\nper hop, amqp-jms ({len(best_hops['broker'])} sends):   median     mean")
    for hop in HOPS:
        print(f"  {hop:11s} {statistics.median(best_hops[hop]) * 1e6:16.0f} us "
              f"{statistics.fmean(best_hops[hop]) * 1e6:6.0f} us")
    split, view = split_round_trip(n, args.data_dir, clock, tools["amqp_load"])
    print(f"\nthe round trip split with the broker's stamps ({len(split['broker'])} sends):  median     mean")
    for hop in SPLIT:
        if split[hop]:
            print(f"  {hop:26s} {statistics.median(split[hop]) * 1e6:16.0f} us "
                  f"{statistics.fmean(split[hop]) * 1e6:6.0f} us")
    if not args.data_dir:  # (with a store, a transfer's answer is written in a later turn)
        print("\nthe broker's view (medians): its work per transfer; answer written -> next transfer")
    for who, (work, away) in view.items() if not args.data_dir else ():
        if work:
            print(f"  {who:16s} {statistics.median(work) * 1e6:6.0f} us "
                  f"{statistics.median(away) * 1e6:8.0f} us")
    print(f"C one in flight: {best_c * 1e6:.0f} us/send ({1 / best_c:,.0f} msg/s); "
          f"amqp-jms: {best_j * 1e6:.0f} us/send ({1 / best_j:,.0f} msg/s); "
          f"the client's own cost: {(best_j - best_c) * 1e6:.0f} us/send (goal <= 60)")
    print(f"asyncio await send(): {best_a * 1e6:.0f} us/send ({1 / best_a:,.0f} msg/s), "
          f"{best_c / best_a:.2f}x C one in flight")
    print(f"sync_send_bench: ratio {best_c / best_j:.2f} (goal {GOAL})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
