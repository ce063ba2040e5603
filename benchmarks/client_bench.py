"""client_bench: the JMS client against a raw python-qpid-proton Container client.

Same embedded broker (in its own process), same run, same work, three figures (messages of 256 bytes):

1. presettled send (amqp-jms: presettled producer, BytesMessage; raw: at-most-once sender),
   timed until the producer's link is closed (everything written and the detach answered);
2. receive with acknowledgement (amqp-jms: AUTO_ACKNOWLEDGE ``receive``, prefetch 1000; raw:
   receiver with prefetch 1000 and auto-accept) of what phase 1 left on the queue;
3. synchronous persistent send (amqp-jms: default producer, each ``send`` waits for
   ``accepted``; raw: one message in flight, the next sent from ``on_accepted``).

The ratio is amqp-jms' rate over raw proton's, the smallest of the figures with a goal (the
three above and issue 7's async and asyncio figures; its durable fan-out is printed, not
ranked). Phases of the two clients alternate and each is repeated (``--rounds``) keeping the best,
since the machine is shared. ``--observability`` measures instead what issue 21's hooks cost
(``client_obs.py``: tracing off against the ``--release`` client, and tracing on).
``--memory`` adds the drain test of issue 6 (RSS growth of a
consumer draining a queue).

Issue 16 adds default-settings figures (what an application gets without tuning: a
non-persistent send, a persistent send, a transacted send with a commit every 100, an
AUTO_ACKNOWLEDGE receive with the default prefetch), each measured against the C proton
``send``/``receive`` examples (``c_proton.py``) on the same broker, with their own goals
(receive >= 0.3x C, non-persistent send >= 0.25x C). The last line's ratio is the smallest
figure over its goal (1.0 means every goal is met), so one line says whether all pass.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sync_figures import PRODUCERS, Figure, run_figures

GOAL = 0.9
BODY = b"x" * 256
#: issue 16: goals of the default-settings figures, as ratios to the C proton examples
C_GOALS = {"default receive (auto ack)": 0.3, "default non-persistent send": 0.25}


# -- raw proton ----------------------------------------------------------------------------------
def raw_send_presettled(url: str, address: str, n: int) -> float:
    from proton import Message
    from proton.handlers import MessagingHandler
    from proton.reactor import AtMostOnce, Container

    class H(MessagingHandler):
        def __init__(self) -> None:
            super().__init__()
            self.sent = 0

        def on_start(self, event: object) -> None:
            c = event.container  # type: ignore[attr-defined]
            conn = c.connect(url)
            c.create_sender(conn, address, options=AtMostOnce())

        def on_sendable(self, event: object) -> None:
            snd = event.sender  # type: ignore[attr-defined]
            while snd.credit and self.sent < n:
                snd.send(Message(body=BODY, durable=False))
                self.sent += 1
            if self.sent == n:
                snd.close()

        def on_link_closed(self, event: object) -> None:
            event.connection.close()  # type: ignore[attr-defined]

    t0 = time.perf_counter()
    Container(H()).run()
    return n / (time.perf_counter() - t0)


def raw_receive(url: str, address: str, n: int) -> float:
    from proton.handlers import MessagingHandler
    from proton.reactor import Container

    class H(MessagingHandler):
        def __init__(self) -> None:
            super().__init__(prefetch=1000, auto_accept=True)
            self.got = 0

        def on_start(self, event: object) -> None:
            c = event.container  # type: ignore[attr-defined]
            c.create_receiver(c.connect(url), address)

        def on_message(self, event: object) -> None:
            self.got += 1
            if self.got == n:
                event.receiver.close()  # type: ignore[attr-defined]
                event.connection.close()  # type: ignore[attr-defined]

    t0 = time.perf_counter()
    Container(H()).run()
    return n / (time.perf_counter() - t0)


def raw_send_sync(url: str, address: str, n: int) -> float:
    from proton import Message
    from proton.handlers import MessagingHandler
    from proton.reactor import Container

    class H(MessagingHandler):
        def __init__(self) -> None:
            super().__init__()
            self.sent = 0
            self.acked = 0
            self.waiting = False

        def on_start(self, event: object) -> None:
            c = event.container  # type: ignore[attr-defined]
            c.create_sender(c.connect(url), address)

        def _next(self, snd: object) -> None:
            if not self.waiting and self.sent < n and snd.credit:  # type: ignore[attr-defined]
                snd.send(Message(body=BODY, durable=True))  # type: ignore[attr-defined]
                self.sent += 1
                self.waiting = True

        def on_sendable(self, event: object) -> None:
            self._next(event.sender)  # type: ignore[attr-defined]

        def on_accepted(self, event: object) -> None:
            self.acked += 1
            self.waiting = False
            if self.acked == n:
                event.connection.close()  # type: ignore[attr-defined]
            else:
                self._next(event.link)  # type: ignore[attr-defined]

    t0 = time.perf_counter()
    Container(H()).run()
    return n / (time.perf_counter() - t0)


# -- amqp-jms -----------------------------------------------------------------------------------
def jms_send_presettled(url: str, address: str, n: int, extra: str = "") -> float:
    """(``extra``: more URL options, ``&``-joined, as ``client_obs.py`` adds them)"""
    from amqp_jms import BytesMessage, ConnectionFactory, DeliveryMode, Queue

    f = ConnectionFactory(url + "?jms.presettlePolicy.presettleProducers=true" + extra)
    with f.create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(address))
        p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
        t0 = time.perf_counter()
        for _ in range(n):
            m = BytesMessage()
            m.write_bytes(BODY)
            p.send(m)
        p.close()
        return n / (time.perf_counter() - t0)


def jms_receive(url: str, address: str, n: int, options: str = "?jms.prefetchPolicy.all=1000") -> float:
    from amqp_jms import ConnectionFactory, Queue

    with ConnectionFactory(url + options).create_connection() as conn:
        s = conn.create_session()
        t0 = time.perf_counter()
        c = s.create_consumer(Queue(address))
        conn.start()
        for i in range(n):
            if c.receive(10000) is None:
                raise RuntimeError(f"amqp-jms receive: only {i} of {n} messages arrived")
        c.close()
        return n / (time.perf_counter() - t0)


def jms_send_sync(url: str, address: str, n: int, extra: str = "") -> float:
    from amqp_jms import BytesMessage, ConnectionFactory, Queue

    with ConnectionFactory(url + ("?" + extra.lstrip("&") if extra else "")).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(address))
        t0 = time.perf_counter()
        for _ in range(n):
            m = BytesMessage()
            m.write_bytes(BODY)
            p.send(m)
        p.close()
        return n / (time.perf_counter() - t0)


def _drain(url: str, address: str) -> None:
    """Empty a queue between phases (quietly, with amqp-jms)."""
    from amqp_jms import ConnectionFactory, Queue, Session

    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session(Session.NO_ACKNOWLEDGE)
        c = s.create_consumer(Queue(address))
        conn.start()
        while c.receive(300) is not None:
            pass


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def memory_drain(url: str, n: int) -> float:
    """RSS growth (MB) of a prefetch-1000 consumer draining ``n`` messages."""
    from amqp_jms import BytesMessage, ConnectionFactory, DeliveryMode, Queue

    f = ConnectionFactory(url + "?jms.presettlePolicy.presettleProducers=true&jms.prefetchPolicy.all=1000")
    with f.create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("mem"))
        p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
        c = s.create_consumer(Queue("mem"))
        conn.start()
        base = None
        batch = 10000
        for _ in range(0, n, batch):
            for _ in range(batch):
                m = BytesMessage()
                m.write_bytes(BODY)
                p.send(m)
            for _ in range(batch):
                if c.receive(10000) is None:
                    raise RuntimeError("memory drain: a message did not arrive")
            if base is None:
                base = rss_mb()
        return rss_mb() - (base or 0.0)


# -- issue 7 cases (client part 2): async send with completion listeners, asyncio API, ----------
# -- durable subscription fan-out. Each pairs with a raw proton client doing the same work. -----
FANOUT = 10  # durable subscribers on the topic
#: figures the issues ask to measure but give no goal for (issue 7: "durable subscription fan-out
#: to 10 subscribers"): printed with the rest, left out of the summary ratio
UNGOALED = frozenset({f"durable fan-out x{FANOUT}"})


def raw_send_unsettled(url: str, address: str, n: int) -> float:
    """Raw proton: persistent, unsettled, as many in flight as credit allows; done at n accepted."""
    from proton import Message
    from proton.handlers import MessagingHandler
    from proton.reactor import Container

    class H(MessagingHandler):
        def __init__(self) -> None:
            super().__init__()
            self.sent = 0
            self.acked = 0

        def on_start(self, event: object) -> None:
            c = event.container  # type: ignore[attr-defined]
            c.create_sender(c.connect(url), address)

        def on_sendable(self, event: object) -> None:
            snd = event.sender  # type: ignore[attr-defined]
            while snd.credit and self.sent < n:
                snd.send(Message(body=BODY, durable=True))
                self.sent += 1

        def on_accepted(self, event: object) -> None:
            self.acked += 1
            if self.acked == n:
                event.connection.close()  # type: ignore[attr-defined]

    t0 = time.perf_counter()
    Container(H()).run()
    return n / (time.perf_counter() - t0)


def jms_send_completion_listener(url: str, address: str, n: int) -> float:
    """amqp-jms: persistent ``send(m, completion_listener=...)``; done when n callbacks ran."""
    import threading

    from amqp_jms import BytesMessage, ConnectionFactory, Queue

    done = threading.Event()
    count = [0]

    def listener(message: object, exc: Exception | None) -> None:
        if exc is not None:
            raise exc
        count[0] += 1
        if count[0] == n:
            done.set()

    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(address))
        t0 = time.perf_counter()
        for _ in range(n):
            m = BytesMessage()
            m.write_bytes(BODY)
            p.send(m, completion_listener=listener)
        if not done.wait(120):
            raise RuntimeError(f"completion listener: only {count[0]} of {n} completions")
        rate = n / (time.perf_counter() - t0)
        p.close()
        return rate


def jms_aio_send(url: str, address: str, n: int) -> float:
    """amqp-jms asyncio API: persistent sends pipelined with ``producer.send_nowait`` (up to 1000
    outcomes awaited together with ``asyncio.gather``)."""
    import asyncio

    from amqp_jms import BytesMessage, Queue
    from amqp_jms.aio import AsyncConnectionFactory

    async def run() -> float:
        async with await AsyncConnectionFactory(url).create_connection() as conn:
            s = await conn.create_session()
            p = await s.create_producer(Queue(address))

            def one() -> asyncio.Future[None]:
                m = BytesMessage()
                m.write_bytes(BODY)
                return p.send_nowait(m)

            t0 = time.perf_counter()
            left = n
            while left:
                k = min(1000, left)
                await asyncio.gather(*[one() for _ in range(k)])
                left -= k
            return n / (time.perf_counter() - t0)

    return asyncio.run(run())


def raw_receive_filled(url: str, address: str, n: int) -> float:
    """``raw_receive`` of a queue first filled (untimed) with n messages."""
    raw_send_presettled(url, address, n)
    return raw_receive(url, address, n)


def jms_aio_receive(url: str, address: str, n: int) -> float:
    """amqp-jms asyncio API: ``await receive`` on an AUTO_ACKNOWLEDGE consumer, prefetch 1000, of
    a queue first filled (untimed) with n messages."""
    import asyncio

    raw_send_presettled(url, address, n)

    from amqp_jms import Queue
    from amqp_jms.aio import AsyncConnectionFactory

    async def run() -> float:
        factory = AsyncConnectionFactory(url + "?jms.prefetchPolicy.all=1000")
        async with await factory.create_connection() as conn:
            s = await conn.create_session()
            t0 = time.perf_counter()
            c = await s.create_consumer(Queue(address))
            await conn.start()
            got = 0
            while got < n:
                if await c.receive(10000) is None:
                    raise RuntimeError(f"asyncio receive: only {got} of {n} messages arrived")
                got += 1
            return n / (time.perf_counter() - t0)

    return asyncio.run(run())


def raw_fanout(url: str, address: str, n: int) -> float:
    """Raw proton: 10 durable topic receivers (unsettled-state, expiry never) and a presettled
    publisher of n messages; deliveries per second until all 10 n arrived (auto-accepted)."""
    from proton import UNDESCRIBED, Array, Data, Message, Terminus, symbol
    from proton.handlers import MessagingHandler
    from proton.reactor import AtMostOnce, Container, LinkOption

    class Durable(LinkOption):
        def apply(self, link: object) -> None:
            src = link.source  # type: ignore[attr-defined]
            src.durability = Terminus.DELIVERIES
            src.expiry_policy = Terminus.EXPIRE_NEVER
            src.capabilities.put_object(Array(UNDESCRIBED, Data.SYMBOL, symbol("topic")))  # type: ignore[arg-type]

    class TopicTarget(LinkOption):
        def apply(self, link: object) -> None:
            link.target.capabilities.put_object(  # type: ignore[attr-defined]
                Array(UNDESCRIBED, Data.SYMBOL, symbol("topic")))  # type: ignore[arg-type]

    total = n * FANOUT
    t0 = [0.0]
    address = address + "-fanout"  # a topic of its own (main() drains ``address`` as a queue)

    class H(MessagingHandler):
        def __init__(self) -> None:
            super().__init__(prefetch=1000, auto_accept=True)
            self.got = 0
            self.sent = 0
            self.opened = 0
            self.snd: object = None

        def on_start(self, event: object) -> None:
            c = event.container  # type: ignore[attr-defined]
            c.container_id = f"raw-fanout-{address}"
            conn = c.connect(url)
            for i in range(FANOUT):
                c.create_receiver(conn, address, name=f"{address}-sub{i}", options=Durable())
            self.conn = conn

        def on_link_opened(self, event: object) -> None:
            if event.receiver is not None:  # type: ignore[attr-defined]
                self.opened += 1
                if self.opened == FANOUT:
                    t0[0] = time.perf_counter()
                    c = event.container  # type: ignore[attr-defined]
                    self.snd = c.create_sender(self.conn, address, options=[AtMostOnce(), TopicTarget()])

        def on_sendable(self, event: object) -> None:
            snd = event.sender  # type: ignore[attr-defined]
            while snd.credit and self.sent < n:
                snd.send(Message(body=BODY, durable=False))
                self.sent += 1

        def on_message(self, event: object) -> None:
            self.got += 1
            if self.got == total:
                event.connection.close()  # type: ignore[attr-defined]

    Container(H()).run()
    return total / (time.perf_counter() - t0[0])


def jms_fanout(url: str, address: str, n: int) -> float:
    """amqp-jms: 10 durable subscribers (one session each, listeners) and a presettled producer
    of n messages; deliveries per second until all 10 n were consumed (AUTO_ACKNOWLEDGE)."""
    import threading

    from amqp_jms import BytesMessage, ConnectionFactory, DeliveryMode, Topic

    total = n * FANOUT
    lock = threading.Lock()
    done = threading.Event()
    got = [0]

    def on_message(message: object) -> None:
        with lock:
            got[0] += 1
            if got[0] == total:
                done.set()

    topic = Topic(address + "-fanout")  # a topic of its own (main() drains ``address`` as a queue)
    f = ConnectionFactory(url + "?jms.clientID=jms-fanout-" + address
                          + "&jms.presettlePolicy.presettleProducers=true&jms.prefetchPolicy.all=1000")
    with f.create_connection() as conn:
        subs = []
        for i in range(FANOUT):
            s = conn.create_session()
            c = s.create_durable_subscriber(topic, f"sub{i}")
            c.set_message_listener(on_message)
            subs.append((s, c))
        conn.start()
        s = conn.create_session()
        p = s.create_producer(topic)
        p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
        t0 = time.perf_counter()
        for _ in range(n):
            m = BytesMessage()
            m.write_bytes(BODY)
            p.send(m)
        if not done.wait(120):
            raise RuntimeError(f"fan-out: only {got[0]} of {total} deliveries")
        rate = total / (time.perf_counter() - t0)
        for i, (s2, c) in enumerate(subs):
            c.close()
            s2.unsubscribe(f"sub{i}")
        return rate


def issue7_phases(n: int) -> list[tuple[str, int, Callable[..., float], Callable[..., float]]]:
    """The issue 7 figures, run by ``main`` with the others (same loop, same broker)."""
    return [
        ("async send (listener)", n, jms_send_completion_listener, raw_send_unsettled),
        ("asyncio send", n, jms_aio_send, raw_send_unsettled),
        ("asyncio receive (ack)", n, jms_aio_receive, raw_receive_filled),
        (f"durable fan-out x{FANOUT}", max(200, n // 10), jms_fanout, raw_fanout),
    ]


# -- issue 16: default settings, against the C proton examples -----------------------------------


def jms_default_send(url: str, address: str, n: int, persistent: bool = False,
                     transacted: bool = False) -> float:
    """Default connection options; timed until the producer is closed (all written)."""
    from amqp_jms import BytesMessage, ConnectionFactory, DeliveryMode, Queue

    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session(transacted)
        p = s.create_producer(Queue(address))
        p.set_delivery_mode(DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT)
        t0 = time.perf_counter()
        for i in range(1, n + 1):
            m = BytesMessage()
            m.write_bytes(BODY)
            p.send(m)
            if transacted and i % 100 == 0:
                s.commit()
        if transacted:
            s.commit()
        p.close()
        return n / (time.perf_counter() - t0)


def jms_default_send_persistent(url: str, address: str, n: int) -> float:
    return jms_default_send(url, address, n, persistent=True)


def jms_default_send_transacted(url: str, address: str, n: int) -> float:
    return jms_default_send(url, address, n, persistent=True, transacted=True)


def jms_default_receive(url: str, address: str, n: int) -> float:
    """AUTO_ACKNOWLEDGE ``receive`` with the default prefetch, of a queue filled (untimed)."""
    raw_send_presettled(url, address, n)
    return jms_receive(url, address, n, options="")


def c_receive_filled(url: str, address: str, n: int) -> float:
    from c_proton import c_receive

    raw_send_presettled(url, address, n)
    return c_receive(url, address, n)


def c_send_acked(url: str, address: str, n: int) -> float:
    from c_proton import c_send

    return c_send(url, address, n)


def default_phases(n: int, n_sync: int) -> list[tuple[str, int, Callable[..., float], Callable[..., float]]]:
    """Issue 16's default-settings figures, each with the C example doing the same work."""
    return [
        ("default non-persistent send", n, jms_default_send, c_send_acked),
        ("default persistent send", n_sync, jms_default_send_persistent, c_send_acked),
        ("default transacted send", n_sync, jms_default_send_transacted, c_send_acked),
        ("default receive (auto ack)", n, jms_default_receive, c_receive_filled),
    ]


def print_waiting(figs: list[Figure], ab: Path | None) -> None:
    """The waiting figures: amqp-jms, the A/B checkout and the C one-in-flight client, with
    amqp-jms over C (for a latency, C over amqp-jms) and amqp-jms over A/B."""
    print(f"\nwaiting figures (A/B: {ab or 'not run'}; C: amqp_load inflight=1 durable)")
    print(f"{'figure':34s} {'amqp-jms':>10s} {'A/B':>10s} {'C':>10s} {'unit':>6s} {'vs C':>6s} "
          f"{'vs A/B':>6s}")
    for f in figs:
        us, ab_v, c = f.best("amqp-jms"), f.best("A/B"), f.best("C")
        if us is None:
            continue
        lower = f.unit == "us"
        vs_c = (c / us if lower else us / c) if c else None
        vs_ab = (ab_v / us if lower else us / ab_v) if ab_v else None

        def fmt(v: float | None, spec: str) -> str:
            return format(v, spec) if v is not None else "-"

        print(f"{f.name:34s} {us:10.0f} {fmt(ab_v, '10.0f'):>10s} {fmt(c, '10.0f'):>10s} {f.unit:>6s} "
              f"{fmt(vs_c, '6.2f'):>6s} {fmt(vs_ab, '6.2f'):>6s}")
    rates = {k: next((f.best("amqp-jms") for f in figs if f.name.startswith(f"{k} durable")), None)
             for k in PRODUCERS}
    one = rates.get(1)
    if one:
        scale = ", ".join(f"{k}: {v / one:.2f}x" for k, v in rates.items() if v)
        print(f"durable producers, amqp-jms rate over one producer's: {scale} (goal 8: >= 4x)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


@contextlib.contextmanager
def broker_process() -> Iterator[str]:
    """The embedded broker in its own process (so neither client shares its GIL)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "amqp_jms.broker", "--port", str(port), "-q"])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the broker did not start") from None
                time.sleep(0.1)
        yield f"amqp://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small run (< 60 s)")
    ap.add_argument("-n", type=int, default=None, help="messages per phase")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--memory", type=int, default=0,
                    help="also drain this many messages and report RSS growth")
    ap.add_argument("--observability", action="store_true",
                    help="issue 21: tracing off vs the --release client, and tracing on (client_obs.py)")
    ap.add_argument("--release", default="main", help="git ref of the release --observability compares with")
    ap.add_argument("--only", default=None,
                    help="run only the figures whose name contains this text (e.g. 'default'); "
                         "'waiting': only the waiting figures (sync_figures.py)")
    ap.add_argument("--ab", default=None, type=Path,
                    help="another checkout of amqp-jms (its src/ is used) whose waiting figures are "
                         "measured in the same run, e.g. a worktree of main")
    args = ap.parse_args(argv)
    n = args.n or (4000 if args.quick else 100_000)
    n_sync = max(500, n // 10)
    rounds = args.rounds or (2 if args.quick else 3)

    results: dict[str, dict[str, float]] = {}
    if args.observability:
        from client_obs import run as observability

        with broker_process() as url:
            return observability(url, n, n_sync, rounds, args.release, raw_send_presettled, _drain)
    with broker_process() as url:
        phases: list[tuple[str, int, Callable[..., float], Callable[..., float]]] = [
            ("presettled send", n, jms_send_presettled, raw_send_presettled),
            ("receive (ack)", n, jms_receive, raw_receive),
            ("sync persistent send", n_sync, jms_send_sync, raw_send_sync),
            *issue7_phases(n // 5 if args.quick else n),  # --quick stays under 60 s
        ]
        from c_proton import unavailable_reason

        no_c = unavailable_reason()
        if no_c is None:
            defaults = default_phases(n, n_sync)
            phases += [(name, count, jms_fn, c_fn) for name, count, jms_fn, c_fn in defaults]
        else:
            print(f"default-settings figures skipped: {no_c}", flush=True)
            defaults = []
        baseline_of = {name: "C proton" for name, *_ in defaults}
        if args.only:
            phases = [ph for ph in phases if args.only in ph[0]]
        waiting: list[Figure] = []
        if not args.only or args.only == "waiting":
            ab = args.ab.resolve() / "src" if args.ab is not None else None
            waiting = run_figures(url, 300 if args.quick else n_sync, rounds, ab,
                                  lambda line: print(line, flush=True))
        for r in range(rounds):
            for name, count, jms_fn, raw_fn in phases:
                base = baseline_of.get(name, "raw proton")
                for who, fn in (("amqp-jms", jms_fn), (base, raw_fn)):
                    if name == "receive (ack)":
                        raw_send_presettled(url, f"b-{who}-{r}", count)  # fill the queue first
                        rate = fn(url, f"b-{who}-{r}", count)
                    else:
                        rate = fn(url, f"s-{who}-{r}-{name[:4]}", count)
                        _drain(url, f"s-{who}-{r}-{name[:4]}")
                    best = results.setdefault(name, {})
                    best[who] = max(best.get(who, 0.0), rate)
                    print(f"round {r + 1} {name:22s} {who:10s} {rate:10.0f} msg/s", flush=True)
        mem = memory_drain(url, args.memory) if args.memory else None

    print()
    print(f"{'figure':28s} {'amqp-jms':>10s} {'baseline':>10s} {'':10s} {'ratio':>6s} {'goal':>5s}")
    scores = []  # each goaled figure's ratio over its goal
    for name, best in results.items():
        base = baseline_of.get(name, "raw proton")
        ratio = best["amqp-jms"] / best[base]
        goal = C_GOALS.get(name) if base == "C proton" else (None if name in UNGOALED else GOAL)
        if goal is not None:
            scores.append(ratio / goal)
        g = f"{goal:5.2f}" if goal is not None else "    -"
        print(f"{name:28s} {best['amqp-jms']:10.0f} {best[base]:10.0f} {base:10s} {ratio:6.2f} {g}")
    if waiting:
        print_waiting(waiting, args.ab)
    if mem is not None:
        print(f"RSS growth draining {args.memory} messages (prefetch 1000): {mem:.1f} MB (goal < 50)")
    if scores:
        print(f"client_bench: ratio {min(scores):.2f} (goal 1.0)")
    else:
        print("client_bench: ratio - (no goaled figure run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
