"""JMS 2.0 chapter 8.2 against the embedded broker: ``ConnectionConsumer``, ``ServerSessionPool``,
``ServerSession``, ``Session.run``; the ``maxMessages`` hint (8.2.4: at most that many loaded
into one session, more than one only when messages back up) and a shared subscription across
several connection consumers."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from waiting import wait_for

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    JMSException,
    Queue,
    QueueConnectionFactory,
    Session,
    Topic,
)
from amqp_jms.client import ThreadServerSessionPool


class RecordingPool:
    """A ServerSessionPool of the application server's own (the spec's role split): records how
    many messages each ``start()`` was loaded with, runs ``Session.run`` on a thread."""

    def __init__(self, conn: Any, size: int, on_message: Callable[[Any], None],
                 mode: int = Session.AUTO_ACKNOWLEDGE) -> None:
        self.loads: list[int] = []
        self._free: list[Any] = []
        self._cond = threading.Condition()
        for _ in range(size):
            s = conn.create_session(mode)
            s.set_message_listener(on_message)
            self._free.append(_SS(self, s))

    def get_server_session(self) -> Any:
        with self._cond:
            while not self._free:
                self._cond.wait()
            return self._free.pop()

    def give_back(self, ss: Any) -> None:
        with self._cond:
            self._free.append(ss)
            self._cond.notify()


class _SS:
    def __init__(self, pool: RecordingPool, session: Any) -> None:
        self.pool = pool
        self.session = session

    def get_session(self) -> Any:
        return self.session

    def start(self) -> None:
        # 8.2.6: start() runs the session on a thread of the server's; run() returns when done
        self.pool.loads.append(self.session.internal.server.loaded_count)

        def run() -> None:
            try:
                self.session.run()
            finally:
                self.pool.give_back(self)

        threading.Thread(target=run, daemon=True).start()


def send(conn: Any, dest: Any, n: int, prefix: str = "m") -> None:
    s = conn.create_session()
    p = s.create_producer(dest)
    for i in range(n):
        p.send(s.create_text_message(f"{prefix}{i}"))
    s.close()


def test_max_messages_bounds_each_load_and_a_backlog_loads_more_than_one(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        send(conn, Queue("q"), 60)
        gate = threading.Event()
        got: list[str] = []

        def on_message(m: Any) -> None:
            gate.wait(5)
            got.append(m.get_text())

        pool = RecordingPool(conn, 1, on_message)
        conn.start()
        cc = conn.create_connection_consumer(Queue("q"), None, pool, 4)
        assert cc.get_server_session_pool() is pool and cc.max_messages == 4
        time.sleep(0.3)  # the one server session is busy: messages back up in the prefetch
        gate.set()
        assert wait_for(lambda: len(got) == 60)
        cc.close()
    assert max(pool.loads) <= 4 and pool.loads.count(4) >= 10
    assert sorted(got) == sorted(f"m{i}" for i in range(60))
    assert broker.metrics().queue("q").dequeued == 60


def test_light_traffic_loads_one_message_per_session(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        got: list[str] = []
        pool = RecordingPool(conn, 2, lambda m: got.append(m.get_text()))
        conn.start()
        cc = conn.create_connection_consumer(Queue("q"), None, pool, 10)
        for i in range(5):
            send(conn, Queue("q"), 1, f"x{i}-")
            assert wait_for(lambda i=i: len(got) == i + 1)
        cc.close()
    assert pool.loads == [1, 1, 1, 1, 1]


def test_a_shared_subscription_across_connection_consumers_delivers_each_message_once(broker: Any) -> None:
    topic = Topic("prices")
    got: list[tuple[int, str]] = []
    lock = threading.Lock()
    f = ConnectionFactory(broker.url)
    with f.create_connection() as c1, f.create_connection() as c2, f.create_connection() as producer:
        ccs, pools = [], []
        for i, conn in enumerate((c1, c2)):
            def on_message(m: Any, i: int = i) -> None:
                with lock:
                    got.append((i, m.get_text()))
                time.sleep(0.002)

            pool = ThreadServerSessionPool(conn, lambda s, f=on_message: f, size=2)
            pools.append(pool)
            conn.start()
            ccs.append(conn.create_shared_connection_consumer(topic, "px", None, pool, 3))
        send(producer, topic, 100)
        assert wait_for(lambda: len(got) >= 100)
        time.sleep(0.2)  # nothing more (no duplicates) arrives
        for cc in ccs:
            cc.close()
        for pool in pools:
            pool.close()
    texts = Counter(t for _, t in got)
    assert len(got) == 100 and set(texts.values()) == {1}
    assert {i for i, _ in got} == {0, 1}  # shared out between the two


@pytest.mark.parametrize("shared", [False, True], ids=["durable", "shared-durable"])
def test_durable_connection_consumers_keep_messages_while_closed(broker: Any, shared: bool) -> None:
    topic = Topic("news")
    got: list[str] = []
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.set_client_id("app")
        pool = ThreadServerSessionPool(conn, lambda s: lambda m: got.append(m.get_text()), size=1)
        make = conn.create_shared_durable_connection_consumer if shared else \
            conn.create_durable_connection_consumer
        cc = make(topic, "sub", None, pool, 2)
        cc.close()  # the subscription stays
        send(conn, topic, 5)
        conn.start()
        cc = make(topic, "sub", None, pool, 2)
        assert wait_for(lambda: len(got) == 5)
        cc.close()
        pool.close()
        conn.create_session().unsubscribe("sub")


def test_a_raising_listener_gives_the_message_back_and_client_ack_settles_per_message(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        send(conn, Queue("q"), 3)
        counts: Counter[str] = Counter()

        def flaky(m: Any) -> None:
            counts[m.get_text()] += 1
            if m.get_text() == "m1" and counts["m1"] == 1:
                raise RuntimeError("once")

        pool = ThreadServerSessionPool(conn, lambda s: flaky, size=1)
        conn.start()
        cc = conn.create_connection_consumer(Queue("q"), None, pool, 1)
        assert wait_for(lambda: broker.metrics().queue("q").dequeued == 3)
        cc.close()
        pool.close()
        assert counts == {"m0": 1, "m1": 2, "m2": 1}

        # CLIENT_ACKNOWLEDGE: only what the listener acknowledged is settled
        send(conn, Queue("c"), 4)
        acked: list[str] = []

        def ack_even(m: Any) -> None:
            if int(m.get_text()[1:]) % 2 == 0:
                m.acknowledge()
                acked.append(m.get_text())

        pool = ThreadServerSessionPool(conn, lambda s: ack_even, size=1,
                                       session_mode=Session.CLIENT_ACKNOWLEDGE)
        cc = conn.create_connection_consumer(Queue("c"), None, pool, 2)
        assert wait_for(lambda: len(acked) == 2)
        assert wait_for(lambda: broker.metrics().queue("c").dequeued == 2)
        assert broker.metrics().queue("c").delivering == 2
        cc.close()
        pool.close()
    assert broker.metrics().queue("c").depth == 2  # the unacknowledged ones went back


def test_what_the_spec_refuses(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        pool = ThreadServerSessionPool(conn, lambda s: print, size=1)
        with pytest.raises(JMSException, match="max_messages"):
            conn.create_connection_consumer(Queue("q"), None, pool, 0)
        with pytest.raises(JMSException, match="ServerSessionPool"):
            conn.create_connection_consumer(Queue("q"), None, object(), 1)
        s = conn.create_session(Session.SESSION_TRANSACTED)
        with pytest.raises(IllegalStateException, match="transacted"):
            s.internal.server.load([])
        with pytest.raises(IllegalStateException, match="set_message_listener"):
            conn.create_session().run()
        pool.close()
    with QueueConnectionFactory(broker.url).create_queue_connection() as qc:  # JMS table 4.1
        for refused in (qc.create_durable_connection_consumer, qc.create_shared_durable_connection_consumer):
            with pytest.raises(IllegalStateException, match="QueueConnection"):
                refused(Topic("t"), "s", None, object(), 1)


def test_the_asyncio_pool_runs_server_sessions_as_tasks(broker: Any) -> None:
    import asyncio

    from amqp_jms.aio import AsyncConnectionFactory, AsyncServerSessionPool

    async def main() -> tuple[list[str], set[str]]:
        got: list[str] = []
        threads: set[str] = set()
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            send(conn.sync, Queue("q"), 30)

            async def on_message(m: Any) -> None:
                await asyncio.sleep(0.001)
                threads.add(threading.current_thread().name)
                if m.get_text() == "m5" and "m5" not in got:
                    got.append("m5")
                    raise RuntimeError("once")  # given back, handled again
                got.append(m.get_text())

            pool = await AsyncServerSessionPool.create(conn, lambda s: on_message, size=3)
            await conn.start()
            cc = await conn.create_connection_consumer(Queue("q"), None, pool, 5)
            for _ in range(500):
                if len(got) >= 31:
                    break
                await asyncio.sleep(0.02)
            await asyncio.to_thread(cc.close)
            await pool.close()
        return got, threads

    got, threads = asyncio.run(main())
    assert sorted(set(got)) == sorted(f"m{i}" for i in range(30)) and got.count("m5") == 2
    assert threads == {threading.main_thread().name}  # on the event loop, not a pool thread
    assert broker.metrics().queue("q").dequeued == 30
