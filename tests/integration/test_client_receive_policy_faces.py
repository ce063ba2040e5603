"""Both faces drive the one receive policy and the one send-argument parser: the same scenario,
run through the blocking API and through the asyncio API on the embedded broker, gives the same
answer (the policy's steps on their own: ``tests/unit/test_client_receive_policy.py``)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from amqp_jms import (
    ConnectionFactory,
    DeliveryMode,
    IllegalStateException,
    IllegalStateRuntimeException,
    MessageFormatException,
    Queue,
    TextMessage,
)
from amqp_jms.aio import AsyncConnectionFactory, AsyncConsumer, AsyncProducer
from amqp_jms.client.consumer import MessageConsumer
from amqp_jms.client.producer import MessageProducer

T = TypeVar("T")


class SyncFace:
    name = "blocking"

    def receive(self, consumer: MessageConsumer, timeout_ms: int | None) -> Any:
        return consumer.receive(timeout_ms)

    def receive_body(self, consumer: MessageConsumer, cls: type, timeout_ms: int) -> Any:
        return consumer._receive_body(cls, timeout_ms / 1000)

    def send(self, producer: MessageProducer, *args: Any, **kwargs: Any) -> None:
        producer.send(*args, **kwargs)


class AioFace:
    """The asyncio objects over the same blocking ones, run on an event loop of their own."""

    name = "asyncio"

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.consumers: dict[int, AsyncConsumer] = {}

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def _consumer(self, consumer: MessageConsumer) -> AsyncConsumer:
        if id(consumer) not in self.consumers:
            self.consumers[id(consumer)] = AsyncConsumer(consumer)
        return self.consumers[id(consumer)]

    def receive(self, consumer: MessageConsumer, timeout_ms: int | None) -> Any:
        return self.run(self._consumer(consumer).receive(timeout_ms))

    def receive_body(self, consumer: MessageConsumer, cls: type, timeout_ms: int) -> Any:
        return self.run(self._consumer(consumer).receive_body(cls, timeout_ms))

    def send(self, producer: MessageProducer, *args: Any, **kwargs: Any) -> None:
        self.run(AsyncProducer(producer).send(*args, **kwargs))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture(params=["blocking", "asyncio"])
def face(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "blocking":
        yield SyncFace()
        return
    f = AioFace()
    try:
        yield f
    finally:
        f.close()


def _fill(url: str, queue: str, *bodies: str) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        producer = conn.create_session().create_producer(Queue(queue))
        for b in bodies:
            producer.send(TextMessage(b))


def test_a_refused_body_goes_back_to_the_front_and_the_next_receive_takes_it(broker: Any, face: Any) -> None:
    """A DELIVER the vetting refuses (AUTO_ACKNOWLEDGE, a body of another type) leaves the message
    unacknowledged at the front of the queue, on either face."""
    _fill(broker.url, "faces-body", "one", "two")
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("faces-body"))
        with pytest.raises(MessageFormatException):
            face.receive_body(consumer, bytes, 5000)
        assert face.receive_body(consumer, str, 5000) == "one"
        assert face.receive(consumer, 5000).get_body(str) == "two"
        assert face.receive(consumer, 100) is None


def test_pull_consumer_times_out_and_leaves_no_credit_behind(broker: Any, face: Any) -> None:
    """Prefetch 0: a receive that times out drains its credit back, so a message sent later goes
    to a consumer that asks, not to the one that gave up."""
    with ConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0").create_connection() as conn:
        conn.start()
        session = conn.create_session()
        gave_up = session.create_consumer(Queue("faces-pull"))
        assert face.receive(gave_up, 100) is None
        other = session.create_consumer(Queue("faces-pull"))
        _fill(broker.url, "faces-pull", "late")
        got = face.receive(other, 5000)
        assert got is not None and got.get_body(str) == "late"


def test_pull_receive_waits_across_a_stop_and_pulls_again_on_start(broker: Any, face: Any) -> None:
    with ConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0").create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("faces-stop"))
        result: list[Any] = []
        t = threading.Thread(target=lambda: result.append(face.receive(consumer, 10_000)))
        t.start()
        time.sleep(0.3)  # the receive has pulled and waits
        session = conn.create_session()
        conn.stop()  # takes the credit back
        _fill(broker.url, "faces-stop", "after-stop")
        # a stopped connection delivers nothing: the message stays on the queue (a browser's
        # snapshot ends with the broker's answer to a drain: an explicit wait, no guessed sleep)
        assert [m.get_body(str) for m in session.create_browser(Queue("faces-stop"))] == ["after-stop"]
        assert not result
        conn.start()
        t.join(10)
        assert len(result) == 1 and result[0] is not None and result[0].get_body(str) == "after-stop"


def test_prefetching_receive_asks_the_peer_before_answering_none(broker: Any, face: Any) -> None:
    _fill(broker.url, "faces-fresh", "m0")
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(Queue("faces-fresh"))
        got = face.receive(consumer, 1)  # 1 ms: the transfer may still be on its way; the drain waits
        assert got is not None and got.get_body(str) == "m0"


def test_both_faces_parse_send_arguments_alike(broker: Any, face: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        producer = session.create_producer(Queue("faces-send"))
        face.send(producer, TextMessage("positional"), DeliveryMode.NON_PERSISTENT, 7, 0)
        face.send(producer, TextMessage("keywords"), priority=2)
        with pytest.raises(TypeError, match="created for"):
            face.send(producer, Queue("elsewhere"), TextMessage("x"))
        with pytest.raises(TypeError, match="unexpected keyword"):
            face.send(producer, TextMessage("x"), colour="red")
        consumer = session.create_consumer(Queue("faces-send"))
        first, second = face.receive(consumer, 5000), face.receive(consumer, 5000)
        assert (first.get_body(str), first.get_jms_priority(), first.get_jms_delivery_mode()) == (
            "positional", 7, DeliveryMode.NON_PERSISTENT)
        assert (second.get_body(str), second.get_jms_priority()) == ("keywords", 2)


def test_async_context_iteration_raises_runtime_exceptions(broker: Any) -> None:
    """``async for`` over an ``AsyncJMSConsumer`` raises the unchecked twins, as ``for`` over a
    ``JMSConsumer`` does."""
    with ConnectionFactory(broker.url).create_context() as ctx:
        consumer = ctx.create_consumer(Queue("faces-iter"))
        consumer.set_message_listener(lambda m: None)
        with pytest.raises(IllegalStateRuntimeException):
            for _ in consumer:
                pass

    async def main() -> None:
        async with await AsyncConnectionFactory(broker.url).create_context() as actx:
            aconsumer = await actx.create_consumer(Queue("faces-iter"))
            aconsumer.consumer.sync.set_message_listener(lambda m: None)
            with pytest.raises(IllegalStateRuntimeException) as info:
                async for _ in aconsumer:
                    pass
            assert isinstance(info.value.__cause__, IllegalStateException)

    asyncio.run(main())
