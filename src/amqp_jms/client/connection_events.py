"""Connection listeners: what happens to a connection, told to the application (issue 17).

Qpid JMS's ``JmsConnectionListener``, in Python names: ``on_connection_established(uri)``
(first connect), ``on_connection_interrupted(uri)`` (lost; a failover connection reconnects),
``on_connection_restored(uri)`` (reconnected, everything re-created) and
``on_connection_failure(exc)`` (given up: the connection is dead; its ExceptionListener hears
it too). The provider reports these on its I/O thread; ``ConnectionEvents`` hands them to one
thread of their own, in the order they happened, and calls the listeners holding no lock, so a
listener may use the connection (except to wait for the very event being reported).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any

__all__ = ["ConnectionEvents", "ConnectionListener", "check_listener"]

_log = logging.getLogger(__name__)

EVENTS = ("on_connection_established", "on_connection_interrupted", "on_connection_restored",
          "on_connection_failure")


def check_listener(listener: Any) -> None:
    """Refuse, at once, an object that would hear nothing (a typo in every method name)."""
    if not any(callable(getattr(listener, name, None)) for name in EVENTS):
        raise TypeError(f"a connection listener needs at least one of {', '.join(EVENTS)}")


class ConnectionListener:
    """Subclass and override what you need (a listener may also be any object with some of
    these methods): ``Connection.add_connection_listener(listener)``."""

    def on_connection_established(self, uri: str) -> None:
        """Connected to ``uri`` for the first time."""

    def on_connection_interrupted(self, uri: str) -> None:
        """The connection to ``uri`` was lost and is being re-established: messages prefetched
        but not yet received were dropped (the broker redelivers them, flagged redelivered)."""

    def on_connection_restored(self, uri: str) -> None:
        """Reconnected (to ``uri``): sessions, producers and consumers work again."""

    def on_connection_failure(self, exc: Exception) -> None:
        """The connection is lost for good (after any reconnect attempts)."""


class ConnectionEvents:
    """A connection's listeners and the ordered hand-off of events to them."""

    def __init__(self) -> None:
        self._listeners: list[Any] = []
        self._pending: deque[tuple[str, Any]] = deque()
        self._lock = threading.Lock()
        self._delivering = False

    def add(self, listener: Any) -> None:
        check_listener(listener)
        with self._lock:
            if listener not in self._listeners:
                self._listeners.append(listener)

    def remove(self, listener: Any) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def post(self, event: str, arg: Any) -> None:
        """Queue ``event`` for every listener (any thread; never blocks, never calls out)."""
        with self._lock:
            if not self._listeners:
                return
            self._pending.append((event, arg))
            if self._delivering:
                return
            self._delivering = True
        # a thread per burst, not per connection: an idle connection holds no thread
        threading.Thread(target=self._deliver, name="amqp-jms-connection-events", daemon=True).start()

    def _deliver(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._delivering = False
                    return
                event, arg = self._pending.popleft()
                listeners = list(self._listeners)
            for listener in listeners:
                call = getattr(listener, event, None)
                if call is None:
                    continue
                try:
                    call(arg)
                except Exception:  # one listener's bug must not silence the others
                    _log.exception("connection listener %r failed in %s", listener, event)
