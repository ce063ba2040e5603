"""The local prefetch queue: messages the provider delivered to one consumer (or browser),
waiting for the application.

It is the provider's ``InboundSink``: ``deliver`` runs on the I/O thread and only appends, the
application's thread takes. Split from :mod:`amqp_jms.client.consumer` so that module keeps the
JMS consumer (receive, listener, iteration) and this one the queue and its waiting.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..exceptions import JMSException
from .acknowledgement import unseen_outcome
from .receive_policy import STOPPED

if TYPE_CHECKING:
    from ..provider.base import Inbound

__all__ = ["LocalQueue"]


class LocalQueue:
    """Messages the provider delivered, waiting for the application (the provider's sink).

    ``deliver`` runs on the I/O thread and only appends; readers wait on the condition. The
    queue also gates on the connection being started: a stopped connection delivers nothing.
    """

    def __init__(self, on_arrival: Callable[[], None] | None = None, *, settled: bool = False) -> None:
        self._q: deque[Any] = deque()
        #: a presettled consumer's queue (NO_ACKNOWLEDGE, ``jms.presettlePolicy``): what it holds
        #: is already settled, removed from the peer's queue, so an interruption does not void it
        self.settled = settled
        # ``with self._lock`` where a hot path (deliver, get) only locks: the Condition's own
        # ``with`` runs two Python-level calls around the same C lock
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._waiting = 0
        self.running = False
        self.closed = False
        #: times stopped: a pull made before a stop lost its credit to it (``Session._stopped``)
        self.stops = 0
        self.on_arrival = on_arrival
        #: why the link ended under the queue (``on_closed``), None while it lives
        self.failure: JMSException | None = None
        #: told (on a provider thread) when the peer closed the link alone
        self.on_closed_alone: Callable[[JMSException], None] | None = None
        #: the provider's offer to read the peer's input on a waiting reader's own thread
        #: before it sleeps (``ProviderConsumer.read_here``): the message then wakes the reader
        #: directly, not the I/O thread first
        self.read_here: Callable[[Callable[[], bool], float | None], None] | None = None

    def deliver(self, inbound: Inbound) -> None:
        with self._lock:
            self._q.append(inbound)
            if self._waiting:
                self._cond.notify()
        cb = self.on_arrival
        if cb is not None:
            cb()

    def deliver_quietly(self, inbound: Inbound) -> None:
        """``deliver`` without waking a waiting reader: the provider calls ``wake`` once after a
        batch. Why: a reader woken per message takes the GIL at the I/O thread's next C call and
        keeps it while it works, so the two threads passed the GIL (and a futex hand-off) back
        and forth for every message of a batch (issue 16, receive speed)."""
        with self._lock:
            self._q.append(inbound)
        cb = self.on_arrival
        if cb is not None:
            cb()

    def wake(self) -> None:
        """Wake a reader waiting for what ``deliver_quietly`` queued."""
        if self._waiting:
            with self._lock:
                self._cond.notify()

    def __len__(self) -> int:
        return len(self._q)

    def take_all(self) -> list[Any]:
        with self._cond:
            items = list(self._q)
            self._q.clear()
            return items

    def clear(self) -> None:
        """The connection was interrupted: drop what is queued, unsettled (the peer redelivers it,
        flagged). A presettled consumer's messages are kept and delivered: the peer settled them
        as it sent them and will never send them again (Qpid JMS drops them too: a loss)."""
        if self.settled:
            return
        with self._cond:
            self._q.clear()

    def give_back(self) -> list[tuple[Any, int]]:
        """What the link gives back as it closes: every queued message with its unseen outcome
        (called on the I/O thread)."""
        return [(inbound, unseen_outcome(inbound)) for inbound in self.take_all()]

    def push_front(self, items: list[Any]) -> None:
        with self._cond:
            self._q.extendleft(reversed(items))
            self._cond.notify_all()

    def set_running(self, running: bool) -> None:
        with self._cond:
            if self.running and not running:
                self.stops += 1
            self.running = running
            self._cond.notify_all()

    def close(self, exc: JMSException | None = None) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def on_closed(self, exc: JMSException, *, alone: bool = False) -> None:
        self.failure = exc
        self.close(exc)
        hook = self.on_closed_alone
        if alone and hook is not None:
            hook(exc)

    def get(self, timeout: float | None, stops: int | None = None) -> Any:
        """The next message; None on timeout (``0`` = no wait) or when closed. Given ``stops``
        (the ``stops`` count seen before pulling), ``STOPPED`` once the queue is or was stopped
        since: the pull lost its credit to the stop."""
        stop_aware = stops is not None
        read_here = self.read_here
        if (read_here is not None and not self._q and self.running and self.on_arrival is None
                and not self.closed and (timeout is None or timeout > 0)):
            # (a reader with an arrival callback, a listener's or the asyncio face's, is woken
            # by it on the I/O thread)
            started = time.monotonic()
            read_here(self._arrived, timeout)
            if timeout is not None:
                timeout = max(0.0, timeout - (time.monotonic() - started))
        with self._lock:
            if self.running and self._q:
                return self._q.popleft()
            if stop_aware and (not self.running or self.stops != stops):
                return STOPPED
            if timeout is not None and timeout <= 0:
                return None
            deadline = None if timeout is None else time.monotonic() + timeout
            self._waiting += 1
            try:
                while not self.closed:
                    if self.running and self._q:
                        return self._q.popleft()
                    if stop_aware and (not self.running or self.stops != stops):
                        return STOPPED
                    if deadline is None:
                        self._cond.wait()
                    else:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            return None
                        self._cond.wait(left)
                return None
            finally:
                self._waiting -= 1

    def _arrived(self) -> bool:
        """What ends a reader's read on its own thread: a message, or a reason to stop
        waiting (stopped, closed)."""
        return bool(self._q) or not self.running or self.closed

    def wait_running(self, timeout: float | None) -> bool:
        """Wait until started; False on timeout or close."""
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self.closed and not self.running:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return self.running and not self.closed

    def pop_nowait(self) -> Any:
        with self._lock:
            if self.running and self._q:
                return self._q.popleft()
            return None
