"""The asyncio face of ``QueueBrowser``: ``async for message in browser``.

Browsing is rare and each step may wait for the peer (a drain that tells the snapshot is
exhausted), so each step of the core's enumeration runs in a worker thread: the browsing rules
(distribution-mode copy, the drain at the end, settling the copies) stay the core's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from ._base import Closing, in_thread

if TYPE_CHECKING:
    from ..client.browser import QueueBrowser
    from ..destination import Queue
    from ..message import Message

__all__ = ["AsyncQueueBrowser"]

_END = object()


class AsyncQueueBrowser(Closing):
    """``async for message in await session.create_browser(queue): ...``."""

    sync: QueueBrowser

    def __init__(self, browser: QueueBrowser) -> None:
        self.sync = browser

    def get_queue(self) -> Queue:
        return self.sync.get_queue()

    @property
    def queue(self) -> Queue:
        return self.sync.queue

    def get_message_selector(self) -> str | None:
        return self.sync.get_message_selector()

    async def get_enumeration(self) -> AsyncIterator[Message]:
        """A fresh snapshot of the queue, as an async iterator that ends when it is exhausted."""
        return self._enumerate(await in_thread(self.sync.get_enumeration))

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._browse()

    async def _browse(self) -> AsyncIterator[Message]:
        async for m in await self.get_enumeration():
            yield m

    @staticmethod
    async def _enumerate(it: Iterator[Message]) -> AsyncIterator[Message]:
        try:
            while True:
                m = await in_thread(next, it, _END)
                if m is _END:
                    return
                yield m
        finally:
            close = getattr(it, "close", None)  # a snapshot left early closes its link now
            if close is not None:
                await in_thread(close)
