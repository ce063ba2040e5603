"""What every object of the asyncio face shares: running the core's rare blocking operations
in a worker thread, ``close`` and ``async with``, and what a session and a context share
(transactions, message and destination factories)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

if TYPE_CHECKING:
    from ..destination import Queue, TemporaryQueue, TemporaryTopic, Topic
    from ..message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage

__all__ = ["Closing", "SessionLike", "Transacting", "in_thread"]

T = TypeVar("T")


async def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a core operation that blocks (opening, creating a link, commit, close) in a worker
    thread, so the event loop never blocks."""
    return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))


class _Closable(Protocol):
    def close(self) -> None: ...


class Closing:
    """``close`` (in a worker thread: closing waits for the peer) and ``async with``."""

    sync: _Closable

    async def close(self) -> None:
        await in_thread(self.sync.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class _Transactional(Protocol):
    def close(self) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def recover(self) -> None: ...

    def acknowledge(self) -> None: ...

    def unsubscribe(self, name: str) -> None: ...


class Transacting(Closing):
    """What a session and a context share: transactions, acknowledgement, recovery and
    unsubscribing, each of which may wait for the peer."""

    sync: _Transactional

    async def commit(self) -> None:
        await in_thread(self.sync.commit)

    async def rollback(self) -> None:
        await in_thread(self.sync.rollback)

    async def recover(self) -> None:
        await in_thread(self.sync.recover)

    async def acknowledge(self) -> None:
        await in_thread(self.sync.acknowledge)

    async def unsubscribe(self, name: str) -> None:
        await in_thread(self.sync.unsubscribe, name)


class _SessionLike(_Transactional, Protocol):
    def create_message(self) -> Message: ...

    def create_text_message(self, text: str | None = None) -> TextMessage: ...

    def create_bytes_message(self) -> BytesMessage: ...

    def create_map_message(self) -> MapMessage: ...

    def create_stream_message(self) -> StreamMessage: ...

    def create_object_message(self, obj: Any = None) -> ObjectMessage: ...

    def create_queue(self, name: str) -> Queue: ...

    def create_topic(self, name: str) -> Topic: ...

    def create_temporary_queue(self) -> TemporaryQueue: ...

    def create_temporary_topic(self) -> TemporaryTopic: ...


class SessionLike(Transacting):
    """What a session and a context share beyond transactions: the message and destination
    factories (plain calls: no I/O) and temporary destinations (awaited: the peer makes them)."""

    sync: _SessionLike

    def create_message(self) -> Message:
        return self.sync.create_message()

    def create_text_message(self, text: str | None = None) -> TextMessage:
        return self.sync.create_text_message(text)

    def create_bytes_message(self) -> BytesMessage:
        return self.sync.create_bytes_message()

    def create_map_message(self) -> MapMessage:
        return self.sync.create_map_message()

    def create_stream_message(self) -> StreamMessage:
        return self.sync.create_stream_message()

    def create_object_message(self, obj: Any = None) -> ObjectMessage:
        return self.sync.create_object_message(obj)

    def create_queue(self, name: str) -> Queue:
        return self.sync.create_queue(name)

    def create_topic(self, name: str) -> Topic:
        return self.sync.create_topic(name)

    async def create_temporary_queue(self) -> TemporaryQueue:
        return await in_thread(self.sync.create_temporary_queue)

    async def create_temporary_topic(self) -> TemporaryTopic:
        return await in_thread(self.sync.create_temporary_topic)
