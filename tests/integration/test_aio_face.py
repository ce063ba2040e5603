"""What the asyncio face gained in issue 32, end to end on the embedded broker: a browser, the
context's shared durable consumers, temporary topics and ``stop``, listeners run on the event
loop, and ``receive_encoded``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from amqp_jms import Message, Queue, Session, Topic
from amqp_jms.aio import AsyncConnectionFactory, AsyncJMSContext


def test_a_browser_sees_the_queue_without_consuming_it(broker: Any) -> None:
    async def main() -> tuple[list[str], list[str], str | None]:
        q = Queue("aio-browse")
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            session = await conn.create_session()
            producer = await session.create_producer(q)
            for body in ("a", "b", "c"):
                await producer.send(session.create_text_message(body))
            async with await session.create_browser(q) as browser:
                assert browser.get_queue() == q and browser.get_message_selector() is None
                seen = [str(m.get_body(str)) async for m in browser]
                again = [str(m.get_body(str)) async for m in await browser.get_enumeration()]
            consumer = await session.create_consumer(q)
            await conn.start()
            first = await consumer.receive(2000)
            return seen, again, None if first is None else first.get_body(str)

    seen, again, first = asyncio.run(main())
    assert seen == again == ["a", "b", "c"]
    assert first == "a"  # browsing took nothing


def test_a_browser_left_early_closes_its_snapshot(broker: Any) -> None:
    async def main() -> list[str]:
        q = Queue("aio-browse-early")
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            session = await conn.create_session()
            producer = await session.create_producer(q)
            for body in ("x", "y"):
                await producer.send(session.create_text_message(body))
            browser = await session.create_browser(q, "1 = 1")
            async for m in browser:
                assert m.get_body(str) == "x"
                break
            await browser.close()
            consumer = await session.create_consumer(q)
            await conn.start()
            return [str((await consumer.receive(2000)).get_body(str)) for _ in range(2)]  # type: ignore[union-attr]

    assert asyncio.run(main()) == ["x", "y"]


def test_the_context_has_shared_durable_consumers_temporary_topics_and_stop(broker: Any) -> None:
    async def main() -> tuple[str | None, str | None, str | None]:
        # prefetch 0: a stopped consumer holds no credit, so what is sent meanwhile stays queued
        factory = AsyncConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0")
        async with await factory.create_context() as ctx:
            topic = Topic("aio-ctx-shared-durable")
            consumer = await ctx.create_shared_durable_consumer(topic, "aio-sub")
            await ctx.create_producer().send(topic, "to-subscription")
            durable = await consumer.receive_body(str, 2000)
            tmp = await ctx.create_temporary_topic()
            tmp_consumer = await ctx.create_consumer(tmp)
            await ctx.create_producer().send(tmp, "to-temporary")
            temporary = await tmp_consumer.receive_body(str, 2000)
            q = Queue("aio-ctx-stop")
            stopped_consumer = await ctx.create_consumer(q)
            await ctx.stop()
            await ctx.create_producer().send(q, "while-stopped")
            assert stopped_consumer.receive_no_wait() is None
            # stopped: nothing was delivered, the message waits on the queue (a browser's snapshot
            # ends with the broker's answer to a drain: an explicit wait)
            assert [m.get_body(str) async for m in await ctx.create_browser(q)] == ["while-stopped"]
            await ctx.start()
            after = await stopped_consumer.receive_body(str, 2000)
            await consumer.close()
            await ctx.unsubscribe("aio-sub")
            return durable, temporary, after

    assert asyncio.run(main()) == ("to-subscription", "to-temporary", "while-stopped")


def test_a_message_listener_runs_on_the_event_loop_and_is_acknowledged_after_it(broker: Any) -> None:
    async def main() -> tuple[list[str], bool, list[Message]]:
        q = Queue("aio-listener")
        heard: list[str] = []
        on_loop: list[bool] = []
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        async def listener(m: Message) -> None:
            on_loop.append(asyncio.get_running_loop() is loop)
            heard.append(str(m.get_body(str)))
            if len(heard) == 2:
                done.set()

        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            session = await conn.create_session(False, Session.AUTO_ACKNOWLEDGE)
            consumer = await session.create_consumer(q)
            consumer.set_message_listener(listener)
            assert consumer.get_message_listener() is listener
            producer = await session.create_producer(q)
            await conn.start()
            for body in ("one", "two"):
                await producer.send(session.create_text_message(body))
            await asyncio.wait_for(done.wait(), 10)
            consumer.set_message_listener(None)
            await consumer.close()
            # both were acknowledged once the listener returned: the queue is empty (a browser's
            # snapshot ends with the peer's answer to a drain, no guessed wait)
            left = [m async for m in await session.create_browser(q)]
        return heard, all(on_loop), left

    heard, on_loop, left = asyncio.run(main())
    assert heard == ["one", "two"] and on_loop and left == []


def test_receive_encoded_hands_back_the_bytes(broker: Any) -> None:
    async def main() -> tuple[str | None, bytes]:
        q = Queue("aio-encoded")
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            session = await conn.create_session()
            await (await session.create_producer(q)).send(session.create_text_message("raw"))
            consumer = await session.create_consumer(q)
            await conn.start()
            got = await consumer.receive_encoded(2000)
            assert got is not None
            return got.message.get_body(str), got.data

    body, data = asyncio.run(main())
    assert body == "raw" and b"raw" in data


def test_the_context_twin_answers_as_the_blocking_one(broker: Any) -> None:
    async def main() -> None:
        async with await AsyncConnectionFactory(broker.url).create_context(AsyncJMSContext.CLIENT_ACKNOWLEDGE
                                                                           ) as ctx:
            assert ctx.get_session_mode() == AsyncJMSContext.CLIENT_ACKNOWLEDGE
            assert not ctx.get_transacted() and ctx.get_autostart()
            q = ctx.create_queue("aio-ctx-twin")
            producer = ctx.create_producer().set_priority(7).set_property("k", 1)
            assert producer.get_priority() == 7 and producer.get_long_property("k") == 1
            await producer.send(q, "m")
            consumer = await ctx.create_consumer(q)
            m = await consumer.receive(2000)
            assert m is not None and m.get_jms_priority() == 7 and m.get_long_property("k") == 1
            await ctx.acknowledge()
            assert consumer.receive_no_wait() is None

    asyncio.run(main())


def test_a_listener_whose_event_loop_ended_does_not_hang_the_connection(broker: Any) -> None:
    """The loop a listener was set from is gone (``asyncio.run`` returned without closing): the
    session's thread is told instead of waiting for ever, and the connection still closes."""
    from amqp_jms import ConnectionFactory

    kept: dict[str, Any] = {}
    q = Queue("aio-listener-loop-gone")

    async def main() -> None:
        conn = await AsyncConnectionFactory(broker.url).create_connection()
        session = await conn.create_session()
        consumer = await session.create_consumer(q)
        consumer.set_message_listener(lambda m: None)
        kept["conn"] = conn.sync

    asyncio.run(main())
    conn = kept["conn"]
    conn.start()
    with ConnectionFactory(broker.url).create_connection() as other:
        s = other.create_session()
        s.create_producer(q).send(s.create_text_message("for a listener nobody runs"))
    done = threading.Event()
    closer = threading.Thread(target=lambda: (conn.close(), done.set()), daemon=True)
    closer.start()
    assert done.wait(15), "closing hung on a listener whose event loop had ended"
    with ConnectionFactory(broker.url).create_connection() as again:  # and the message is not lost
        again.start()
        m = again.create_session().create_consumer(q).receive(5000)
        assert m is not None and m.get_body(str) == "for a listener nobody runs"
