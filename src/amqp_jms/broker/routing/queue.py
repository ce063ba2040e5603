"""A message queue with competing consumers: the one buffer behind queues and subscriptions.

Order is JMS priority (9 first) then FIFO; a released message goes back to the front of its
priority. Consumers are served round-robin while they have credit; a consumer with a selector
only takes messages it matches (the others stay for the rest). Messages with a delivery time
wait in a heap until due; expired messages are dropped when met.

Selective consumers make dispatch a scan, so the queue keeps it linear: one pass over the
messages per credit grant (each message is offered once to the consumers with credit, instead
of a rescan from the head for every message taken), run in slices of ``SCAN_SLICE`` selector
evaluations that yield to the event loop in between so other connections stay served. After a
pass, every message left was refused by every consumer still holding credit, so a message that
arrives is offered on its own instead of rescanning the queue.

The queue knows nothing of AMQP: a consumer is anything with ``credit()``, ``deliver(msg)``
and an optional ``accepts(msg)``.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Protocol

from ..storage.message import BrokerMessage, next_seq
from ..storage.spill import Spill
from .counters import QueueCounters

__all__ = ["SCAN_SLICE", "Consumer", "MessageQueue"]

SCAN_SLICE = 500  # messages a selective scan offers before it yields to the event loop
SCAN_SECONDS = 0.02  # ... or seconds it spends (BrokerLimits.selector_budget), whichever comes first


#: how far ``release`` looks for the place of a released message among earlier releases
_RELEASE_SCAN = 256


class Consumer(Protocol):
    def credit(self) -> int: ...

    def deliver(self, msg: BrokerMessage) -> None: ...

    def accepts(self, msg: BrokerMessage) -> bool: ...

    @property
    def filtered(self) -> bool: ...


class MessageQueue:
    """Priority buckets of messages, a delay heap and the consumers competing for them."""

    def __init__(
        self,
        name: str,
        *,
        durable: bool = False,
        clock: Callable[[], float],
        on_drop: Callable[[MessageQueue, BrokerMessage], None] | None = None,
        on_schedule: Callable[[MessageQueue, float], None] | None = None,
        memory_limit: int = 0,
        scan_seconds: float = SCAN_SECONDS,
        spill_dir: str | None = None,
    ) -> None:
        self.name = name
        self.scan_seconds = scan_seconds
        self.spill_dir = spill_dir
        self.durable = durable  # the queue definition survives a restart
        self._buckets: list[deque[BrokerMessage]] = [deque() for _ in range(10)]
        self._count = 0
        self._bytes = 0
        self._delayed: list[tuple[float, int, BrokerMessage]] = []
        self.consumers: list[Consumer] = []
        self._rr = 0
        self._clock = clock
        self._on_drop = on_drop
        self._on_schedule = on_schedule
        self._dispatching = False
        self.memory_limit = memory_limit  # message bytes held in memory before paging (0 = no limit)
        self._spill: Spill | None = None
        # every available message was refused by every consumer holding credit (see module doc)
        self._settled = False
        self._cursor: tuple[int, int] | None = None  # where a sliced scan resumes
        self._resume: asyncio.Handle | None = None
        self._after_scan: list[Callable[[], None]] = []  # run when the sliced scan under way ends
        self._extracting = 0  # management operations under way (``extract.py``): no paging in
        self.counters = QueueCounters()  # what went through it (metrics.py)

    # -- sizes ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        """Messages available now (not counting delayed or acquired ones)."""
        return self._count + (self._spill.count if self._spill is not None else 0)

    @property
    def paged(self) -> int:
        """Messages currently paged out to disk."""
        return self._spill.count if self._spill is not None else 0

    @property
    def paged_bytes(self) -> int:
        """Message bytes currently paged out to disk."""
        return self._spill.bytes if self._spill is not None else 0

    @property
    def delayed(self) -> int:
        return len(self._delayed)

    @property
    def byte_size(self) -> int:
        return self._bytes

    # -- adding --------------------------------------------------------------------------------
    def enqueue(self, msg: BrokerMessage) -> None:
        """Add a message (at the back of its priority), or to the delay heap if not yet due."""
        self.counters.enqueued += 1
        if msg.deliver_at and msg.deliver_at > self._clock():
            heapq.heappush(self._delayed, (msg.deliver_at, msg.seq, msg))
            if self._on_schedule is not None and self._delayed[0][2] is msg:
                self._on_schedule(self, msg.deliver_at)
            return
        limit = self.memory_limit
        if limit and (self._bytes + msg.mem > limit or (self._spill is not None and self._spill.count)):
            spill = self._spill
            if spill is None:
                spill = self._spill = Spill(self.spill_dir)
            spill.put(msg)
            if (self._settled and self._count and self._bytes >= limit // 2
                    and spill.top_priority() <= self._top_priority()):
                return  # nothing a dispatch could page in or hand over has changed: no rescan
        else:
            self._buckets[msg.priority].append(msg)
            self._count += 1
            self._bytes += msg.mem
            cursor = self._cursor
            if cursor is not None and msg.priority <= cursor[0]:
                return  # a sliced scan is under way and will reach it
            if self.consumers and (self._settled or cursor is not None):
                # every older message of its priority was refused already: offer only this one
                self._offer_last(msg)
                return
        if self.consumers:
            self.dispatch()

    def _offer_last(self, msg: BrokerMessage) -> None:
        if self._dispatching:
            return
        now = self._clock()
        bucket = self._buckets[msg.priority]
        if msg.expiry and msg.expiry <= now:
            return  # dropped when met, like any other
        c = self._pick(msg)
        if c is not None and bucket and bucket[-1] is msg:
            bucket.pop()
            self._count -= 1
            self._bytes -= msg.mem
            self._dispatching = True
            try:
                c.deliver(msg)
            finally:
                self._dispatching = False

    def _pick(self, msg: BrokerMessage) -> Consumer | None:
        """The next consumer round-robin that has credit and takes ``msg`` (moves the turn on)."""
        consumers = self.consumers
        n = len(consumers)
        rr = self._rr
        for k in range(n):
            i = (rr + k) % n
            c = consumers[i]
            if c.credit() <= 0:
                continue
            if c.filtered and not c.accepts(msg):
                continue
            self._rr = (i + 1) % n
            return c
        return None

    def _any_credit(self) -> bool:
        return any(c.credit() > 0 for c in self.consumers)

    def _page_in(self) -> None:
        spill = self._spill
        if spill is None or not spill.count or self._extracting:
            return
        budget = max(1, (self.memory_limit // 2 - self._bytes))
        n = max(100, min(5000, budget // max(1, 300)))
        for msg in spill.take(n, budget):
            self._buckets[msg.priority].append(msg)
            self._count += 1
            self._bytes += msg.mem

    def release(self, msg: BrokerMessage) -> None:
        """Put an acquired message back at the front of its priority (redelivery comes first),
        after those released before it that were older: releasing several one by one (a client
        giving back its prefetch) keeps their order."""
        bucket = self._buckets[msg.priority]
        i, limit = 0, min(len(bucket), _RELEASE_SCAN)
        while i < limit and bucket[i].seq < msg.seq:
            i += 1
        if i == _RELEASE_SCAN:
            i = 0  # not among the first few: to the very front, as a redelivery
        if i == 0:
            bucket.appendleft(msg)
        else:
            bucket.insert(i, msg)
        self._count += 1
        self._bytes += msg.mem
        if self.consumers:
            self.dispatch()

    def release_all(self, msgs: list[BrokerMessage]) -> None:
        """Put several back, keeping their original order among themselves."""
        for msg in sorted(msgs, key=lambda m: m.seq, reverse=True):
            self._buckets[msg.priority].appendleft(msg)
            self._count += 1
            self._bytes += msg.mem
        if self.consumers:
            self.dispatch()

    def promote_due(self) -> float:
        """Move delayed messages that are now due into the queue; returns the next due time."""
        now = self._clock()
        moved = False
        while self._delayed and self._delayed[0][0] <= now:
            _, _, msg = heapq.heappop(self._delayed)
            self._buckets[msg.priority].append(msg)
            self._count += 1
            self._bytes += msg.mem
            moved = True
        if moved and self.consumers:
            self.dispatch()
        return self._delayed[0][0] if self._delayed else 0.0

    # -- consumers -----------------------------------------------------------------------------
    def add_consumer(self, c: Consumer) -> None:
        self.consumers.append(c)
        self._settled = False

    def remove_consumer(self, c: Consumer) -> None:
        try:
            self.consumers.remove(c)
        except ValueError:
            pass

    def when_scanned(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once every message has been offered: now, or when the sliced scan under way
        ends. A drain must wait for that: until then a matching message may lie further on."""
        if self._cursor is None:
            fn()
        else:
            self._after_scan.append(fn)

    def _scan_ended(self) -> None:
        waiting, self._after_scan = self._after_scan, []
        for fn in waiting:
            fn()

    def dispatch(self) -> None:
        """Hand available messages to consumers with credit, round-robin.

        Called when anything but a plain arrival changed (credit, consumers, a release): the
        queue is scanned again from the head.
        """
        self._settled = False
        self._cursor = None
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        if self._dispatching:
            return
        self._dispatching = True
        try:
            consumers = self.consumers
            if self._spill is not None and self._spill.count and self._bytes < self.memory_limit // 2:
                self._page_in()
            if any(c.filtered for c in consumers):
                self._scan(9, 0)
                return
            if len(consumers) == 1:
                c = consumers[0]
                while self._count and c.credit() > 0:
                    msg = self._take(c)
                    if msg is None:
                        break
                    c.deliver(msg)
                    if not self._count and self._spill is not None and self._spill.count:
                        self._page_in()
                return
            progressed = True
            while progressed and consumers:
                if not self._count:
                    self._page_in()
                    if not self._count:
                        break
                progressed = False
                n = len(consumers)
                for i in range(n):
                    if not self._count:
                        break
                    c = consumers[(self._rr + i) % n]
                    if c.credit() <= 0:
                        continue
                    msg = self._take(c)
                    if msg is None:
                        continue
                    c.deliver(msg)
                    progressed = True
                self._rr = (self._rr + 1) % max(1, len(consumers))
            self._settled = True
        finally:
            self._dispatching = False

    def _scan(self, p: int, i: int) -> None:
        """One pass from bucket ``p`` index ``i`` down, offering each message once (see module doc)."""
        spill = self._spill
        fresh = p == 9 and i == 0
        if fresh and spill is not None and spill.count and spill.top_priority() > self._top_priority():
            self._page_in()  # a paged message outranks all of memory
        budget = SCAN_SLICE
        now = self._clock()
        deadline = time.perf_counter() + self.scan_seconds
        buckets = self._buckets
        while True:
            while p >= 0:
                bucket = buckets[p]
                while i < len(bucket):
                    if budget <= 0 and self._defer(p, i):
                        return
                    msg = bucket[i]
                    if msg.expiry and msg.expiry <= now:
                        del bucket[i]
                        self._count -= 1
                        self._bytes -= msg.mem
                        self._drop(msg)
                        continue
                    budget -= 1
                    if time.perf_counter() > deadline:
                        budget = 0  # slow selectors: yield after this one (time, not only count)
                    c = self._pick(msg)
                    if c is None:
                        if not self._any_credit():
                            self._settled = True
                            self._scan_ended()
                            return
                        i += 1
                        continue
                    del bucket[i]
                    self._count -= 1
                    self._bytes -= msg.mem
                    c.deliver(msg)
                p -= 1
                i = 0
            spill = self._spill
            if self._count or spill is None or not spill.count or not self._any_credit() or self._extracting:
                break
            self._page_in()  # memory is empty and credit is left: go on with the paged part
            p, i = 9, 0
        self._settled = True
        self._scan_ended()

    def _defer(self, p: int, i: int) -> bool:
        """Yield to the loop and resume the scan at ``(p, i)``; False when there is no loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._cursor = (p, i)
        self._resume = loop.call_soon(self._continue)
        return True

    def _continue(self) -> None:
        self._resume = None
        cursor = self._cursor
        if cursor is None or self._dispatching:
            return
        self._cursor = None
        if not self.consumers:
            self._scan_ended()
            return
        self._dispatching = True
        try:
            self._scan(*cursor)
        finally:
            self._dispatching = False

    def _take(self, c: Consumer) -> BrokerMessage | None:
        spill = self._spill
        if spill is not None and spill.count and spill.top_priority() > self._top_priority():
            # a paged message outranks all of memory: priority order holds across memory and disk
            self._page_in()
        now = self._clock()
        filtered = c.filtered
        for p in range(9, -1, -1):
            bucket = self._buckets[p]
            if not bucket:
                continue
            if not filtered:
                while bucket:
                    msg = bucket.popleft()
                    self._count -= 1
                    self._bytes -= msg.mem
                    if msg.expiry and msg.expiry <= now:
                        self._drop(msg)
                        continue
                    return msg
                continue
            for msg in list(bucket):
                if msg.expiry and msg.expiry <= now:
                    bucket.remove(msg)
                    self._count -= 1
                    self._bytes -= msg.mem
                    self._drop(msg)
                    continue
                if c.accepts(msg):
                    bucket.remove(msg)
                    self._count -= 1
                    self._bytes -= msg.mem
                    return msg
        return None

    def _drop(self, msg: BrokerMessage) -> None:
        if self._on_drop is not None:
            self._on_drop(self, msg)

    def _top_priority(self) -> int:
        for p in range(9, -1, -1):
            if self._buckets[p]:
                return p
        return -1

    # -- management (``extract.py`` walks the queue with these) ----------------------------------
    def bucket(self, priority: int) -> deque[BrokerMessage]:
        """The in-memory messages of one priority, in delivery order (read it, never change it)."""
        return self._buckets[priority]

    @property
    def spill(self) -> Spill | None:
        return self._spill

    def remove_picked(self, priority: int, picks: list[int]) -> list[BrokerMessage]:
        """Take the messages at the ascending indices ``picks`` of a priority out of the queue, in
        one pass over that stretch of the bucket (a purge or a move; deleting them one by one
        from the middle of a deep bucket would cost its length each)."""
        if not picks:
            return []
        bucket = self._buckets[priority]
        start, end = picks[0], picks[-1] + 1
        bucket.rotate(-start)
        window = [bucket.popleft() for _ in range(end - start)]
        chosen = {i - start for i in picks}
        taken = [m for j, m in enumerate(window) if j in chosen]
        bucket.extendleft(reversed([m for j, m in enumerate(window) if j not in chosen]))
        bucket.rotate(start)
        self._count -= len(taken)
        self._bytes -= sum(m.mem for m in taken)
        cursor = self._cursor
        if cursor is not None and cursor[0] == priority:  # a sliced scan keeps its place
            self._cursor = (priority, cursor[1] - sum(1 for i in picks if i < cursor[1]))
        return taken

    def drop_expired(self, msg: BrokerMessage) -> None:
        """An expired message met by a management walk, already removed: counted as expired."""
        self._drop(msg)

    def take_delayed(self, n: int) -> list[BrokerMessage]:
        """Up to ``n`` messages waiting for their delivery time, taken out (a purge)."""
        out: list[BrokerMessage] = []
        while self._delayed and len(out) < n:
            out.append(heapq.heappop(self._delayed)[2])
        return out

    def paging_paused(self, paused: bool) -> None:
        """While a management walk runs, paged messages stay on disk (the walk reads them there,
        and one paged in behind it would be missed); afterwards consumers get them again."""
        self._extracting += 1 if paused else -1
        if not self._extracting and self.consumers:
            self.dispatch()

    # -- inspection ----------------------------------------------------------------------------
    def browse(self) -> Iterator[BrokerMessage]:
        """The messages available now, in delivery order, unexpired, for a browser.

        Each priority is memory, then disk (within one priority every paged message is newer
        than the in-memory ones). The in-memory part is taken as references when the browser
        starts; the paged part is read back as copies a page at a time as the browser's credit
        asks for more, up to the newest message at the start (a deep queue is never read whole).
        """
        return self._browse(next_seq(), [list(self._buckets[p]) for p in range(10)])

    def _browse(self, upto: int, memory: list[list[BrokerMessage]]) -> Iterator[BrokerMessage]:
        for p in range(9, -1, -1):
            for m in memory[p]:
                if not m.expired(self._clock()):
                    yield m
            memory[p] = []
            spill = self._spill
            if spill is not None and spill.count:
                for m in spill.browse(p, upto):
                    if not m.expired(self._clock()):
                        yield m

    def __iter__(self) -> Iterator[BrokerMessage]:
        for p in range(9, -1, -1):
            yield from self._buckets[p]
        for _, _, m in self._delayed:
            yield m

    def close(self) -> None:
        """Broker stopping: drop the page file (durable messages are in the store anyway)."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def purge(self) -> list[BrokerMessage]:
        """Remove and return every message (available and delayed)."""
        out = list(self)
        if self._spill is not None:
            out.extend(self._spill.drain())
            self._spill.close()
            self._spill = None
        for b in self._buckets:
            b.clear()
        self._delayed.clear()
        self._count = 0
        self._bytes = 0
        return out
