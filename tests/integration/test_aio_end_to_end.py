"""The asyncio API (amqp_jms.aio) end to end on the embedded broker."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from amqp_jms import IllegalStateException, InvalidSelectorRuntimeException, Queue, Session, Topic
from amqp_jms.aio import AsyncConnectionFactory, AsyncJMSContext
from amqp_jms.message import TextMessage


def test_send_receive_and_async_iteration(broker: Any) -> None:
    async def main() -> list[str]:
        q = Queue("aio-q")
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            session = await conn.create_session()
            producer = await session.create_producer(q)
            for i in range(5):
                await producer.send(session.create_text_message(f"m{i}"))
            consumer = await session.create_consumer(q)
            assert await consumer.receive(100) is None  # not started yet
            await conn.start()
            got = []
            async for m in consumer:
                got.append(str(m.get_body(str)))
                if len(got) == 5:
                    await consumer.close()
            with pytest.raises(IllegalStateException):
                await consumer.receive(10)  # closed, as in the blocking API
            return got

    assert asyncio.run(main()) == [f"m{i}" for i in range(5)]


def test_receive_waits_for_a_message_without_blocking_the_loop(broker: Any) -> None:
    async def main() -> tuple[str, int]:
        q = Queue("aio-wait")
        f = AsyncConnectionFactory(broker.url)
        async with await f.create_connection() as conn:
            await conn.start()
            session = await conn.create_session()
            consumer = await session.create_consumer(q)
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            t = asyncio.create_task(ticker())
            receiving = asyncio.create_task(consumer.receive(5000))
            await asyncio.sleep(0.3)
            producer = await session.create_producer(q)
            await producer.send(session.create_text_message("late"))
            m = await receiving
            t.cancel()
            assert m is not None
            return str(m.get_body(str)), ticks

    body, ticks = asyncio.run(main())
    assert body == "late" and ticks >= 10  # the loop kept running while receive waited


def test_pull_consumer_and_timeout(broker: Any) -> None:
    async def main() -> list[Any]:
        q = Queue("aio-pull")
        f = AsyncConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0")
        async with await f.create_connection() as conn:
            await conn.start()
            s = await conn.create_session()
            c = await s.create_consumer(q)
            first = await c.receive(200)
            p = await s.create_producer(q)
            await p.send(s.create_text_message("pulled"))
            second = await c.receive(2000)
            return [first, None if second is None else second.get_body(str)]

    assert asyncio.run(main()) == [None, "pulled"]


def test_transactions_and_subscriptions(broker: Any) -> None:
    async def main() -> list[str | None]:
        f = AsyncConnectionFactory(broker.url + "?jms.clientID=aio-sub")
        async with await f.create_connection() as conn:
            await conn.start()
            s = await conn.create_session(Session.SESSION_TRANSACTED)
            sub = await s.create_durable_consumer(Topic("aio-t"), "aio-sub")
            p = await s.create_producer(Topic("aio-t"))
            await p.send(s.create_text_message("rolled back"))
            await s.rollback()
            await p.send(s.create_text_message("committed"))
            await s.commit()
            m = await sub.receive(2000)
            await s.commit()
            await sub.close()
            await s.unsubscribe("aio-sub")
            return [None if m is None else m.get_body(str)]

    assert asyncio.run(main()) == ["committed"]


def test_context_face(broker: Any) -> None:
    async def main() -> list[Any]:
        q = Queue("aio-ctx")
        async with await AsyncConnectionFactory(broker.url).create_context() as ctx:
            assert isinstance(ctx, AsyncJMSContext)
            await ctx.create_producer().set_property("k", "v").set_priority(6).send(q, "hello")
            await ctx.create_producer().send(q, {"a": 1})
            c = await ctx.create_consumer(q)
            m = await c.receive(2000)
            body = await c.receive_body(dict, 2000)
            with pytest.raises(InvalidSelectorRuntimeException):
                await ctx.create_consumer(q, "x = ")
            assert m is not None
            return [m.get_body(str), m.get_string_property("k"), m.get_jms_priority(), body]

    assert asyncio.run(main()) == ["hello", "v", 6, {"a": 1}]


def test_listener_consumer_refuses_receive(broker: Any) -> None:
    async def main() -> None:
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            s = await conn.create_session()
            c = await s.create_consumer(Queue("aio-l"))
            c.sync.set_message_listener(lambda m: None)
            with pytest.raises(IllegalStateException):
                await c.receive(10)

    asyncio.run(main())


def test_no_threads_leak(broker: Any) -> None:
    before = {t.ident for t in threading.enumerate()}

    async def main() -> None:
        async with await AsyncConnectionFactory(broker.url).create_context() as ctx:
            await ctx.create_producer().send(Queue("aio-leak"), "x")

    asyncio.run(main())
    leaked = [t for t in threading.enumerate() if t.ident not in before and t.name.startswith("amqp-jms")]
    for t in leaked:
        t.join(2)
    assert not [t for t in leaked if t.is_alive()]


def test_send_nowait_pipelines_in_order(broker: Any) -> None:
    async def main() -> list[str]:
        q = Queue("aio-pipe")
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            s = await conn.create_session()
            p = await s.create_producer(q)
            futs = [p.send_nowait(s.create_text_message(f"p{i}")) for i in range(50)]
            assert await asyncio.gather(*futs) == [None] * 50
            anon = await s.create_producer(None)
            await anon.send(q, s.create_text_message("anon"))
            with pytest.raises(TypeError):
                await anon.send(s.create_text_message("no destination"))
            await conn.start()
            c = await s.create_consumer(q)
            return [str((await c.receive(2000)).get_body(str)) for _ in range(51)]  # type: ignore[union-attr]

    assert asyncio.run(main()) == [f"p{i}" for i in range(50)] + ["anon"]


async def _parked(consumer: Any) -> None:
    """Wait until a receive of ``consumer`` waits for an arrival (an explicit wait, not a guess)."""
    deadline = time.monotonic() + 10
    while not consumer._parked:
        assert time.monotonic() < deadline, "the receive never parked"
        await asyncio.sleep(0.005)


def test_a_parked_receive_is_woken_by_the_arrival_not_by_its_poll(
    broker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import amqp_jms.aio._consumer as core

    monkeypatch.setattr(core, "_POLL", 60.0)  # a missed wake-up would now cost a minute

    async def main() -> str:
        q = Queue("aio-woken")
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            await conn.start()
            session = await conn.create_session()
            consumer = await session.create_consumer(q)
            receiving = asyncio.create_task(consumer.receive())
            await _parked(consumer)
            producer = await session.create_producer(q)
            for i in range(3):  # the second receive parks again after the first wake-up
                await producer.send(session.create_text_message(f"w{i}"))
                m = await asyncio.wait_for(receiving, 20)
                assert m is not None and m.get_body(str) == f"w{i}"
                receiving = asyncio.create_task(consumer.receive())
                await _parked(consumer)
            receiving.cancel()
            return "ok"

    assert asyncio.run(main()) == "ok"


def test_prefetched_arrivals_do_not_wake_the_loop_one_by_one(broker: Any) -> None:
    """The I/O thread wakes the event loop only for a parked receive, not per prefetched message."""
    from amqp_jms.client import ConnectionFactory

    async def main() -> tuple[int, int]:
        q = Queue("aio-prefetched")
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            await conn.start()
            session = await conn.create_session()
            consumer = await session.create_consumer(q)
            assert await consumer.receive(100) is None  # parked once, on an empty queue
            wakes = 0
            loop = asyncio.get_running_loop()
            real = loop.call_soon_threadsafe

            def counting(cb: Any, *args: Any, **kwargs: Any) -> Any:
                nonlocal wakes
                if getattr(cb, "__name__", "") == "set":
                    wakes += 1
                return real(cb, *args, **kwargs)

            loop.call_soon_threadsafe = counting  # type: ignore[method-assign, assignment]
            try:
                def send() -> None:  # another connection, from a thread: nothing parked meanwhile
                    with ConnectionFactory(broker.url).create_connection() as other:
                        producer = other.create_session().create_producer(q)
                        for i in range(300):
                            producer.send(TextMessage(f"p{i}"))

                await asyncio.to_thread(send)
                for _ in range(500):
                    if len(consumer.sync._queue) == 300:
                        break
                    await asyncio.sleep(0.02)
                assert len(consumer.sync._queue) == 300
                got = 0
                while got < 300:
                    assert await consumer.receive(5000) is not None
                    got += 1
            finally:
                del loop.call_soon_threadsafe
            return got, wakes

    got, wakes = asyncio.run(main())
    assert got == 300
    assert wakes == 0, f"{wakes} loop wake-ups for 300 prefetched messages"
