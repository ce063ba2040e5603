"""A send the peer never answers times out the same way on every face (issue 32).

``jms.sendTimeout`` bounds a send that waits for the peer's outcome. The blocking
``MessageProducer`` raises ``JMSException`` naming the send; ``AsyncProducer`` raised the builtin
``TimeoutError`` and ``AsyncJMSProducer`` never timed out. Now the asyncio face awaits the wait
the core describes (``ProviderWait``), so each face raises the blocking face's exception, the
simplified API its unchecked twin, with the same words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from amqp_jms import ConnectionFactory, JMSException, JMSRuntimeException, Queue, TextMessage
from amqp_jms.aio import AsyncConnectionFactory
from amqp_jms.testing.peer import TestPeer

TIMEOUT = "?jms.closeTimeout=1000&jms.requestTimeout=5000&jms.sendTimeout=400"
WORDS = "send timed out after 0.4 s"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open(offered_capabilities=["ANONYMOUS-RELAY"])
        p.expect_begin()
        p.expect_attach(lambda a: a.role == "sender", offer=10)
        p.expect_transfer(outcome=None)  # never answered
        yield p


def _is_timeout(e: BaseException, cls: type[BaseException]) -> None:
    assert type(e) is cls, repr(e)
    assert WORDS in str(e), str(e)


def test_the_blocking_producer_raises_jms_exception(peer: TestPeer) -> None:
    with ConnectionFactory(peer.url + TIMEOUT).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue("q"))
        with pytest.raises(JMSException) as e:
            producer.send(TextMessage("p"))
        peer.wait()
    _is_timeout(e.value, JMSException)


def test_the_async_producer_raises_the_same_jms_exception(peer: TestPeer) -> None:
    async def main() -> BaseException:
        async with await AsyncConnectionFactory(peer.url + TIMEOUT).create_connection() as conn:
            session = await conn.create_session()
            producer = await session.create_producer(Queue("q"))
            with pytest.raises(JMSException) as e:
                await producer.send(session.create_text_message("p"))
            return e.value

    _is_timeout(asyncio.run(main()), JMSException)
    peer.wait()


def test_the_blocking_jms_producer_raises_jms_runtime_exception(peer: TestPeer) -> None:
    with ConnectionFactory(peer.url + TIMEOUT).create_context() as ctx:
        with pytest.raises(JMSRuntimeException) as e:
            ctx.create_producer().send(Queue("q"), "p")
        peer.wait()
    _is_timeout(e.value, JMSRuntimeException)


def test_the_async_jms_producer_times_out_with_the_same_runtime_exception(peer: TestPeer) -> None:
    async def main() -> BaseException:
        async with await AsyncConnectionFactory(peer.url + TIMEOUT).create_context() as ctx:
            with pytest.raises(JMSRuntimeException) as e:
                await asyncio.wait_for(ctx.create_producer().send(Queue("q"), "p"), 10)
            return e.value

    _is_timeout(asyncio.run(main()), JMSRuntimeException)
    peer.wait()
