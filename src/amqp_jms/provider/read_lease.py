"""A connection's socket lent to another thread's event loop: the asyncio face's own read.

``LoopThread.read_here`` lets a caller blocked on a waiting send read the peer's answer itself
while the connection's I/O thread sleeps. An asyncio task must not block its event loop, so
that loop (the awaiting task's, on another thread) is lent the socket instead: the I/O thread's
selector stops watching it (muted, as for ``read_here``), the borrowing loop watches it, and the
answer wakes the loop whose task awaits it, not the I/O thread first, which then woke that loop.

The rules are ``read_here``'s: every read happens holding the loop thread's idle lock and feeds
the engine under that same hold, so no byte is read out of order whoever reads; a lease ends as
soon as its answer is read, after its budget, when work is handed to the loop thread, at the
socket's end or error (which the I/O thread then reads for itself), and when the connection's
socket goes. The borrowing loop is another thread's and may stall (a blocking call in a task):
the I/O thread then takes its socket back by itself, as its sleeps are bounded by
``WATCH_SECONDS`` while it lends its socket (``Lending.check``): for ``LENDING_SPELL_SECONDS``
after each lending, so that an idle connection sleeps for as long as it likes again; a lending
that finds it in a longer sleep wakes it once.

The borrowing loop watches a duplicate of the socket's descriptor, which only that loop closes
(after it stops watching it): the I/O thread may close the socket meanwhile, and its number be
given to a new file, without the borrowing loop's selector ever holding a stale number.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from .._reading import READ_SIZE

__all__ = ["LENDING_SPELL_SECONDS", "WATCH_SECONDS", "Lending", "ReadLease"]

#: the longest the I/O thread sleeps while it lends its socket: a lease whose borrower stalled
#: past its budget is taken back within this much more
WATCH_SECONDS = 0.05
#: how long after a lending the I/O thread's sleeps stay bounded by ``WATCH_SECONDS``
LENDING_SPELL_SECONDS = 1.0


class ReadLease:
    """One lending of a socket: to whom (``loop``), what reads go to (``handle``, True once
    the borrower has what it waits for or the rest is the I/O thread's), until when."""

    __slots__ = ("dup", "fd", "handle", "live", "loop", "timer", "torn", "until")

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, handle: Callable[[bytes], bool],
                 until: float, torn: Callable[[], None]) -> None:
        self.fd = fd
        self.loop = loop
        self.handle = handle
        self.until = until
        self.torn = torn
        #: the borrower's duplicate of ``fd`` (what its selector watches), while it has one
        self.dup: int | None = None
        self.timer: asyncio.TimerHandle | None = None
        #: False once ended (by the borrower) or taken back (by the I/O thread)
        self.live = True


class Lending:
    """The one lease a loop thread's socket may be out on (``LoopThread.lending``).

    ``lend`` and the lease's own callbacks run on the borrowing loop's thread; ``check`` and
    ``recall`` on the loop thread, holding its idle lock."""

    def __init__(self, run_if_idle: Callable[[Callable[[], None]], bool], idle_lock: threading.Lock,
                 selector: Any, loop: asyncio.AbstractEventLoop, closed: Callable[[], bool]) -> None:
        self._run_if_idle = run_if_idle
        self._idle_lock = idle_lock
        self._selector = selector
        self._loop = loop  # the loop thread's
        self._closed = closed
        #: the lease out now (read and changed holding the idle lock)
        self.lease: ReadLease | None = None

    # -- the borrower's thread -----------------------------------------------------------------
    def lend(self, fd: int, loop: asyncio.AbstractEventLoop, handle: Callable[[bytes], bool],
             budget: float, torn: Callable[[], None]) -> bool:
        """Lend ``fd``'s reading to ``loop`` (the calling thread's running loop) for at most
        ``budget`` seconds, each chunk read going to ``handle`` holding the idle lock; False
        when the loop thread is not idle, or the socket is out already."""
        if self.lease is not None:
            return False
        now = time.monotonic()
        lease = ReadLease(fd, loop, handle, now + budget, torn)
        wake = False

        def take() -> None:
            nonlocal wake
            sel = self._selector
            if self.lease is not None or not sel.mute(fd):
                lease.live = False
                return
            self.lease = lease
            if sel.after_sleep is None:  # the first lending: from now on it checks
                sel.after_sleep = self.check
                wake = True
            else:
                # asleep past the moment it must be able to take the socket back: wake it once
                wake = sel.sleep_until > lease.until + WATCH_SECONDS
            sel.lent_at = now

        if not self._run_if_idle(take) or not lease.live:
            return False
        try:
            lease.dup = os.dup(fd)
            loop.add_reader(lease.dup, self._readable, lease)
            lease.timer = loop.call_later(budget, self.end, lease)
        except Exception:  # (a loop that cannot watch a descriptor: the I/O thread reads)
            self.end(lease)
            return False
        except BaseException:
            self.end(lease)
            raise
        if wake:
            # the loop thread went to sleep for longer than the lease may last: wake it once,
            # so that its sleeps are bounded by WATCH_SECONDS while it lends its socket
            self._to_loop(_nothing)
        return True

    def _readable(self, lease: ReadLease) -> None:
        if not lease.live:
            self._drop(lease)
            return
        outcome: bool | None = None  # True: the borrower is done; None: keep reading

        def read() -> None:
            nonlocal outcome
            outcome = True if self.lease is not lease else self._read_once(lease)

        if not self._run_if_idle(read):
            outcome = True  # work was handed to the loop thread: the rest is its to read
        if outcome:
            self.end(lease)

    @staticmethod
    def _read_once(lease: ReadLease) -> bool | None:
        """One read, holding the idle lock; True when the lease is over."""
        try:
            data = os.read(lease.fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return True  # the loop thread meets the error itself
        if not data:
            return True  # the end stays readable: the loop thread sees it too
        try:
            done = lease.handle(data)
        except BaseException:
            lease.torn()  # read but not handed to the engine: the stream is no longer whole
            raise
        return True if done else None

    def end(self, lease: ReadLease) -> None:
        """The borrower gives the socket back (its answer came, its budget ran out, or the
        loop thread has work): its selector stops watching, the loop thread's starts again."""
        lease.live = False
        self._drop(lease)

        def give_back() -> None:
            if self.lease is lease:
                self.lease = None
                self._selector.unmute(lease.fd)

        lock = self._idle_lock
        if lock.acquire(False):
            try:
                if not self._closed():
                    give_back()
            finally:
                lock.release()
        else:
            self._to_loop(give_back)  # (it is awake, and does it at its next turn)

    def _drop(self, lease: ReadLease) -> None:
        """The borrower's side of a lease that is over: its watch and its duplicate go."""
        if lease.timer is not None:
            lease.timer.cancel()
            lease.timer = None
        dup, lease.dup = lease.dup, None
        if dup is not None:
            try:
                lease.loop.remove_reader(dup)
            finally:
                os.close(dup)

    # -- the loop thread, holding the idle lock ------------------------------------------------
    def check(self) -> None:
        """After each sleep: a lease whose borrower outstayed its budget (its loop stalled) is
        taken back."""
        lease = self.lease
        if lease is not None and time.monotonic() > lease.until + WATCH_SECONDS:
            self._take_back(lease)

    def recall(self, fd: int) -> bool:
        """The socket ``fd`` is going: its lease, if any, ends now; True when the borrower
        still held a duplicate (the caller then shuts the socket down, so that its end reaches
        the peer now, not when the borrower lets its duplicate go)."""
        lease = self.lease
        if lease is None or lease.fd != fd:
            return False
        held = lease.dup is not None
        self._take_back(lease)
        return held

    def _take_back(self, lease: ReadLease) -> None:
        self.lease = None
        lease.live = False
        self._selector.unmute(lease.fd)
        try:
            lease.loop.call_soon_threadsafe(self._drop, lease)
        except RuntimeError:
            # the borrower's loop is closed, its selector with it: nobody watches the duplicate
            dup, lease.dup = lease.dup, None
            if dup is not None:
                os.close(dup)

    def _to_loop(self, fn: Callable[[], object]) -> None:
        try:
            self._loop.call_soon_threadsafe(fn)
        except RuntimeError:
            pass  # the loop thread has stopped: nothing is lent any more


def _nothing() -> None:
    return None
