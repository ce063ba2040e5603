"""``AsyncServerSessionPool``: the ready ``ServerSessionPool`` of the asyncio face (JMS 2.0 8.2),
whose server sessions run as tasks on the event loop, with ``async def`` listeners.

The connection consumer (``client/connection_consumer.py``) is the same for both faces: its
thread calls ``get_server_session()`` (which blocks while every session is busy) and
``start()``, which schedules the session's run on the loop. The run hands each loaded message to
the listener (awaited when it is a coroutine function) and settles it by the session's mode
with ``session.internal.server.finish_loaded``, the rule ``Session.run()`` follows; nothing of
it is written here.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..client.acknowledgement import AUTO_ACKNOWLEDGE
from ..exceptions import IllegalStateException

if TYPE_CHECKING:
    from ..client.session import Session
    from ._core import AsyncConnection

__all__ = ["AsyncServerSessionPool"]


class _TaskServerSession:
    def __init__(self, pool: AsyncServerSessionPool, session: Session, listener: Any) -> None:
        self._pool = pool
        self._session = session
        self.listener = listener

    def get_session(self) -> Session:
        return self._session

    def start(self) -> None:
        asyncio.run_coroutine_threadsafe(self._pool.run(self), self._pool.loop)


class AsyncServerSessionPool:
    """``await AsyncServerSessionPool.create(connection, listener_factory, size)``: ``size``
    sessions, each with the listener ``listener_factory(session)`` makes (a function or an
    ``async def``), run as tasks on the running loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sessions: list[tuple[Session, Any]]) -> None:
        """Use ``create``; ``sessions`` are (session, listener) pairs."""
        self.loop = loop
        self._free: queue.SimpleQueue[_TaskServerSession] = queue.SimpleQueue()
        self._sessions = [s for s, _ in sessions]
        for s, listener in sessions:
            self._free.put(_TaskServerSession(self, s, listener))
        self._running: set[asyncio.Task[Any]] = set()
        self._closed = False

    @classmethod
    async def create(cls, connection: AsyncConnection, listener_factory: Callable[[Session], Any],
                     size: int = 4, session_mode: int = AUTO_ACKNOWLEDGE) -> AsyncServerSessionPool:
        if size < 1:
            raise ValueError(f"a server session pool needs at least one session, got {size}")
        sessions = []
        for _ in range(size):
            s = (await connection.create_session(session_mode)).sync
            sessions.append((s, listener_factory(s)))
        return cls(asyncio.get_running_loop(), sessions)

    def get_server_session(self) -> _TaskServerSession:
        """Called on the connection consumer's thread (never on the loop: it may block)."""
        if self._closed:
            raise IllegalStateException("the server session pool is closed")
        return self._free.get()

    async def run(self, ss: _TaskServerSession) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        session = ss.get_session()
        on_message = getattr(ss.listener, "on_message", ss.listener)
        try:
            for msg in session.internal.server.take_loaded():
                try:
                    result = on_message(msg)
                    if inspect.isawaitable(result):
                        await result
                except Exception as e:
                    session.internal.server.finish_loaded(msg, e)
                else:
                    session.internal.server.finish_loaded(msg, None)
        finally:
            if task is not None:
                self._running.discard(task)
            self._free.put(ss)

    async def close(self) -> None:
        """Wait for running sessions, then close them."""
        self._closed = True
        if self._running:
            await asyncio.wait(list(self._running))
        for s in self._sessions:
            await asyncio.to_thread(s.close)
