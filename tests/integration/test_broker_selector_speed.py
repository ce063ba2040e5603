"""Selective consumers on deep queues: the broker scans once per credit grant, not per message.

A consumer with a selector on a queue holding thousands of messages used to wait seconds for
its first message (the broker rescanned from the head for every message it handed over), and
every arrival rescanned the whole queue while such a consumer was attached. These tests pin
the user-visible timings with generous bounds for a loaded 2-core machine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message
from proton.reactor import AtMostOnce
from proton.utils import BlockingConnection
from test_broker_peer import Selector

from amqp_jms.broker import Broker

REGIONS = ("EU", "US", "APAC")
SELECTOR = "region = 'EU' AND total > 100"


@pytest.fixture
def conn(broker: Broker) -> Iterator[BlockingConnection]:
    c = BlockingConnection(broker.url, timeout=20)
    try:
        yield c
    finally:
        c.close()


def queue_depth(broker: Broker, name: str) -> int:
    core = broker.core
    assert core is not None
    return int(broker.run_soon(lambda: len(core.router.queues[name])))


def fill(broker: Broker, conn: BlockingConnection, name: str, n: int, *, wait: bool = True) -> None:
    """Send ``n`` orders presettled (fast); with ``wait``, until the broker holds all of them."""
    s = conn.create_sender(name, options=AtMostOnce())
    for i in range(n):
        s.send(Message(body=i, properties={"region": REGIONS[i % 3], "total": i}))
    if wait:  # the blocking connection does I/O only inside its own calls: pump it while waiting
        conn.wait(lambda: queue_depth(broker, name) >= n, timeout=60, msg="broker did not get every message")
    s.close()


def expected(n: int) -> list[int]:
    return [i for i in range(n) if REGIONS[i % 3] == "EU" and i > 100]


def drain(receiver: Any, timeout: float = 0.5) -> list[Any]:
    out: list[Any] = []
    while True:
        try:
            m = receiver.receive(timeout=timeout)
        except Exception:
            return out
        out.append(m.body)
        receiver.accept()


def test_first_selected_message_from_deep_queue_arrives_fast(
    broker: Broker, conn: BlockingConnection
) -> None:
    fill(broker, conn, "orders", 3000)
    t0 = time.perf_counter()
    r = conn.create_receiver("orders", name="eu-big", options=Selector(SELECTOR), credit=1000)
    first = r.receive(timeout=20)
    elapsed = time.perf_counter() - t0
    r.accept()
    assert first.body == 102
    assert elapsed < 0.5, f"first selected message took {elapsed:.3f} s"
    # the rest of the matches follow in queue order, and nothing else was taken
    assert [102, *drain(r)] == expected(3000)
    r.close()
    rest = conn.create_receiver("orders", name="rest", credit=1000)
    others = drain(rest)
    assert len(others) == 3000 - len(expected(3000))
    assert others == sorted(others) and not set(others) & set(expected(3000))


def test_selected_messages_with_credit_one_at_a_time(broker: Broker, conn: BlockingConnection) -> None:
    fill(broker, conn, "orders1", 3000)
    r = conn.create_receiver("orders1", name="eu-one", options=Selector(SELECTOR), credit=1)
    got: list[Any] = []
    worst = 0.0
    for _ in range(30):
        t = time.perf_counter()
        m = r.receive(timeout=20)
        worst = max(worst, time.perf_counter() - t)
        r.accept()
        got.append(m.body)
    assert got == expected(3000)[:30]
    assert worst < 0.5, f"a selected message took {worst:.3f} s"


def test_arrivals_do_not_rescan_for_an_idle_selective_consumer(
    broker: Broker, conn: BlockingConnection
) -> None:
    # a consumer with credit whose selector matches nothing in the backlog
    r = conn.create_receiver("orders2", name="late", options=Selector("total >= 2999"), credit=10)
    t0 = time.perf_counter()
    fill(broker, conn, "orders2", 3000, wait=False)
    m = r.receive(timeout=60)  # the last one sent is the only match
    elapsed = time.perf_counter() - t0
    r.accept()
    assert m.body == 2999
    assert queue_depth(broker, "orders2") == 2999
    assert elapsed < 2.5, f"3000 arrivals took {elapsed:.1f} s with a selective consumer attached"


def test_other_connections_are_served_during_a_long_scan(broker: Broker, conn: BlockingConnection) -> None:
    n = 20000
    fill(broker, conn, "deep", n)
    latencies: list[float] = []
    ready = threading.Event()
    stop = threading.Event()
    errors: list[BaseException] = []

    def ping() -> None:  # round trips on another connection, its own thread
        try:
            other = BlockingConnection(broker.url, timeout=20)
            try:
                s = other.create_sender("side")
                rs = other.create_receiver("side", credit=10)
                i = 0
                while not stop.is_set():
                    t = time.perf_counter()
                    s.send(Message(body=i))
                    assert rs.receive(timeout=20).body == i
                    rs.accept()
                    latencies.append(time.perf_counter() - t)
                    i += 1
                    ready.set()
            finally:
                other.close()
        except BaseException as e:  # reported by the test thread
            errors.append(e)
            ready.set()

    th = threading.Thread(target=ping, daemon=True)
    th.start()
    try:
        assert ready.wait(20)
        before = len(latencies)
        # a selector no message matches: the broker has to look at all 20000 of them
        nobody = conn.create_receiver("deep", name="nobody", options=Selector("region = 'NONE'"), credit=10)
        time.sleep(1.0)
        during = latencies[before:]
    finally:
        stop.set()
        th.join(30)
    assert not errors, errors
    assert during, "no round trip completed on the other connection"
    worst = max(during)
    assert worst < 0.25, f"a round trip on another connection took {worst:.3f} s during the scan"
    nobody.close()
    assert queue_depth(broker, "deep") == n
