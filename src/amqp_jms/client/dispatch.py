"""The per-session dispatcher thread: message listeners run here, one at a time (JMS 4.4.14).

Never on the provider's I/O thread. The dispatcher takes one token per queued message; it
pauses while the connection is stopped, and ``wait_idle`` lets ``Connection.stop``/consumer
close wait for a listener call in progress, as the spec requires.
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .session import Session

__all__ = ["Dispatcher"]

_STOP = object()


class Dispatcher:
    def __init__(self, session: Session, name: str) -> None:
        self._session = session
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._busy = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def notify(self, consumer: Any) -> None:
        self._q.put(consumer)

    def resume(self) -> None:
        self._q.put(None)  # re-check after start

    def on_own_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def wait_idle(self) -> None:
        """Return once no listener call is running (no-op on the dispatcher thread)."""
        if self.on_own_thread():
            return
        with self._busy:
            pass

    def stop(self) -> None:
        self._stopped = True
        self._q.put(_STOP)
        if not self.on_own_thread():
            self._thread.join(10)

    def _main(self) -> None:
        conn = self._session._connection
        while True:
            item = self._q.get()
            if item is _STOP or self._stopped:
                return
            if item is None:
                continue
            while not conn._started and not self._stopped:
                conn._wait_started(0.5)
            if self._stopped:
                return
            with self._busy:
                try:
                    self._session._dispatch_one(item)
                except Exception:  # keep dispatching; the error is the listener's or logged
                    from .._logs import CLIENT

                    CLIENT.exception("message dispatch failed")
