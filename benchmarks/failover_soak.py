"""Failover soak: a producer and a consumer on ``failover:`` connections while every connection
is dropped every 20 s (issue 17). Not a speed benchmark: it counts what failover loses.

The embedded broker runs as a subprocess with a store; a FaultProxy (``amqp_jms.testing``)
stands between it and the clients and drops (RST) every connection through it every
``--interval`` seconds. The producer sends persistent messages (each send waits for the broker's
accept) numbered by an int property; the consumer receives in CLIENT_ACKNOWLEDGE mode and
acknowledges every message. At the end the consumer is given time to catch up, then:

* sent: sends that returned (the broker accepted them: acknowledged to the application);
* received: distinct messages received; lost: sent but never received (goal 0);
* duplicated: copies received again, split into those the rules allow and unexplained ones
  (goal 0). Allowed: a copy flagged JMSRedelivered (its acknowledgement went with the
  connection), or an unflagged copy with the first one's JMSMessageID of a send the producer's
  connection transferred again after a drop (its outcome was lost): at most that send's extra
  transfers, read from the connection's counters around each send (a synchronous producer has
  one send in flight, so at most one re-send per drop). Every number is sent once, so "the
  same message id" alone would explain any copy;
* reconnect times: from the connection listener's interrupted to its restored, per connection.

    .venv/bin/python benchmarks/failover_soak.py [--quick] [--minutes M] [--interval S]

``--quick`` runs 50 s (two drops); the full run is 10 minutes. Last line:
``failover_soak: ratio <lost + unexplained duplicates> (goal 0)``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from amqp_jms import ConnectionFactory, Queue, Session
from amqp_jms.testing import FaultProxy
from amqp_jms.testing.broker_process import BrokerProcess

QUEUE = "failover-soak"
OPTIONS = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=1000"


class Reconnects:
    """A connection listener timing each interruption until the restore."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.started: float | None = None
        self.times: list[float] = []
        self.failures: list[Exception] = []

    def on_connection_established(self, uri: str) -> None:
        pass

    def on_connection_interrupted(self, uri: str) -> None:
        self.started = time.monotonic()

    def on_connection_restored(self, uri: str) -> None:
        if self.started is not None:
            self.times.append(time.monotonic() - self.started)
            self.started = None

    def on_connection_failure(self, exc: Exception) -> None:
        self.failures.append(exc)


class Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: set[int] = set()
        #: n -> transfers of that send beyond the first (re-sent after a drop)
        self.resent: dict[int, int] = {}
        self.first_id: dict[int, str] = {}
        self.flagged_dups = 0
        #: n -> unflagged copies after the first with the first's message id
        self.same_id_dups: dict[int, int] = {}
        self.other_id_dups = 0
        self.errors: list[BaseException] = []

    def received(self, n: int, message_id: str, redelivered: bool) -> None:
        with self.lock:
            first = self.first_id.get(n)
            if first is None:
                self.first_id[n] = message_id
            elif redelivered:
                self.flagged_dups += 1
            elif message_id == first:
                self.same_id_dups[n] = self.same_id_dups.get(n, 0) + 1
            else:
                self.other_id_dups += 1

    def resend_dups(self) -> int:
        """Unflagged copies explained by a re-send: at most the send's extra transfers."""
        return sum(min(c, self.resent.get(n, 0)) for n, c in self.same_id_dups.items())

    def unexplained_dups(self) -> int:
        return self.other_id_dups + sum(self.same_id_dups.values()) - self.resend_dups()


def produce(url: str, counts: Counts, stop: threading.Event, listener: Reconnects, rate: float) -> None:
    try:
        with ConnectionFactory(url).create_connection() as conn:
            conn.add_connection_listener(listener)
            s = conn.create_session()
            p = s.create_producer(Queue(QUEUE))
            n = 0
            gap = 1.0 / rate if rate > 0 else 0.0
            next_at = time.monotonic()
            while not stop.is_set():
                m = s.create_text_message(f"soak {n}")
                m.set_int_property("n", n)
                before = conn.metrics().messages_sent
                p.send(m)
                transfers = conn.metrics().messages_sent - before
                with counts.lock:
                    counts.sent.add(n)
                    if transfers > 1:
                        counts.resent[n] = transfers - 1
                n += 1
                if gap:
                    next_at += gap
                    pause = next_at - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)
                    else:
                        next_at = time.monotonic()
    except BaseException as e:
        counts.errors.append(e)


def consume(url: str, counts: Counts, stop: threading.Event, listener: Reconnects) -> None:
    try:
        with ConnectionFactory(url).create_connection() as conn:
            conn.add_connection_listener(listener)
            conn.start()
            s = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
            c = s.create_consumer(Queue(QUEUE))
            while not stop.is_set():
                m = c.receive(200)
                if m is None:
                    continue
                counts.received(m.get_int_property("n"), m.get_jms_message_id(), m.get_jms_redelivered())
                m.acknowledge()
    except BaseException as e:
        counts.errors.append(e)


def _summary(times: list[float]) -> str:
    if not times:
        return "none"
    ms = sorted(t * 1000 for t in times)
    return f"n={len(ms)} min {ms[0]:.0f} ms, median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="50 s, two drops")
    ap.add_argument("--minutes", type=float, default=10.0, help="length of the full run (default 10)")
    ap.add_argument("--interval", type=float, default=20.0, help="seconds between drops (default 20)")
    ap.add_argument("--rate", type=float, default=200.0, help="messages per second to send (default 200)")
    args = ap.parse_args()
    seconds = 50.0 if args.quick else args.minutes * 60
    load = os.getloadavg()
    print(f"failover soak: {seconds:.0f} s, a drop every {args.interval:.0f} s, {args.rate:.0f} msg/s; "
          f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        broker = BrokerProcess("--data-dir", tmp)
        try:
            with FaultProxy(broker.addr[1]) as proxy:
                url = f"failover:({proxy.url})?{OPTIONS}"
                counts = Counts()
                stop_sending, stop_receiving = threading.Event(), threading.Event()
                plisten, clisten = Reconnects("producer"), Reconnects("consumer")
                producer = threading.Thread(target=produce,
                                            args=(url, counts, stop_sending, plisten, args.rate))
                consumer = threading.Thread(target=consume, args=(url, counts, stop_receiving, clisten))
                consumer.start()
                producer.start()
                t0 = time.monotonic()
                drops = 0
                while time.monotonic() - t0 < seconds and not counts.errors:
                    left = seconds - (time.monotonic() - t0)
                    time.sleep(min(args.interval, left))
                    if time.monotonic() - t0 < seconds - 1:
                        dropped = proxy.drop()
                        drops += 1
                        print(f"  {time.monotonic() - t0:6.1f} s: drop {drops} ({dropped} connections); "
                              f"sent {len(counts.sent)}, received {len(counts.first_id)}", flush=True)
                stop_sending.set()
                producer.join(60)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not counts.sent <= counts.first_id.keys():
                    time.sleep(0.2)
                stop_receiving.set()
                consumer.join(30)
        finally:
            broker.stop()
    lost = sorted(counts.sent - counts.first_id.keys())
    print(f"sent (acknowledged to the producer) {len(counts.sent)}, received {len(counts.first_id)}, "
          f"lost {len(lost)}{' ' + str(lost[:10]) if lost else ''}")
    unexplained = counts.unexplained_dups()
    extra = sum(counts.resent.values())
    print(f"duplicated: {counts.flagged_dups} flagged redelivered, {counts.resend_dups()} re-sends "
          f"(sends re-sent: {len(counts.resent)}, {extra} extra transfers, {drops} drops), "
          f"{unexplained} unexplained")
    if extra > drops:
        print(f"error: {extra} re-sends for {drops} drops: a synchronous producer has one send in flight")
    print(f"reconnect producer: {_summary(plisten.times)}")
    print(f"reconnect consumer: {_summary(clisten.times)}")
    for e in counts.errors + plisten.failures + clisten.failures:
        print(f"error: {e!r}")
    failures = len(counts.errors) + len(plisten.failures) + len(clisten.failures)
    bad = len(lost) + unexplained + failures + max(0, extra - drops)
    print(f"failover_soak: ratio {bad} (goal 0)")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
