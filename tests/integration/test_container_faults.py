"""The listener container under real faults (issue 28): nothing lost, nothing acknowledged before
its handler returned. Each test checks the broker's own figures (depth, dequeued, dead-lettered)
against what the handler saw, not just the handler's side.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import Any

import pytest
from waiting import wait_for

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.container import AsyncListenerContainer, Backoff, ListenerContainer
from amqp_jms.testing import FaultProxy
from amqp_jms.testing.broker_process import RestartableBroker

FAST = dict(backoff=Backoff(0.02, 2.0, 0.2), reconnect=Backoff(0.05, 2.0, 0.5), receive_timeout_s=0.2)




def send(url: str, queue: str, texts: list[str]) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(queue))
        for t in texts:
            p.send(s.create_text_message(t))


def drain(url: str, queue: str, timeout_ms: int = 300) -> list[str]:
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue(queue))
        while (m := c.receive(timeout_ms)) is not None:
            out.append(m.get_text())
    return out


def test_a_raising_handler_retries_with_back_off_then_succeeds(broker: Any) -> None:
    texts = [f"m{i}" for i in range(30)]
    send(broker.url, "q", texts)
    seen: list[tuple[str, int]] = []
    failures: list[str] = []

    def handle(m: Any) -> None:
        n = m.get_int_property("JMSXDeliveryCount")
        seen.append((m.get_text(), n))
        if m.get_text() in ("m3", "m17") and n < 3:
            raise RuntimeError("transient")

    with ListenerContainer(broker.url, handle, "queue://q", concurrency=2, max_deliveries=5,
                           error_handler=lambda e, m: failures.append(m.get_text()), **FAST) as c:
        assert wait_for(lambda: c.stats().succeeded == 30)
    done = Counter(t for t, _ in seen)
    assert set(done) == set(texts)
    assert done["m3"] == done["m17"] == 3 and sorted(failures) == ["m17", "m17", "m3", "m3"]
    assert [n for t, n in seen if t == "m3"] == [1, 2, 3]  # the broker counted each give-back
    q = broker.metrics().queue("q")
    assert q.depth == 0 and q.delivering == 0 and q.dead_lettered == 0


def test_a_poison_message_goes_to_the_dead_letter_queue_after_max_deliveries(
        broker_factory: Any, caplog: pytest.LogCaptureFixture) -> None:
    broker = broker_factory(max_delivery_attempts=3)
    send(broker.url, "q", ["ok1", "poison", "ok2"])
    calls: Counter[str] = Counter()

    def handle(m: Any) -> None:
        calls[m.get_text()] += 1
        if m.get_text() == "poison":
            raise ValueError("cannot parse order")

    with ListenerContainer(broker.url, handle, "queue://q", max_deliveries=3, **FAST) as c:
        assert wait_for(lambda: c.stats().dead_lettered == 1)
        assert wait_for(lambda: broker.metrics().queue("q").depth == 0)
    assert calls == {"ok1": 1, "ok2": 1, "poison": 3}
    assert broker.metrics().queue("q").dead_lettered == 1
    assert drain(broker.url, "DLQ") == ["poison"]
    assert "goes to the dead-letter path" in caplog.text and "cannot parse order" in caplog.text


def test_rejected_dead_letter_outcome_on_a_broker_without_a_delivery_limit(broker: Any) -> None:
    """The embedded broker keeps a modified{undeliverable-here} message for other consumers
    unless it has a delivery limit: REJECTED dead-letters it at once."""
    send(broker.url, "q", ["poison"])

    def handle(m: Any) -> None:
        raise ValueError("bad")

    with ListenerContainer(broker.url, handle, "queue://q", max_deliveries=2,
                           dead_letter_outcome="REJECTED", **FAST) as c:
        assert wait_for(lambda: c.stats().dead_lettered == 1)
    assert drain(broker.url, "DLQ") == ["poison"]
    assert broker.metrics().queue("q").depth == 0


def test_a_handler_slower_than_the_back_off_never_overlaps_its_own_redelivery(broker: Any) -> None:
    """The back-off starts after the handler gave up, and the message is not settled before:
    the broker shows it delivering (not dequeued) for the whole time its handler runs."""
    send(broker.url, "q", ["slow"])
    active: set[str] = set()
    overlaps: list[str] = []
    counts: list[int] = []
    unsettled_while_running: list[bool] = []

    def handle(m: Any) -> None:
        t = m.get_text()
        if t in active:
            overlaps.append(t)
        active.add(t)
        try:
            counts.append(m.get_int_property("JMSXDeliveryCount"))
            time.sleep(0.15)  # slower than the 0.02 s back-off
            q = broker.metrics().queue("q")
            unsettled_while_running.append(q.dequeued == 0 and q.delivering == 1)
            if counts[-1] < 3:
                raise TimeoutError("downstream slow")
        finally:
            active.discard(t)

    with ListenerContainer(broker.url, handle, "queue://q", concurrency=3, max_deliveries=5, **FAST) as c:
        assert wait_for(lambda: c.stats().succeeded == 1)
    assert overlaps == [] and counts == [1, 2, 3]
    assert unsettled_while_running == [True, True, True]
    assert wait_for(lambda: broker.metrics().queue("q").dequeued == 1)


def test_transacted_batches_commit_every_n_and_a_failure_rolls_the_batch_back(broker: Any) -> None:
    texts = [f"m{i}" for i in range(25)]
    send(broker.url, "q", texts)
    processed: list[str] = []
    dequeued_at_commit: list[int] = []
    failed = threading.Event()

    def handle(m: Any) -> None:
        if m.get_text() == "m7" and not failed.is_set():
            failed.set()
            raise RuntimeError("once")
        processed.append(m.get_text())
        dequeued_at_commit.append(broker.metrics().queue("q").dequeued)

    with ListenerContainer(broker.url, handle, "queue://q", mode="transacted", batch_size=10, **FAST) as c:
        assert wait_for(lambda: broker.metrics().queue("q").dequeued == 25)
        assert c.stats().failed == 1
    assert set(processed) == set(texts)
    # the rolled-back batch (m0..m6) ran again; nothing was dequeued before its batch committed
    assert Counter(processed)["m0"] == 2 and Counter(processed)["m8"] == 1
    assert max(dequeued_at_commit) < 25 and dequeued_at_commit[0] == 0


def test_graceful_stop_finishes_in_flight_and_commits(broker: Any) -> None:
    send(broker.url, "q", [f"m{i}" for i in range(40)])
    started: list[str] = []
    finished: list[str] = []

    def handle(m: Any) -> None:
        started.append(m.get_text())
        time.sleep(0.1)
        finished.append(m.get_text())

    c = ListenerContainer(broker.url, handle, "queue://q", concurrency=4, mode="transacted", batch_size=3,
                          **FAST)
    c.start()
    assert wait_for(lambda: len(started) >= 6)
    assert c.stop() is True
    assert sorted(started) == sorted(finished)  # in-flight ones finished
    q = broker.metrics().queue("q")
    assert q.dequeued == len(finished) and q.depth == 40 - len(finished) and q.delivering == 0
    assert c.health().live is False


def test_scaling_between_min_and_max_with_the_backlog(broker: Any) -> None:
    send(broker.url, "q", [f"m{i}" for i in range(60)])
    peak = [0]

    def handle(m: Any) -> None:
        time.sleep(0.02)

    url = broker.url + "?jms.prefetchPolicy.all=1"
    with ListenerContainer(url, handle, "queue://q", concurrency="1-4", idle_receives_to_retire=2,
                           **FAST) as c:
        def busy() -> bool:
            peak[0] = max(peak[0], c.stats().workers)
            return c.stats().succeeded == 60
        assert wait_for(busy)
        assert peak[0] >= 3
        assert wait_for(lambda: c.stats().workers == 1, 10)
        assert c.health().ready


def test_broker_killed_with_sigkill_mid_batch_and_restarted(tmp_path: Any) -> None:
    rb = RestartableBroker(str(tmp_path / "store"))
    try:
        url = f"amqp://127.0.0.1:{rb.port}"
        texts = [f"m{i}" for i in range(120)]
        send(url, "q", texts)
        processed: list[str] = []
        lock = threading.Lock()

        def handle(m: Any) -> None:
            time.sleep(0.002)
            with lock:
                processed.append(m.get_text())

        with ListenerContainer(url, handle, "queue://q", concurrency=2, mode="transacted", batch_size=10,
                               **FAST) as c:
            assert wait_for(lambda: len(processed) >= 30)
            rb.kill()  # mid-batch: some handled messages are in an uncommitted transaction
            assert wait_for(lambda: not c.health().ready, 5)
            rb.start()
            assert wait_for(lambda: set(processed) >= set(texts), 30)
            assert c.stats().reconnects >= 1 and wait_for(lambda: c.health().ready)
        with ConnectionFactory(url).create_connection() as conn:
            conn.start()
            assert conn.create_session().create_consumer(Queue("q")).receive(300) is None  # all settled
    finally:
        rb.stop()


@pytest.mark.parametrize("failover", [False, True], ids=["reconnect", "failover-url"])
def test_the_fault_proxy_drops_the_connection(broker: Any, failover: bool) -> None:
    texts = [f"m{i}" for i in range(150)]
    send(broker.url, "q", texts)
    processed: list[str] = []
    with FaultProxy(broker.port) as proxy:
        url = proxy.url
        if failover:
            url = f"failover:({proxy.url})?failover.initialReconnectDelay=0&failover.reconnectDelay=50"

        def handle(m: Any) -> None:
            time.sleep(0.002)
            processed.append(m.get_text())

        with ListenerContainer(url, handle, "queue://q", concurrency=2, **FAST) as c:
            assert wait_for(lambda: len(processed) >= 20)
            proxy.drop()
            assert wait_for(lambda: set(processed) == set(texts), 20)
            assert wait_for(lambda: broker.metrics().queue("q").dequeued == 150)
            if not failover:
                assert c.stats().reconnects >= 1


def test_the_asyncio_face_same_policy(broker_factory: Any) -> None:
    broker = broker_factory(max_delivery_attempts=2)
    send(broker.url, "q", [*(f"m{i}" for i in range(20)), "poison"])
    seen: list[str] = []

    async def handle(m: Any) -> None:
        await asyncio.sleep(0.001)
        if m.get_text() == "poison":
            raise ValueError("bad")
        seen.append(m.get_text())

    async def main() -> Any:
        async with AsyncListenerContainer(broker.url, handle, "queue://q", concurrency=3, max_deliveries=2,
                                          **FAST) as c:
            for _ in range(500):
                if c.stats().succeeded == 20 and c.stats().dead_lettered == 1:
                    break
                await asyncio.sleep(0.02)
            assert c.health().ready
        return c

    c = asyncio.run(main())
    assert sorted(seen) == sorted(f"m{i}" for i in range(20))
    assert c.stats().dead_lettered == 1 and not c.health().live
    assert drain(broker.url, "DLQ") == ["poison"]
