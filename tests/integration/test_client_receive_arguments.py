"""A receive's timeout of the wrong type or sign is refused naming the argument, on every face
(blocking consumer, JMSContext, asyncio), and nothing is consumed by the refused call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.aio import AsyncConnectionFactory

BAD_TYPES: list[Any] = ["5", b"5", True, [5]]


@pytest.mark.parametrize("timeout", BAD_TYPES)
def test_blocking_receive_refuses_a_timeout_that_is_not_a_number(broker: Any, timeout: Any) -> None:
    q = Queue("receive-args")
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        session.create_producer(q).send(session.create_text_message("kept"))
        consumer = session.create_consumer(q)
        refused = r"timeout_ms must be a number of milliseconds \(an int\) or None, not"
        with pytest.raises(TypeError, match=refused):
            consumer.receive(timeout)
        with pytest.raises(TypeError, match="timeout_ms"):
            consumer.receive_encoded(timeout)
        with pytest.raises(ValueError, match="timeout_ms must not be negative, got -1"):
            consumer.receive(-1)
        got = consumer.receive(5000)  # the refused calls took nothing
        assert got is not None and got.get_body(str) == "kept"


def test_context_receive_body_refuses_a_string_timeout(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_context() as ctx:
        consumer = ctx.create_consumer(Queue("receive-args-ctx"))
        with pytest.raises(TypeError, match="timeout_ms must be a number of milliseconds"):
            consumer.receive_body(str, "5")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="timeout_ms must be a number of milliseconds"):
            consumer.receive("5")  # type: ignore[arg-type]


def test_asyncio_receive_refuses_a_string_timeout(broker: Any) -> None:
    async def main() -> None:
        async with await AsyncConnectionFactory(broker.url).create_connection() as conn:
            session = await conn.create_session()
            consumer = await session.create_consumer(Queue("receive-args-aio"))
            with pytest.raises(TypeError, match="timeout_ms must be a number of milliseconds"):
                await consumer.receive("5")  # type: ignore[arg-type]
            assert await consumer.receive(1) is None  # still usable

    asyncio.run(main())
