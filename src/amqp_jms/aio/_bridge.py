"""Provider futures to asyncio futures, with one event-loop wake-up per batch.

``asyncio.wrap_future`` costs one ``call_soon_threadsafe`` (a self-pipe write) per future; a
burst of sends whose outcomes arrive together on the I/O thread would wake the loop once per
message. ``FutureBridge.wrap`` does the same job (the provider future's result or exception
lands in an asyncio future) but queues completions and wakes the loop once for all that are
ready, the same batching the provider's ``LoopThread.post`` uses in the other direction.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from collections import deque
from typing import Any

__all__ = ["FutureBridge", "bridge_for"]


class FutureBridge:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._ready: deque[tuple[asyncio.Future[Any], concurrent.futures.Future[Any]]] = deque()
        self._lock = threading.Lock()
        self._wake_pending = False

    def wrap(self, cf: concurrent.futures.Future[Any]) -> asyncio.Future[Any]:
        af: asyncio.Future[Any] = self.loop.create_future()
        cf.add_done_callback(lambda f: self._done(af, f))
        return af

    def _done(self, af: asyncio.Future[Any], cf: concurrent.futures.Future[Any]) -> None:
        self._ready.append((af, cf))
        with self._lock:
            if self._wake_pending:
                return
            self._wake_pending = True
        try:
            if _running_loop() is self.loop:
                # completed on the loop's own thread (which read the answer itself,
                # ``Provider.answer_on_loop``): no self-pipe write to wake a loop that is awake
                self.loop.call_soon(self._drain)
            else:
                self.loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop is closed: nobody awaits any more
            pass

    def _drain(self) -> None:
        with self._lock:
            self._wake_pending = False
        ready = self._ready
        while ready:
            af, cf = ready.popleft()
            if af.done():
                continue
            if cf.cancelled():
                af.cancel()
                continue
            exc = cf.exception()
            if exc is not None:
                af.set_exception(exc)
            else:
                af.set_result(cf.result())


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The calling thread's running event loop, or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_bridges: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, FutureBridge] = weakref.WeakKeyDictionary()


def bridge_for(loop: asyncio.AbstractEventLoop) -> FutureBridge:
    b = _bridges.get(loop)
    if b is None:
        b = _bridges[loop] = FutureBridge(loop)
    return b
