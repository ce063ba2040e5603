"""Qpid JMS's receive semantics for prefetching consumers: an empty local buffer is checked with
the peer (a drain) before ``receive_no_wait``/``receive(t)`` answer None, unless
``jms.receiveNoWaitLocalOnly``/``jms.receiveLocalOnly`` say to look locally only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, MessageConsumer, Queue, TextMessage
from amqp_jms.aio import AsyncConnectionFactory


def _counting_drains(consumer: MessageConsumer) -> list[int]:
    calls: list[int] = []
    real = consumer._provider_consumer.drain

    def drain() -> Any:
        calls.append(1)
        return real()

    consumer._provider_consumer.drain = drain  # type: ignore[method-assign]
    return calls


def _fill(url: str, queue: str, n: int) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue(queue))
        for i in range(n):
            producer.send(TextMessage(f"m{i}"))


def test_receive_no_wait_finds_a_message_the_peer_has_not_sent_yet(broker: Any) -> None:
    """A fresh consumer's first transfer may still be on its way: Qpid JMS's default asks."""
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        for round_ in range(20):  # a new consumer each time: no time for the prefetch to land
            queue = f"now-{round_}"
            _fill(broker.url, queue, 1)
            consumer = session.create_consumer(Queue(queue))
            msg = consumer.receive_no_wait()
            assert msg is not None and msg.get_body(str) == "m0"
            assert consumer.receive_no_wait() is None  # and an empty queue answers None
            consumer.close()


@pytest.mark.parametrize(
    ("options", "no_wait_drains", "timed_drains"),
    [
        ("", True, True),
        ("?jms.receiveNoWaitLocalOnly=true", False, True),
        ("?jms.receiveLocalOnly=true", True, False),
        ("?jms.receiveLocalOnly=true&jms.receiveNoWaitLocalOnly=true", False, False),
    ],
)
def test_the_local_only_options_decide_whether_the_peer_is_asked(
    broker: Any, options: str, no_wait_drains: bool, timed_drains: bool
) -> None:
    with ConnectionFactory(broker.url + options).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("empty-q"))
        drains = _counting_drains(consumer)
        assert consumer.receive_no_wait() is None
        assert len(drains) == int(no_wait_drains)
        drains.clear()
        assert consumer.receive(50) is None
        assert len(drains) == int(timed_drains)


def test_credit_is_restored_after_a_drain(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("refill-q"))
        assert consumer.receive_no_wait() is None  # drained: the credit went to zero
        _fill(broker.url, "refill-q", 30)
        got = [consumer.receive(5000) for _ in range(30)]
        assert [m.get_body(str) for m in got if m is not None] == [f"m{i}" for i in range(30)]


def test_a_stopped_connection_never_drains(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        consumer = conn.create_session().create_consumer(Queue("stopped-q"))
        drains = _counting_drains(consumer)
        assert consumer.receive_no_wait() is None
        assert consumer.receive(20) is None
        assert drains == []


def test_asyncio_receive_asks_the_peer_when_its_time_runs_out(broker: Any) -> None:
    async def main() -> tuple[list[str | None], int, int]:
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            await conn.start()
            session = await conn.create_session()
            got: list[str | None] = []
            timed = no_wait = 0
            for round_ in range(10):
                queue = f"aio-now-{round_}"
                _fill(broker.url, queue, 1)
                consumer = await session.create_consumer(Queue(queue))
                drains = _counting_drains(consumer.sync)
                msg = await consumer.receive(1)  # 1 ms: the drain, not the wait, finds it
                got.append(None if msg is None else msg.get_body(str))
                timed += len(drains)
                drains.clear()
                assert consumer.receive_no_wait() is None  # never blocks the loop: local only
                no_wait += len(drains)
                await consumer.close()
            return got, timed, no_wait

    got, timed, no_wait = asyncio.run(main())
    assert got == ["m0"] * 10
    assert no_wait == 0 and timed <= 10
