"""The per-connection event-loop thread and the bridge from blocking callers onto it.

One named daemon thread runs an asyncio loop; all protocol state is touched only there. Blocking
callers go through ``run(coro, timeout)``, which refuses to run on the loop thread itself (that
would deadlock) with ``IllegalStateException``. Fire-and-forget work (presettled sends,
acknowledgements, credit) goes through ``post(fn)``: a lock-free deque drained in batches, with
at most one loop wake-up outstanding, so a burst of sends costs one self-pipe write, not one
per message.

A waiting caller need not wake the thread at all: the loop thread holds ``idle_lock`` at all
times but while it sleeps in ``select`` (``_IdleSelector``), so a caller that takes the lock
without blocking (``run_if_idle``) finds the loop asleep with nothing queued, and may do a short
piece of its work (a synchronous send's transfer and socket write) itself. The same caller may
then read the peer's answer itself (``read_here``: the socket muted in the loop's selector
meanwhile), so the broker's answer wakes the one thread that waits for it, not the loop thread
first: no thread hand-off at all on a waiting send's round trip. A task on another thread's
event loop, which must not block, has that loop read the answer instead (``lending``,
``read_lease``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import math
import os
import select
import selectors
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

from .._reading import READ_SIZE
from ..exceptions import IllegalStateException, JMSException
from .read_lease import LENDING_SPELL_SECONDS, WATCH_SECONDS, Lending

__all__ = ["LoopThread", "PostedBatch", "wait_for"]

T = TypeVar("T")
_ids = itertools.count(1)
_YIELD = object()


def wait_for(fut: concurrent.futures.Future[T], timeout: float | None, what: str,
             answer_here: Callable[[concurrent.futures.Future[T], float | None], None] | None = None) -> T:
    """Block for ``fut`` (a provider operation); a timeout cancels it and raises JMSException
    naming ``what``, as does a future cancelled because the connection closed.

    ``answer_here``: the provider's offer to read the answer on this thread first
    (``Provider.answer_here``); the wait is ``timeout`` in all, that part included (a step
    behind ``fut`` may time out at the same moment, and must not win by the time spent there)."""
    left = timeout
    if answer_here is not None and not fut.done():
        started = time.monotonic()
        answer_here(fut, timeout)
        if timeout is not None:
            left = max(0.0, timeout - (time.monotonic() - started))
    try:
        return fut.result(left)
    except concurrent.futures.TimeoutError:
        fut.cancel()
        raise JMSException(f"{what} timed out after {timeout} s") from None
    except concurrent.futures.CancelledError:
        raise JMSException(f"{what} was cancelled: the connection closed") from None


class _IdleSelector(selectors.DefaultSelector):
    """The loop's selector: lets go of the idle lock while the loop sleeps in ``select``, and
    only then (a poll with no timeout, the loop having work ready, keeps it)."""

    def __init__(self, lock: threading.Lock) -> None:
        super().__init__()
        self._idle_lock = lock
        #: what to do after each sleep once the loop's socket has been lent to another
        #: thread's event loop (``read_lease``: take back a lease its borrower outstayed);
        #: None until then
        self.after_sleep: Callable[[], None] | None = None
        #: when the socket was last lent (``WATCH_SECONDS`` bounds the sleeps only for a spell
        #: after that), and when the sleep under way ends at the latest (``math.inf``: no bound)
        self.lent_at = -math.inf
        self.sleep_until = math.inf
        #: the kernel's interest list when its masks can be changed in place (epoll, poll; not
        #: kqueue, where an interest is two filters), and its mask for each selectors interest
        #: (none, read, write, both)
        self._kernel: Any = None
        self._masks = (0, 0, 0, 0)
        if isinstance(self, (selectors.EpollSelector, selectors.PollSelector)):
            read, write = getattr(self, "_EVENT_READ"), getattr(self, "_EVENT_WRITE")  # noqa: B009
            self._kernel = getattr(self, "_selector")  # noqa: B009
            self._masks = (0, read, write, read | write)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is not None and timeout <= 0:
            return super().select(timeout)
        if self.after_sleep is not None:
            now = time.monotonic()
            if (timeout is None or timeout > WATCH_SECONDS) and now - self.lent_at < LENDING_SPELL_SECONDS:
                timeout = WATCH_SECONDS
            self.sleep_until = math.inf if timeout is None else now + timeout
        lock = self._idle_lock
        lock.release()
        try:
            return super().select(timeout)
        finally:
            lock.acquire()
            if self.after_sleep is not None:
                self.after_sleep()

    def mute(self, fd: int) -> bool:
        """Stop ``select`` from waking for ``fd``'s input, which a caller reads itself
        (``LoopThread.read_here``); False when that cannot be done (``fd`` is not being read, or
        the platform's selector cannot change an interest in place). Any thread, holding the
        idle lock: the loop thread may be asleep in ``select`` meanwhile, which is why only the
        kernel's interest list changes, never the selector's own map (read here through
        ``_fd_to_key``, the dictionary behind ``get_map``: its mapping view costs more than the
        rest of a mute)."""
        poller = self._kernel
        if poller is None:
            return False
        key = self._fd_to_key.get(fd)  # type: ignore[attr-defined]
        if key is None or not key.events & selectors.EVENT_READ:
            return False  # not being read (asyncio paused reading): not ours to read either
        poller.modify(fd, self._masks[key.events & ~selectors.EVENT_READ])
        return True

    def unmute(self, fd: int) -> None:
        """Undo ``mute``: the interest ``fd`` is registered with now, in the kernel again."""
        key = self._fd_to_key.get(fd)  # type: ignore[attr-defined]
        if key is not None and self._kernel is not None:
            self._kernel.modify(fd, self._masks[key.events])


class PostedBatch(Generic[T]):
    """Items handed to the loop thread in batches: one queued run handles every item added while
    it is still the last operation queued, and an operation posted in between (a commit, a
    close) keeps its order: an item added after it starts a new batch behind it.

    What a prefetching consumer's accepts go through: a closure and a post per message was a
    tenth of an AUTO_ACKNOWLEDGE receive, and a drain of one shared queue would settle an accept
    made after a commit inside the transaction the commit ended."""

    def __init__(self, loop_thread: LoopThread, handle: Callable[[list[T]], None]) -> None:
        self._loop_thread = loop_thread
        self._handle = handle
        self._lock = threading.Lock()
        self._items: list[T] = []
        #: the queued run of ``_items`` (recognised by ``LoopThread.is_last``)
        self.run: Callable[[], None] = self._new_run(self._items)

    def _new_run(self, items: list[T]) -> Callable[[], None]:
        return lambda: self._take(items)

    def add(self, item: T) -> None:
        """Queue ``item`` for the loop thread (any thread)."""
        with self._lock:
            if self._items and self._loop_thread.is_last(self.run):
                self._items.append(item)  # the queued run takes the lock first: it sees it
                return
            items = self._items = [item]
            run = self.run = self._new_run(items)
            self._loop_thread.post(run)

    def take_now(self) -> list[T]:
        """The items of the queued batch, taken by a caller that handles them itself while the
        loop thread is held (``LoopThread.run_if_idle`` with ``queued=self.run``): the queued
        run then finds its batch empty."""
        with self._lock:
            items = self._items[:]
            self._items.clear()
            return items

    def _take(self, items: list[T]) -> None:
        with self._lock:
            taken = items[:]
            items.clear()
        if taken:
            self._handle(taken)


class LoopThread:
    """An asyncio loop on its own daemon thread, plus ``run``/``submit``/``post`` bridges."""

    def __init__(self, name: str = "amqp-jms-loop") -> None:
        #: held by the loop thread but while it sleeps in ``select`` (see ``run_if_idle``)
        self.idle_lock = threading.Lock()
        self.idle_lock.acquire()  # the loop thread's from the start: released in ``_main``
        self._selector = _IdleSelector(self.idle_lock)
        self.loop: asyncio.AbstractEventLoop = asyncio.SelectorEventLoop(self._selector)
        #: the loop's own wake-up socket (what ``call_soon_threadsafe`` writes to): a caller
        #: reading for itself stops when it becomes readable (``read_here``)
        wake = getattr(self.loop, "_ssock", None)
        self._wake_fd: int | None = wake.fileno() if wake is not None else None
        #: ``read_here``'s poll of the socket and the wake-up socket (one caller at a time: it
        #: is used holding the idle lock), kept for the socket it was made for
        self._read_poller: Any = None
        self._read_fd = -1
        self._ops: deque[Callable[[], object]] = deque()
        self._wake_pending = False
        self._after_ops: Callable[[], None] | None = None
        self._starting: asyncio.Task[Any] | None = None
        #: submitted work not started yet -> how to fail it if the loop stops first
        self._unstarted: dict[Callable[[], object], Callable[[], None]] = {}
        self._closed = False
        #: the socket lent to another thread's event loop (the asyncio face's own read)
        self.lending = Lending(self.run_if_idle, self.idle_lock, self._selector, self.loop,
                               lambda: self._closed)
        self._thread = threading.Thread(target=self._main, name=f"{name}-{next(_ids)}", daemon=True)
        self._started = threading.Event()
        self._thread.start()
        self._started.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        try:
            self.loop.run_forever()
        finally:
            # nothing queued starts now (the cancellation below runs the loop once more)
            self._closed = True
            self._abandon_ops()
            try:
                pending = asyncio.all_tasks(self.loop)
                for t in pending:
                    t.cancel()
                if pending:
                    self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            finally:
                self.loop.close()
                self._abandon_ops()  # posted while the tasks were being cancelled
                self.idle_lock.release()  # held for good by nobody: run_if_idle checks _closed

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def in_loop(self) -> bool:
        return threading.current_thread() is self._thread

    def set_after_ops(self, fn: Callable[[], None]) -> None:
        """``fn`` runs on the loop after each batch of posted operations (flush the engine)."""
        self._after_ops = fn

    # -- bridges -------------------------------------------------------------------------------
    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coro`` on the loop, in order with ``post``ed work, and return its future.

        Work handed over from one thread starts in the order it was handed over, whether it
        was posted or submitted: a close submitted before a send is posted reaches proton first.
        """
        if self.loop.is_closed() or not self._thread.is_alive():
            coro.close()
            raise IllegalStateException("the connection's I/O thread has stopped")
        cf: concurrent.futures.Future[T] = concurrent.futures.Future()

        def start() -> object:
            self._unstarted.pop(start, None)
            if cf.cancelled():
                coro.close()
                return None
            async def first_step_marked() -> T:
                self._starting = None  # runs at the task's first step
                return await coro

            task = self.loop.create_task(first_step_marked())
            self._starting = task

            def done(t: asyncio.Task[T]) -> None:
                if self._starting is t:  # cancelled before its first step
                    self._starting = None
                if cf.done():
                    return
                if t.cancelled():
                    coro.close()  # cancelled before its first step: it never ran
                    cf.cancel()
                elif t.exception() is not None:
                    cf.set_exception(t.exception())
                else:
                    cf.set_result(t.result())

            task.add_done_callback(done)
            def cancel(f: concurrent.futures.Future[T]) -> None:
                if f.cancelled():
                    self.loop.call_soon_threadsafe(task.cancel)

            cf.add_done_callback(cancel)
            return _YIELD  # let the task take its first step before later work

        def abandon() -> None:
            coro.close()
            if not cf.done():
                cf.set_exception(IllegalStateException(
                    "the connection's I/O thread stopped before this could start"))

        self._unstarted[start] = abandon
        self.post(start)
        return cf

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None, what: str = "operation") -> T:
        """Run ``coro`` on the loop and wait up to ``timeout`` seconds for its result."""
        if self.in_loop():
            coro.close()
            raise IllegalStateException(
                f"{what} called on the connection's I/O thread: it would deadlock "
                "(do not call blocking JMS methods from provider callbacks)"
            )
        fut = self.submit(coro)
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise JMSException(f"{what} timed out after {timeout:.3f} s") from None

    def run_if_idle(self, fn: Callable[[], object], queued: Callable[[], object] | None = None) -> bool:
        """Run ``fn()`` on the calling thread, now, if the loop thread is asleep in ``select``
        with nothing handed over and not yet started; False (``fn`` not run) otherwise.

        ``fn`` runs holding ``idle_lock``, so the loop thread cannot touch protocol state
        meanwhile (on waking it waits for the lock: ``fn`` must be short and never block; ``read_here``'s
        wait for the socket is bounded, and ends when work is handed to the loop), and
        after everything this thread handed over earlier (the queue is empty), so the order of
        ``post``/``submit``/``run_if_idle`` from one thread is kept. ``fn`` must not complete the
        loop's own futures or schedule on it (it is not the loop thread): what it leaves for the
        loop is picked up at the loop's next turn.

        ``queued``: an operation ``fn`` does the work of (a ``PostedBatch``'s run, whose items
        ``fn`` takes with ``take_now``); the loop counts as idle with only that one queued too,
        which then runs later and finds its batch empty."""
        lock = self.idle_lock
        if not lock.acquire(False):
            return False
        try:
            if self._starting is not None or self._closed:
                return False
            ops = self._ops
            if ops or self._wake_pending:
                if queued is None or not ops or any(op is not queued for op in list(ops)):
                    return False
            fn()
            return True
        finally:
            lock.release()

    def has_ready(self) -> bool:
        """Whether callbacks wait for the loop's next turn (scheduled from a thread that is not
        the loop's, as ``read_here``'s ``handle`` may: then the loop must be woken)."""
        return bool(getattr(self.loop, "_ready", True))

    def read_here(self, fd: int, handle: Callable[[bytes], bool], budget: float,
                  torn: Callable[[], None], spin: float = 0.0,
                  take: Callable[[], bool | None] | None = None) -> bool:
        """Read ``fd`` on the calling thread while the loop thread sleeps, handing each chunk to
        ``handle`` (which returns True once the caller has what it waits for); False when the
        loop is not idle, or gave up without that (nothing lost: what was read was handled).

        A waiting caller whose answer comes on this socket then costs one wake-up (its own, by
        the kernel) instead of two (the loop thread's, then the caller's by the loop thread).
        The loop thread cannot run meanwhile (``handle`` runs holding the idle lock, under the
        same rules as ``run_if_idle``'s ``fn``), and ``select`` is told not to wake for ``fd``.
        The wait ends at the first of: ``handle`` says done; ``budget`` seconds; anything handed
        to the loop from another thread (its wake-up socket became readable); the socket's end
        or error, which the loop then reads for itself.

        ``torn`` is called if an exception (a KeyboardInterrupt) leaves between reading the
        socket and ``handle`` taking what was read: the bytes may be gone, the stream is no
        longer whole, and the provider must end the connection rather than lose a frame
        silently. Interrupted while waiting for the socket, nothing was read: nothing is torn.

        ``spin``: seconds to poll the socket without sleeping before the wait sleeps in the
        kernel (``ConnectionConfig.answer_spin_seconds``): an answer that comes meanwhile then
        wakes nobody, the thread never having slept.

        ``take``: reads ``fd`` and hands what it read on by itself, instead of a read here and
        ``handle`` (the provider's C read straight into proton, ``write_through.read_in``): True
        when the caller has what it waits for, False to wait on, None when the socket has ended
        or failed (read nothing: the loop meets it itself). Nothing read is ever between it and
        its handler, so it has nothing to tear."""
        wake_fd = self._wake_fd
        if wake_fd is None or self.loop.get_debug():
            return False
        answered = False

        def read() -> None:
            nonlocal answered
            answered = self._read_muted(fd, wake_fd, handle, budget, torn, spin, take)

        self.run_if_idle(read)  # (the loop's idle test has its one home there)
        return answered

    def _read_muted(self, fd: int, wake_fd: int, handle: Callable[[bytes], bool], budget: float,
                    torn: Callable[[], None], spin: float, take: Callable[[], bool | None] | None) -> bool:
        """``read_here``'s reading, holding the idle lock."""
        sel = self._selector
        if not sel.mute(fd):
            return False
        try:
            poller = self._read_poller
            if poller is None or self._read_fd != fd:
                poller = self._read_poller = select.poll()
                self._read_fd = fd
                poller.register(fd, select.POLLIN)
                poller.register(wake_fd, select.POLLIN)
            now = time.monotonic()
            deadline, spin_until = now + budget, now + spin
            reading = False
            try:
                while True:
                    now = time.monotonic()
                    left = deadline - now
                    if left <= 0:
                        return False
                    if now < spin_until:
                        ready = poller.poll(0)  # (the GIL is let go of for each poll)
                        if not ready:
                            continue
                    else:
                        ready = poller.poll(left * 1000.0)
                    if len(ready) != 1 or ready[0][0] != fd:
                        return False  # nothing, or work handed to the loop
                    if take is not None:
                        took = take()
                        if took is None:
                            return False  # the socket's end or error: the loop's to meet
                        if took:
                            return True
                        continue
                    reading = True
                    try:
                        data = os.read(fd, READ_SIZE)
                    except (BlockingIOError, InterruptedError):
                        reading = False
                        continue
                    except OSError:
                        reading = False
                        return False  # the loop meets the error itself
                    if not data:
                        reading = False
                        return False  # the end stays readable: the loop sees it too
                    done = handle(data)
                    reading = False
                    if done:
                        return True
            except BaseException:
                if reading:
                    torn()
                raise
        finally:
            sel.unmute(fd)

    def post(self, fn: Callable[[], object]) -> None:
        """Run ``fn()`` on the loop soon, batched with other posted work (thread-safe)."""
        self._ops.append(fn)
        if not self._wake_pending:
            self._wake_pending = True
            try:
                self.loop.call_soon_threadsafe(self._drain)
            except RuntimeError:  # loop closed: the connection is gone
                self._abandon_ops()
        elif self._closed:  # the wake-up was pending when the loop stopped: it will not come
            self._abandon_ops()

    def is_last(self, fn: Callable[[], object]) -> bool:
        """Whether ``fn`` (this object) is the last operation queued, not yet started."""
        try:
            return self._ops[-1] is fn
        except IndexError:
            return False

    def _abandon_ops(self) -> None:
        """Work that will never run (the loop stopped): posted operations are dropped (the
        connection is gone), submitted ones fail their future so that no caller waits forever."""
        ops = self._ops
        while True:
            try:
                fn = ops.popleft()
            except IndexError:
                return
            abandon = self._unstarted.pop(fn, None)
            if abandon is not None:
                abandon()

    def _drain(self) -> None:
        self._wake_pending = False
        if self._closed:
            self._abandon_ops()
            return
        if self._starting is not None:
            # a submitted task has not taken its first step yet: later work waits behind it
            self.loop.call_soon(self._drain)
            return
        ops = self._ops
        while ops:
            try:
                r = ops.popleft()()
            except Exception:  # one bad op must not stop the loop
                from .._logs import PROVIDER

                PROVIDER.exception("error in posted operation")
                continue
            if r is _YIELD and ops:
                # a task was started: its first step is queued on the loop; continue after it
                if self._after_ops is not None:
                    self._after_ops()
                self.loop.call_soon(self._drain)
                return
        if self._after_ops is not None:
            self._after_ops()

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop the loop and join the thread (no-op on the loop thread itself)."""
        if self.loop.is_closed():
            return
        try:
            self.loop.call_soon_threadsafe(self._stop_running)
        except RuntimeError:
            pass
        if not self.in_loop():
            self._thread.join(timeout)

    def _stop_running(self) -> None:
        """End ``run_forever``, once: a second ``stop`` (a close, then a shutdown) that lands
        while ``_main`` cancels what is left would stop that last run instead, and the I/O
        thread would die with "Event loop stopped before Future completed"."""
        if not self._closed:
            self.loop.stop()
