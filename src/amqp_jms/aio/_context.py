"""The asyncio face of the simplified API: ``AsyncJMSContext`` and its producer and consumer.

Wraps ``amqp_jms.client.context`` objects: a send is ``JMSProducer.send_future`` (the same
values applied, the core's ``MessageProducer.send_resolved``) with its future awaited, receiving
is ``AsyncConsumer``. Errors, ``async for`` included, are the runtime exceptions of the
simplified API.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from ..client.context import JMSContext, JMSProducer, _runtime
from ..destination import Destination
from ..message import Message
from ._bridge import bridge_for
from ._core import AsyncConsumer, Transacting, _thread

__all__ = ["AsyncJMSConsumer", "AsyncJMSContext", "AsyncJMSProducer"]

T = TypeVar("T")

_PASSTHROUGH = frozenset({
    "create_message", "create_text_message", "create_bytes_message", "create_map_message",
    "create_stream_message", "create_object_message", "create_queue", "create_topic",
    "get_session_mode", "get_transacted", "get_autostart", "set_autostart", "get_client_id",
    "acknowledge", "recover",
})


class AsyncJMSContext(Transacting):
    """``async with await AsyncConnectionFactory(url).create_context() as ctx:``."""

    SESSION_TRANSACTED = JMSContext.SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = JMSContext.AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = JMSContext.CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = JMSContext.DUPS_OK_ACKNOWLEDGE

    def __init__(self, context: JMSContext) -> None:
        self.sync = context

    def __getattr__(self, name: str) -> Any:
        if name in _PASSTHROUGH:
            return getattr(self.sync, name)
        raise AttributeError(name)

    async def create_context(self, session_mode: int) -> AsyncJMSContext:
        return AsyncJMSContext(await _thread(self.sync.create_context, session_mode))

    def create_producer(self) -> AsyncJMSProducer:
        return AsyncJMSProducer(self.sync.create_producer())

    async def create_consumer(self, destination: Destination, message_selector: str | None = None,
                              no_local: bool = False) -> AsyncJMSConsumer:
        c = await _thread(self.sync.create_consumer, destination, message_selector, no_local)
        return AsyncJMSConsumer(AsyncConsumer(c.consumer))

    async def create_durable_consumer(self, topic: Any, name: str, message_selector: str | None = None,
                                      no_local: bool = False) -> AsyncJMSConsumer:
        c = await _thread(self.sync.create_durable_consumer, topic, name, message_selector, no_local)
        return AsyncJMSConsumer(AsyncConsumer(c.consumer))

    async def create_shared_consumer(self, topic: Any, name: str, message_selector: str | None = None
                                     ) -> AsyncJMSConsumer:
        c = await _thread(self.sync.create_shared_consumer, topic, name, message_selector)
        return AsyncJMSConsumer(AsyncConsumer(c.consumer))

    async def create_temporary_queue(self) -> Any:
        return await _thread(self.sync.create_temporary_queue)

    async def start(self) -> None:
        await _thread(self.sync.start)



class AsyncJMSProducer:
    """The fluent producer; ``await producer.send(destination, body)``."""

    def __init__(self, producer: JMSProducer) -> None:
        self.sync = producer

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.sync, name)
        if name.startswith(("set_", "clear_")):
            def fluent(*args: Any) -> AsyncJMSProducer:
                attr(*args)
                return self

            return fluent
        return attr

    async def send(self, destination: Destination, body: Any) -> AsyncJMSProducer:
        fut = self.sync.send_future(destination, body)  # a completion listener: it hears instead
        if fut is not None:
            with _runtime():
                await bridge_for(asyncio.get_running_loop()).wrap(fut)
        return self


class AsyncJMSConsumer:
    def __init__(self, consumer: AsyncConsumer) -> None:
        self.consumer = consumer

    async def receive(self, timeout_ms: int | None = None) -> Message | None:
        with _runtime():
            return await self.consumer.receive(timeout_ms)

    async def receive_body(self, cls: type[T], timeout_ms: int | None = None) -> T | None:
        with _runtime():
            body: T | None = await self.consumer.receive_body(cls, timeout_ms)
            return body

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Message]:
        """``async for``: receives until the consumer closes, each failure raised as its runtime
        twin, as ``JMSConsumer.__iter__`` does."""
        it = self.consumer.__aiter__()
        while True:
            with _runtime():
                try:
                    m = await it.__anext__()
                except StopAsyncIteration:
                    return
            yield m

    async def close(self) -> None:
        await self.consumer.close()

    async def __aenter__(self) -> AsyncJMSConsumer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
