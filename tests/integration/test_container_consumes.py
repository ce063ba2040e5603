"""What the listener container consumes and how it settles (issue 28): a selector, a shared
durable subscription with several workers, client acknowledge, and the asyncio face riding
through a dropped connection. Checked against the embedded broker's own figures.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import Any

from waiting import wait_for

from amqp_jms import ConnectionFactory, Queue, Topic
from amqp_jms.container import AsyncListenerContainer, Backoff, ListenerContainer
from amqp_jms.testing import FaultProxy

FAST = dict(backoff=Backoff(0.02, 2.0, 0.2), reconnect=Backoff(0.05, 2.0, 0.5), receive_timeout_s=0.2)


def send(url: str, dest: Any, texts: list[str], color: str | None = None) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(dest)
        for t in texts:
            m = s.create_text_message(t)
            if color is not None:
                m.set_string_property("color", color)
            p.send(m)


def test_a_selector_takes_only_matching_messages_and_leaves_the_rest(broker: Any) -> None:
    send(broker.url, Queue("q"), [f"r{i}" for i in range(10)], "red")
    send(broker.url, Queue("q"), [f"b{i}" for i in range(7)], "blue")
    seen: list[str] = []
    with ListenerContainer(broker.url, lambda m: seen.append(m.get_text()), "queue://q",
                           selector="color = 'red'", **FAST) as c:
        assert wait_for(lambda: c.stats().succeeded == 10)
        assert not wait_for(lambda: c.stats().received > 10, 0.5)  # no blue one ever reaches it
    assert sorted(seen) == sorted(f"r{i}" for i in range(10))
    q = broker.metrics().queue("q")
    assert q.dequeued == 10 and q.depth == 7 and q.delivering == 0


def test_a_shared_durable_subscription_shares_out_and_keeps_messages_while_stopped(broker: Any) -> None:
    seen: Counter[str] = Counter()
    threads: set[str] = set()
    lock = threading.Lock()

    def handle(m: Any) -> None:
        time.sleep(0.005)
        with lock:
            seen[m.get_text()] += 1
            threads.add(threading.current_thread().name)

    opts = dict(subscription="audit", durable=True, shared=True, concurrency=2, **FAST)
    with ListenerContainer(broker.url, handle, "topic://prices", **opts) as c:
        assert wait_for(lambda: c.stats().workers == 2 and c.health().ready)
        send(broker.url, Topic("prices"), [f"p{i}" for i in range(40)])
        assert wait_for(lambda: c.stats().succeeded == 40)
    assert len(threads) == 2  # both workers consumed the one subscription
    send(broker.url, Topic("prices"), [f"late{i}" for i in range(5)])  # nobody consuming now
    with ListenerContainer(broker.url, handle, "topic://prices", **opts) as c:
        assert wait_for(lambda: c.stats().succeeded == 5)
    assert set(seen) == {*(f"p{i}" for i in range(40)), *(f"late{i}" for i in range(5))}
    assert set(seen.values()) == {1}  # each message once across the workers


def test_client_mode_settles_only_what_the_handler_acknowledged(broker: Any) -> None:
    texts = [f"m{i}" for i in range(12)]
    send(broker.url, Queue("q"), texts)
    handled: list[str] = []

    def handle(m: Any) -> None:
        handled.append(m.get_text())
        if m.get_text() != "m5":  # m5 is processed but never acknowledged
            m.acknowledge()

    with ListenerContainer(broker.url, handle, "queue://q", mode="client", **FAST) as c:
        assert wait_for(lambda: c.stats().succeeded == 12)
        assert wait_for(lambda: broker.metrics().queue("q").dequeued == 11)
        q = broker.metrics().queue("q")
        assert q.delivering == 1  # m5 held unsettled while the container runs
    assert sorted(handled) == sorted(texts)
    q = broker.metrics().queue("q")
    assert q.dequeued == 11 and q.depth == 1  # m5 given back with the session, not lost
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        m = conn.create_session().create_consumer(Queue("q")).receive(2000)
        assert m is not None and m.get_text() == "m5"


def test_the_asyncio_face_reconnects_after_the_fault_proxy_drops_the_connection(broker: Any) -> None:
    texts = [f"m{i}" for i in range(120)]
    send(broker.url, Queue("q"), texts)
    processed: list[str] = []

    async def handle(m: Any) -> None:
        await asyncio.sleep(0.002)
        processed.append(m.get_text())

    async def until(cond: Any, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cond():
                return True
            await asyncio.sleep(0.02)
        return bool(cond())

    with FaultProxy(broker.port) as proxy:
        async def main() -> Any:
            async with AsyncListenerContainer(proxy.url, handle, "queue://q", concurrency=2, **FAST) as c:
                assert await until(lambda: len(processed) >= 20)
                proxy.drop()
                assert await until(lambda: set(processed) == set(texts))
                assert c.stats().reconnects >= 1
                assert await until(lambda: c.health().ready)
            return c

        c = asyncio.run(main())
    assert not c.health().live
    assert wait_for(lambda: broker.metrics().queue("q").dequeued == 120)
    assert broker.metrics().queue("q").depth == 0
