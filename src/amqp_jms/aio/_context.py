"""The asyncio face of the simplified API: ``AsyncJMSContext`` and its producer and consumer.

Wraps ``amqp_jms.client.context`` objects. A send is the shared ``ProducerSettings._send``
(the same values applied, the core's ``MessageProducer.send_resolved``) whose wait
(``ProviderWait``) is awaited; receiving is ``AsyncConsumer``. Errors, ``async for`` and a
send timeout included, are the runtime exceptions of the simplified API.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Self, TypeVar

from ..client._runtime import runtime as _runtime
from ..client.context import JMSContext
from ..client.jms_producer import ProducerSettings
from ..destination import Destination, Queue, Topic
from ..message import Message
from ._base import SessionLike, in_thread
from ._browser import AsyncQueueBrowser
from ._consumer import AsyncConsumer
from ._listeners import ListenerOnLoop
from ._wait import wait

if TYPE_CHECKING:
    from ..client.connection import ConnectionMetaData

__all__ = ["AsyncJMSConsumer", "AsyncJMSContext", "AsyncJMSProducer"]

T = TypeVar("T")


class AsyncJMSContext(SessionLike):
    """``async with await AsyncConnectionFactory(url).create_context() as ctx:``."""

    sync: JMSContext

    SESSION_TRANSACTED = JMSContext.SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = JMSContext.AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = JMSContext.CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = JMSContext.DUPS_OK_ACKNOWLEDGE

    def __init__(self, context: JMSContext) -> None:
        self.sync = context
        self._exception_listener: ListenerOnLoop | None = None

    # -- contexts, connection-level ------------------------------------------------------------
    async def create_context(self, session_mode: int) -> AsyncJMSContext:
        return AsyncJMSContext(await in_thread(self.sync.create_context, session_mode))

    def get_client_id(self) -> str | None:
        return self.sync.get_client_id()

    async def set_client_id(self, client_id: str) -> None:
        await in_thread(self.sync.set_client_id, client_id)

    def get_meta_data(self) -> ConnectionMetaData:
        return self.sync.get_meta_data()

    def get_exception_listener(self) -> Any:
        self.sync.get_exception_listener()  # refuses on a closed connection, as the blocking face
        adapter = self._exception_listener
        return None if adapter is None else adapter.listener

    def set_exception_listener(self, listener: Any) -> None:
        """``on_exception`` (or the callable, plain or ``async def``) runs on the running loop."""
        adapter = None if listener is None else ListenerOnLoop(listener, "on_exception",
                                                               asyncio.get_running_loop())
        self.sync.set_exception_listener(adapter)
        self._exception_listener = adapter

    def get_autostart(self) -> bool:
        return self.sync.get_autostart()

    def set_autostart(self, autostart: bool) -> None:
        self.sync.set_autostart(autostart)

    def get_session_mode(self) -> int:
        return self.sync.get_session_mode()

    def get_transacted(self) -> bool:
        return self.sync.get_transacted()

    async def start(self) -> None:
        await in_thread(self.sync.start)

    async def stop(self) -> None:
        await in_thread(self.sync.stop)

    # -- producers, consumers, browsers --------------------------------------------------------
    def create_producer(self) -> AsyncJMSProducer:
        self.sync.internal.check_open()
        return AsyncJMSProducer(self.sync)

    async def create_consumer(self, destination: Destination, message_selector: str | None = None,
                              no_local: bool = False) -> AsyncJMSConsumer:
        c = await in_thread(self.sync.create_consumer, destination, message_selector, no_local)
        return AsyncJMSConsumer(AsyncConsumer(c.consumer))

    async def create_durable_consumer(self, topic: Topic, name: str, message_selector: str | None = None,
                                      no_local: bool = False) -> AsyncJMSConsumer:
        c = await in_thread(self.sync.create_durable_consumer, topic, name, message_selector, no_local)
        return AsyncJMSConsumer(AsyncConsumer(c.consumer))

    async def create_shared_consumer(self, topic: Topic, shared_subscription_name: str,
                                     message_selector: str | None = None) -> AsyncJMSConsumer:
        c = await in_thread(self.sync.create_shared_consumer, topic, shared_subscription_name,
                            message_selector)
        return AsyncJMSConsumer(AsyncConsumer(c.consumer))

    async def create_shared_durable_consumer(self, topic: Topic, name: str,
                                             message_selector: str | None = None) -> AsyncJMSConsumer:
        c = await in_thread(self.sync.create_shared_durable_consumer, topic, name, message_selector)
        return AsyncJMSConsumer(AsyncConsumer(c.consumer))

    async def create_browser(self, queue: Queue, message_selector: str | None = None) -> AsyncQueueBrowser:
        return AsyncQueueBrowser(await in_thread(self.sync.create_browser, queue, message_selector))


class AsyncJMSProducer(ProducerSettings):
    """The fluent producer; ``await producer.send(destination, body)``. Its settings are the
    blocking ``JMSProducer``'s (``ProducerSettings``), plain calls returning the producer."""

    async def send(self, destination: Destination, body: Any) -> Self:
        """Send, and wait for the outcome when the send waits (up to ``jms.sendTimeout``, then
        ``JMSRuntimeException``, as the blocking ``JMSProducer.send``); with ``set_async``'s
        completion listener it returns at once and the listener hears the outcome."""
        w = self._send_unwaited(destination, body)
        with _runtime():
            await wait(w)
        return self


class AsyncJMSConsumer:
    """The simplified API's consumer: ``await consumer.receive_body(str, 1000)``, ``async for``."""

    def __init__(self, consumer: AsyncConsumer) -> None:
        self.consumer = consumer

    def get_message_selector(self) -> str | None:
        return self.consumer.get_message_selector()

    def get_message_listener(self) -> Any:
        return self.consumer.get_message_listener()

    def set_message_listener(self, listener: Any) -> None:
        with _runtime():
            self.consumer.set_message_listener(listener)

    async def receive(self, timeout_ms: int | None = None) -> Message | None:
        with _runtime():
            return await self.consumer.receive(timeout_ms)

    def receive_no_wait(self) -> Message | None:
        with _runtime():
            return self.consumer.receive_no_wait()

    async def receive_body(self, cls: type[T], timeout_ms: int | None = None) -> T | None:
        with _runtime():
            return await self.consumer.receive_body(cls, timeout_ms)

    def receive_body_no_wait(self, cls: type[T]) -> T | None:
        """A message already here, its body as ``cls``; None if none is here (never asks the
        peer, as ``receive_no_wait``)."""
        with _runtime():
            body: T | None = self.consumer.sync.internal.receive_body_local(cls)
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
        with _runtime():
            await self.consumer.close()

    async def __aenter__(self) -> AsyncJMSConsumer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
