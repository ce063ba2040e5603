"""Connection listeners on the asyncio face: each event runs on the application's event loop.

The core (``amqp_jms.client.connection_events``) reports events in order on a thread of the
connection's; ``OnLoop`` moves each call onto the loop the listener was added from, so an async
application's listener runs where its other code does. A listener method may be a plain function
or a coroutine function (its coroutine is run as a task).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
from collections.abc import Callable
from typing import Any

from ..client.connection_events import check_listener
from ..exceptions import IllegalStateException

__all__ = ["ListenerOnLoop", "OnLoop"]

_log = logging.getLogger(__name__)
_LOOP_CHECK = 0.5  # seconds: how often a waiting listener call checks that its loop still runs


class OnLoop:
    """The core-side listener that forwards to ``listener`` on ``loop``."""

    def __init__(self, listener: Any, loop: asyncio.AbstractEventLoop) -> None:
        check_listener(listener)
        self.listener = listener
        self.loop = loop
        self._tasks: set[asyncio.Future[Any]] = set()

    def _forward(self, event: str, arg: Any) -> None:
        call = getattr(self.listener, event, None)
        if call is None:
            return

        def run() -> None:
            try:
                result = call(arg)
            except Exception:
                _log.exception("connection listener %r failed in %s", self.listener, event)
                return
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)  # held until done: the loop keeps only weak references
                task.add_done_callback(self._finished)

        try:
            self.loop.call_soon_threadsafe(run)
        except RuntimeError:  # the application's loop is closed: nobody is listening
            pass

    def _finished(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("connection listener %r failed", self.listener, exc_info=task.exception())

    def on_connection_established(self, uri: str) -> None:
        self._forward("on_connection_established", uri)

    def on_connection_interrupted(self, uri: str) -> None:
        self._forward("on_connection_interrupted", uri)

    def on_connection_restored(self, uri: str) -> None:
        self._forward("on_connection_restored", uri)

    def on_connection_failure(self, exc: Exception) -> None:
        self._forward("on_connection_failure", exc)


class ListenerOnLoop:
    """A message or exception listener of the asyncio face, called from the core's thread (a
    session's dispatcher, the exception listener's thread) and run on ``loop``: plain or
    ``async def``. The core's thread waits for it to return, so what the core does after a
    listener returns (acknowledging under AUTO_ACKNOWLEDGE, redelivering when it raised) happens
    after the application's code ran, exactly as for a blocking listener."""

    def __init__(self, listener: Any, method: str, loop: asyncio.AbstractEventLoop,
                 detach: Callable[[], None] | None = None) -> None:
        self.listener = listener
        self._call: Any = getattr(listener, method, listener)
        self.loop = loop
        #: called once the loop is gone (a message listener removes itself: its messages wait
        #: for a receive, or the close, instead of being redelivered to nobody for ever)
        self._detach = detach

    async def _run(self, arg: Any) -> None:
        result = self._call(arg)
        if inspect.isawaitable(result):
            await result

    def __call__(self, arg: Any) -> None:
        if self._loop_gone():
            self._gone()
        fut = asyncio.run_coroutine_threadsafe(self._run(arg), self.loop)
        while True:
            try:
                fut.result(_LOOP_CHECK)
                return
            except concurrent.futures.TimeoutError:
                if self._loop_gone():
                    fut.cancel()
                    self._gone()

    def _loop_gone(self) -> bool:
        return self.loop.is_closed() or not self.loop.is_running()

    def _gone(self) -> None:
        """The application's loop ended: nobody will run the listener, and the core's thread
        must not wait for ever (a close would wait for it in turn)."""
        detach, self._detach = self._detach, None
        if detach is not None:
            _log.warning("the event loop of listener %r is no longer running: the listener is removed",
                         self.listener)
            detach()
        raise IllegalStateException(f"the event loop of listener {self.listener!r} is no longer running")
