"""What every object of the asyncio face shares: running the core's rare blocking operations
in a worker thread, ``close`` and ``async with``, and a session's and a context's transactions."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, Protocol, Self, TypeVar

__all__ = ["Closing", "Transacting", "in_thread"]

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
