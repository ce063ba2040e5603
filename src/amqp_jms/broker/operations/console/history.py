"""Message rates and their recent history, from the broker's own counters.

The console samples the metrics snapshot (the same one ``/metrics`` exports) at most every
``interval`` seconds and keeps, per queue, the last ``points`` samples of depth and of the
enqueued/dequeued totals; a rate is the difference of two samples over their time apart. Memory
is bounded: ``points`` samples of at most ``max_queues`` queues (the least recently seen
dropped first).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass

from ..metrics import MetricsSnapshot

__all__ = ["History", "Sample"]


@dataclass(frozen=True, slots=True)
class Sample:
    at: float
    depth: int
    enqueued: int
    dequeued: int
    dead_lettered: int


class History:
    def __init__(self, points: int = 60, max_queues: int = 2000) -> None:
        self.points = points
        self.max_queues = max_queues
        self._queues: OrderedDict[str, deque[Sample]] = OrderedDict()
        self.last: MetricsSnapshot | None = None

    def add(self, snap: MetricsSnapshot) -> None:
        self.last = snap
        for q in snap.queues:
            samples = self._queues.pop(q.queue, None) or deque(maxlen=self.points)
            samples.append(Sample(snap.taken_at, q.depth, q.enqueued, q.dequeued, q.dead_lettered))
            self._queues[q.queue] = samples
        while len(self._queues) > self.max_queues:
            self._queues.popitem(last=False)

    def samples(self, queue: str) -> list[Sample]:
        return list(self._queues.get(queue, ()))

    def rates(self, queue: str) -> tuple[float, float]:
        """Messages per second in and out over the last two samples (0 with fewer)."""
        s = self._queues.get(queue)
        if not s or len(s) < 2:
            return 0.0, 0.0
        a, b = s[-2], s[-1]
        dt = b.at - a.at
        if dt <= 0:
            return 0.0, 0.0
        return max(0.0, (b.enqueued - a.enqueued) / dt), max(0.0, (b.dequeued - a.dequeued) / dt)

    def totals(self) -> tuple[float, float]:
        """Broker-wide rates in and out."""
        ins = outs = 0.0
        for name in self._queues:
            i, o = self.rates(name)
            ins += i
            outs += o
        return ins, outs
