"""Failover through a real broker crash: the embedded broker as a subprocess with a store,
SIGKILLed and restarted on the same store and port while a producer of persistent messages and
a consumer keep going (issue 17).

At the end we count what the application was told was sent (a persistent send returned, or its
transaction committed) and never received: it must be nothing. Duplicates are allowed only as
the failover rules allow them: a message whose acknowledgement went with the connection comes
back flagged JMSRedelivered; a send whose outcome was lost is re-sent with the same
JMSMessageID.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue, Session, TransactionRolledBackException
from amqp_jms.testing.broker_process import RestartableBroker

N = 300
FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=250"


class Crashable(RestartableBroker):
    """A broker subprocess on a store that can be killed and brought back on the same port."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(str(data_dir))

    def url(self, options: str = FAST) -> str:
        return f"failover:(amqp://127.0.0.1:{self.port})?{options}"


@pytest.fixture
def crashable(tmp_path: Path) -> Iterator[Crashable]:
    b = Crashable(tmp_path / "store")
    try:
        yield b
    finally:
        b.proc.stop()


class Received:
    """What a consumer saw, by the producer's sequence number ``n``."""

    def __init__(self) -> None:
        self.copies: dict[int, list[tuple[str, bool]]] = {}
        self.lock = threading.Lock()

    def add(self, msg: Any) -> None:
        with self.lock:
            self.copies.setdefault(msg.get_int_property("n"), []).append(
                (msg.get_jms_message_id(), msg.get_jms_redelivered()))

    def count(self) -> int:
        with self.lock:
            return len(self.copies)

    def unexplained_duplicates(self) -> list[int]:
        """Copies after the first that are neither flagged redelivered nor the same message id
        as the first copy."""
        out = []
        with self.lock:
            for n, copies in self.copies.items():
                first_id = copies[0][0]
                out += [n for mid, redelivered in copies[1:] if not redelivered and mid != first_id]
        return out


def _produce(url: str, queue: str, sent: list[int], errors: list[BaseException]) -> None:
    try:
        with ConnectionFactory(url).create_connection() as conn:
            conn.set_exception_listener(errors.append)  # only if failover gave up: it must not
            s = conn.create_session()
            p = s.create_producer(Queue(queue))
            for n in range(N):
                m = s.create_text_message(f"m{n}")
                m.set_int_property("n", n)
                p.send(m)  # persistent: returns once the broker accepted it
                sent.append(n)
                time.sleep(0.002)
    except BaseException as e:  # reported by the test
        errors.append(e)


def _consume(url: str, queue: str, mode: int, got: Received, stop: threading.Event,
             errors: list[BaseException]) -> None:
    try:
        with ConnectionFactory(url).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.start()
            s = conn.create_session(mode == Session.SESSION_TRANSACTED, mode)
            c = s.create_consumer(Queue(queue))
            batch: list[Any] = []
            while not stop.is_set():
                m = c.receive(200)
                if m is not None:
                    batch.append(m)
                if mode == Session.CLIENT_ACKNOWLEDGE and (len(batch) >= 7 or (m is None and batch)):
                    batch[-1].acknowledge()
                elif mode == Session.SESSION_TRANSACTED and (len(batch) >= 7 or (m is None and batch)):
                    try:
                        s.commit()
                    except TransactionRolledBackException:
                        batch = []  # rolled back: those come again, flagged redelivered
                        continue
                elif mode not in (Session.CLIENT_ACKNOWLEDGE, Session.SESSION_TRANSACTED):
                    for b in batch:
                        got.add(b)
                    batch = []
                    continue
                if m is None or len(batch) >= 7:
                    for b in batch:
                        got.add(b)
                    batch = []
    except BaseException as e:
        errors.append(e)


MODES = {
    "auto": Session.AUTO_ACKNOWLEDGE,
    "client": Session.CLIENT_ACKNOWLEDGE,
    "dups_ok": Session.DUPS_OK_ACKNOWLEDGE,
    "transacted": Session.SESSION_TRANSACTED,
}


@pytest.mark.parametrize("mode", list(MODES))
def test_broker_killed_and_restarted_loses_no_acknowledged_message(crashable: Crashable, mode: str) -> None:
    queue = f"crash-{mode}"
    url = crashable.url()
    sent: list[int] = []
    got = Received()
    errors: list[BaseException] = []
    stop = threading.Event()
    producer = threading.Thread(target=_produce, args=(url, queue, sent, errors))
    consumer = threading.Thread(target=_consume, args=(url, queue, MODES[mode], got, stop, errors))
    producer.start()
    consumer.start()
    deadline = time.monotonic() + 60
    for at in (60, 180):  # two crashes, each with both clients busy
        while len(sent) < at and time.monotonic() < deadline and not errors:
            time.sleep(0.01)
        crashable.crash_and_restart()
    producer.join(60)
    while got.count() < len(set(sent)) and time.monotonic() < deadline and not errors:
        time.sleep(0.05)
    stop.set()
    consumer.join(30)
    assert not errors, errors
    assert len(sent) == N
    missing = sorted(set(sent) - set(got.copies))
    assert missing == [], f"{len(missing)} acknowledged messages lost: {missing[:20]}"
    assert got.unexplained_duplicates() == []


def test_transacted_producer_through_a_crash_commits_or_reports_rolled_back(crashable: Crashable) -> None:
    """A transacted producer: every committed batch arrives; a commit that spanned the crash
    raises TransactionRolledBackException and the application sends that batch again."""
    url = crashable.url()
    committed: list[int] = []
    failed_commits = 0
    got = Received()
    errors: list[BaseException] = []
    stop = threading.Event()
    consumer = threading.Thread(target=_consume, args=(url, "crash-txp", Session.AUTO_ACKNOWLEDGE, got, stop,
                                                       errors))
    consumer.start()
    crashed = False
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        p = s.create_producer(Queue("crash-txp"))
        n = 0
        while n < 200:
            batch = list(range(n, n + 10))
            for i in batch:
                m = s.create_text_message(f"m{i}")
                m.set_int_property("n", i)
                p.send(m)
            if n == 100 and not crashed:
                crashed = True
                crashable.crash_and_restart()
            try:
                s.commit()
            except TransactionRolledBackException:
                failed_commits += 1
                continue  # the same batch again, in the new transaction
            committed += batch
            n += 10
    deadline = time.monotonic() + 30
    while got.count() < len(committed) and time.monotonic() < deadline and not errors:
        time.sleep(0.05)
    stop.set()
    consumer.join(30)
    assert not errors, errors
    assert failed_commits == 1  # the batch sent across the crash was in doubt
    assert sorted(set(committed) - set(got.copies)) == []
    # the rolled-back batch must not have arrived twice: it was never committed
    assert all(len(c) == 1 or all(r for _, r in c[1:]) for c in got.copies.values())
