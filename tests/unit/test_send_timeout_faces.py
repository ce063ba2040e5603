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


def test_an_async_send_whose_task_is_cancelled_raises_cancelled_error(peer: TestPeer) -> None:
    """Cancelling the task that awaits a send cancels the task, as asyncio code expects; the
    connection stays usable (the send itself is the provider's, and times out there)."""
    async def main() -> bool:
        url = peer.url + TIMEOUT.replace("sendTimeout=400", "sendTimeout=-1")
        async with await AsyncConnectionFactory(url).create_connection() as conn:
            session = await conn.create_session()
            producer = await session.create_producer(Queue("q"))
            sending = asyncio.create_task(producer.send(session.create_text_message("p")))
            await asyncio.sleep(0.2)
            sending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await sending
            return sending.cancelled()

    assert asyncio.run(main())
    peer.wait()


def test_an_async_send_awaited_while_its_connection_closes_raises_jms_exception(peer: TestPeer) -> None:
    """The provider gives the operation up when the application closes the connection under
    it: the awaiting task gets the blocking face's ``JMSException``, not a ``CancelledError``
    it never asked for."""
    async def main() -> BaseException:
        url = peer.url + TIMEOUT.replace("sendTimeout=400", "sendTimeout=-1")
        conn = await AsyncConnectionFactory(url).create_connection()
        session = await conn.create_session()
        producer = await session.create_producer(Queue("q"))
        sending = asyncio.create_task(producer.send(session.create_text_message("p")))
        await asyncio.sleep(0.2)
        await conn.close()
        try:
            await asyncio.wait_for(sending, 5)
        except BaseException as e:  # (what it raised is the assertion)
            return e
        raise AssertionError("the send returned although nobody answered it")

    e = asyncio.run(main())
    assert isinstance(e, JMSException), repr(e)
