"""Taking messages out of a queue for the management node (purge, move), a slice at a time.

A purge or a move of a deep queue must not hold the event loop: :class:`Extraction` walks the
queue in steps that each look at no more than ``STEP_MESSAGES`` messages or spend no more than
the selector budget, and the caller yields to the loop between steps. What it walks is fixed when
it starts: only messages already there (``seq <= upto``), so producers sending meanwhile cannot
make a purge endless. Per priority it walks memory, then that priority's paged part on disk, which
keeps the order messages would have been delivered in; paging in is paused while it runs (a
message paged in behind the walk would be missed) and resumes when it ends.

Messages a consumer holds (delivered, not yet settled) are not in the queue and are not taken;
a message a consumer takes meanwhile is simply no longer there. Expired messages met on the way
are dropped as expiry drops them. The walk knows nothing of AMQP: what becomes of a taken message
(deleted, published elsewhere) is the caller's business, done in the same step, so nothing is
ever held between steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import Enum

from ..storage.message import BrokerMessage, next_seq
from .queue import MessageQueue

__all__ = ["STEP_MESSAGES", "Extraction"]

STEP_MESSAGES = 2000  # messages one step looks at, at most (a selector's time budget may stop it sooner)
_PAGED_BATCH = 200  # paged messages read back from disk at a time


class _Phase(Enum):
    MEMORY = 1
    PAGED = 2
    DELAYED = 3
    DONE = 4


Predicate = Callable[[BrokerMessage], bool]


class Extraction:
    """One purge or move under way on one queue."""

    def __init__(
        self,
        queue: MessageQueue,
        *,
        pred: Predicate | None = None,
        limit: int = 0,
        delayed: bool = False,
        seconds: float = 0.02,
    ) -> None:
        self.queue = queue
        self.pred = pred
        self.limit = limit  # messages to take at most (0: every one that qualifies)
        self.delayed = delayed  # a purge takes scheduled (not yet due) messages too
        self.seconds = seconds  # time budget of one step
        self.upto = next_seq()  # only what was there when it began
        self.taken = 0
        self._priority = 9
        self._phase = _Phase.MEMORY
        self._kept = 0  # the bucket's index to look at next (those before it: looked at)
        self._picks: list[int] = []  # indices picked this step, removed together at its end
        self._expired: set[int] = set()  # ids of picked messages that had expired
        self._last_kept: BrokerMessage | None = None
        self._paged_after = -1
        self._paused = False

    @property
    def done(self) -> bool:
        return self._phase is _Phase.DONE

    def step(self, now: float) -> list[BrokerMessage]:
        """Take the next slice of qualifying messages out of the queue (empty when done)."""
        if self._phase is _Phase.DONE:
            return []
        if not self._paused:
            self._paused = True
            self.queue.paging_paused(True)
        out: list[BrokerMessage] = []
        deadline = time.perf_counter() + self.seconds
        looked = 0
        self._find_place()
        while self._phase is not _Phase.DONE:
            if self.limit and self.taken >= self.limit:
                out.extend(self._flush())  # before paging resumes and the bucket moves
                self._finish()
                break
            if looked >= STEP_MESSAGES or (looked & 63 == 63 and time.perf_counter() > deadline):
                break
            if self._phase is _Phase.MEMORY:
                looked += 1
                self._memory_one(now, out)
            elif self._phase is _Phase.PAGED:
                looked += _PAGED_BATCH
                self._paged_batch(now, out)
            else:
                want = STEP_MESSAGES if not self.limit else min(STEP_MESSAGES, self.limit - self.taken)
                batch = self.queue.take_delayed(want)
                looked += STEP_MESSAGES
                out.extend(batch)
                self.taken += len(batch)
                if len(batch) < want:
                    self._finish()
        out.extend(self._flush())
        return out

    def close(self) -> None:
        """End the walk early (or after the last step): paging resumes."""
        self._finish()

    # -- the walk ------------------------------------------------------------------------------
    def _find_place(self) -> None:
        """Between steps consumers and releases shift the bucket: find the last message kept."""
        if self._phase is not _Phase.MEMORY or not self._kept:
            return
        bucket = self.queue.bucket(self._priority)
        i = self._kept
        if i <= len(bucket) and bucket[i - 1] is self._last_kept:
            return
        try:
            self._kept = bucket.index(self._last_kept) + 1  # type: ignore[arg-type]
        except ValueError:  # it left the queue: look again from the head (refused again, at worst)
            self._kept = 0

    def _qualifies(self, msg: BrokerMessage) -> bool:
        if msg.seq > self.upto:
            return False
        pred = self.pred
        if pred is None:
            return True
        try:
            return bool(pred(msg))
        except Exception:  # a selector that cannot evaluate on this message: it does not match
            return False

    def _memory_one(self, now: float, out: list[BrokerMessage]) -> None:
        """Look at the next message of the bucket: picked (removed at the step's end) or kept."""
        bucket = self.queue.bucket(self._priority)
        i = self._kept
        if i >= len(bucket):
            out.extend(self._flush())
            self._phase = _Phase.PAGED
            self._paged_after = -1
            return
        msg = bucket[i]
        self._kept = i + 1
        if msg.expiry and msg.expiry <= now:
            self._picks.append(i)
            self._expired.add(id(msg))
        elif self._qualifies(msg):
            self._picks.append(i)
            self.taken += 1
        else:
            self._last_kept = msg

    def _flush(self) -> list[BrokerMessage]:
        """Remove this step's picks from the bucket at once; the taken ones (not the expired)."""
        picks, self._picks = self._picks, []
        if not picks:
            return []
        q = self.queue
        removed = q.remove_picked(self._priority, picks)
        self._kept -= len(picks)
        expired, self._expired = self._expired, set()
        if not expired:
            return removed
        for m in removed:
            if id(m) in expired:
                q.drop_expired(m)
        return [m for m in removed if id(m) not in expired]

    def _paged_batch(self, now: float, out: list[BrokerMessage]) -> None:
        spill = self.queue.spill
        if spill is None or not spill.count:
            self._next_priority()
            return
        n = _PAGED_BATCH if not self.limit else min(_PAGED_BATCH, self.limit - self.taken)

        def wanted(m: BrokerMessage) -> bool:
            return not m.expired(now) and self._qualifies(m)

        taken, last = spill.take_matching(self._priority, self._paged_after, self.upto, n, wanted)
        out.extend(taken)
        self.taken += len(taken)
        if last is None:
            self._next_priority()
        else:
            self._paged_after = last

    def _next_priority(self) -> None:
        self._priority -= 1
        self._kept = 0
        self._last_kept = None
        if self._priority >= 0:
            self._phase = _Phase.MEMORY
        elif self.delayed:
            self._phase = _Phase.DELAYED
        else:
            self._finish()

    def _finish(self) -> None:
        self._phase = _Phase.DONE
        self._last_kept = None
        if self._paused:
            self._paused = False
            self.queue.paging_paused(False)
