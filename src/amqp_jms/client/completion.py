"""Asynchronous send with a CompletionListener (JMS 2.0 section 4.6.2).

``producer.send(message, completion_listener=listener)`` returns as soon as the message is
handed to the provider; the listener's ``on_completion(message)`` (or
``on_exception(message, exception)``) runs later, when the peer's outcome arrives. The rules
this module implements:

* 4.6.2.1 callbacks run on a thread of the session, never the caller's and never the I/O
  loop: one completion thread per session, started on first use.
* 4.6.2.2 per session, callbacks run in the order the sends were made, even if outcomes
  arrive in another order (a callback waits for every earlier send of its session).
* 4.6.2.3/4.6.2.4 ``close`` of the producer, session or connection, and ``commit``/``rollback``,
  block until every incomplete send has completed and its callback has returned.
* 4.6.2.5 a callback that calls ``close`` on its own producer, session or connection, or
  ``commit``/``rollback`` on its own session, gets ``IllegalStateException`` (it would wait for
  itself).
* a presettled send (no outcome to wait for) completes at once, still on the session thread.

A listener is an object with ``on_completion``/``on_exception`` or a plain callable
``fn(message, exception_or_None)``.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from .._logs import CLIENT
from ..exceptions import IllegalStateException, JMSException

if TYPE_CHECKING:
    from .session import Session

__all__ = [
    "RETURN_FUTURE",
    "CompletionListener",
    "Completions",
    "completions_for",
    "refuse_in_callback",
    "wait_for_completions",
]

_log = CLIENT

#: passed as the listener to ``MessageProducer.send_resolved`` by the asyncio API: "give me the
#: provider's future" (awaited with ``asyncio.wrap_future``) instead of blocking or a callback
RETURN_FUTURE: Any = object()
_ids = itertools.count(1)


class CompletionListener(Protocol):
    def on_completion(self, message: Any) -> None: ...

    def on_exception(self, message: Any, exception: Exception) -> None: ...


CompletionListenerLike = CompletionListener | Callable[[Any, Exception | None], None]


def is_listener(obj: Any) -> bool:
    """Whether a trailing positional argument of ``send`` is a completion listener."""
    return hasattr(obj, "on_completion") or callable(obj)


class _Pending:
    __slots__ = ("exception", "listener", "message", "producer", "ready")

    def __init__(self, message: Any, listener: Any, producer: Any) -> None:
        self.message = message
        self.listener = listener
        self.producer = producer
        self.ready = False
        self.exception: Exception | None = None


class Completions:
    """The completion queue and thread of one session."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._pending: deque[_Pending] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False

    # -- sending side --------------------------------------------------------------------------
    def add(self, fut: concurrent.futures.Future[None] | None, message: Any, listener: Any,
            producer: Any = None) -> None:
        p = _Pending(message, listener, producer)
        with self._cond:
            if self._stopped:
                raise IllegalStateException("the session is closed")
            self._pending.append(p)
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, name=f"{self._name}-{next(_ids)}",
                                                daemon=True)
                self._thread.start()
        if fut is None:
            self._ready(p, None)
        else:
            fut.add_done_callback(lambda f: self._ready(p, _exception_of(f)))

    def _ready(self, p: _Pending, exc: Exception | None) -> None:
        with self._cond:
            p.exception = exc
            p.ready = True
            self._cond.notify_all()

    # -- waiting -------------------------------------------------------------------------------
    def on_own_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def wait_all(self, timeout: float | None = None, producer: Any = None) -> bool:
        """Block until no send (of ``producer``, if given) is incomplete; False on timeout."""
        if self.on_own_thread():
            raise IllegalStateException("a CompletionListener must not wait for its own session's sends")
        with self._cond:
            return self._cond.wait_for(
                lambda: not any(producer is None or p.producer is producer for p in self._pending), timeout
            )

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    # -- the session's completion thread -------------------------------------------------------
    def _main(self) -> None:
        while True:
            with self._cond:
                while not (self._pending and self._pending[0].ready):
                    if self._stopped and not self._pending:
                        return
                    self._cond.wait(0.5)
                p = self._pending[0]
            try:
                _call(p.listener, p.message, p.exception)
            except Exception:  # a listener's bug must not stop later callbacks
                _log.exception("CompletionListener raised")
            with self._cond:
                self._pending.popleft()
                self._cond.notify_all()


def _exception_of(fut: concurrent.futures.Future[None]) -> Exception | None:
    if fut.cancelled():
        return JMSException("the send was cancelled: the connection closed")
    exc = fut.exception()
    if exc is None:
        return None
    return exc if isinstance(exc, Exception) else JMSException(str(exc))


def _call(listener: Any, message: Any, exc: Exception | None) -> None:
    if hasattr(listener, "on_completion"):
        if exc is None:
            listener.on_completion(message)
        else:
            listener.on_exception(message, exc)
    else:
        listener(message, exc)


# -- hooks called from the session / producer / connection -------------------------------------
def completions_for(session: Session) -> Completions:
    seam = session.internal
    c = seam.completions
    if c is None:
        c = seam.completions = Completions(f"amqp-jms-completion-{seam.index}")
    return c


def refuse_in_callback(sessions: Iterable[Session], what: str) -> None:
    """Raise IllegalStateException if called from a completion callback of one of ``sessions``."""
    for s in list(sessions):
        c = s.internal.completions
        if c is not None and c.on_own_thread():
            raise IllegalStateException(
                f"a CompletionListener must not call {what}() on its own {what_of(what)}"
            )


def what_of(what: str) -> str:
    return "session" if what in ("commit", "rollback") else "producer, session or connection"


def wait_for_completions(session: Session, what: str, producer: Any = None) -> None:
    """Hook for close/commit/rollback: refuse inside a callback, else wait for incomplete sends."""
    c = session.internal.completions
    if c is None:
        return
    if c.on_own_thread():
        raise IllegalStateException(f"a CompletionListener must not call {what}() on its own {what_of(what)}")
    cfg = session.internal.connection.internal.config
    c.wait_all(cfg.seconds(cfg.close_timeout_ms), producer)  # a dead connection must not hang us
    if what == "close" and producer is None:
        c.stop()
