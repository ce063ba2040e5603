"""Producer flow control: the address-full policy (PAGE / BLOCK / FAIL) and the broker-wide
memory and store limits, applied by withholding link credit (as Artemis does).

A producer link's credit is topped up every half window; :meth:`FlowGate.admits` is asked then,
not per message, so the check costs nothing on the per-message path. A link refused credit waits
in ``blocked`` and is given its credit back by a timer once consumers have made room. Under
``FAIL`` a send to a full queue is rejected instead (``amqp:resource-limit-exceeded``), which the
JMS client reports as a ``SendFailedException``. The anonymous relay is gated by the addresses
it sent to lately, a transaction's producer like any other (its sends are refused under ``FAIL``
when made, not at commit).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..limits import AddressFullPolicy, BrokerLimits
from .queue import MessageQueue

if TYPE_CHECKING:
    from .nodes import Router
    from .transactions import TransactionManager

__all__ = ["FlowGate"]

_RETRY = 0.05  # seconds between checks while producers are blocked


class FlowGate:
    def __init__(
        self, router: Router, limits: BrokerLimits, loop: asyncio.AbstractEventLoop, txns: TransactionManager
    ) -> None:
        self.router = router
        self.txns = txns  # its bytes held for a commit count as queued where they will go
        self.limits = limits
        self.loop = loop
        self.policy = limits.address_full_policy
        self.blocked: list[tuple[Any, Any]] = []  # (connection, IncomingLink) waiting for credit
        self._timer: asyncio.TimerHandle | None = None
        self._totals_cache = (0, 0)
        self._totals_at = float("-inf")

    # -- measuring -----------------------------------------------------------------------------
    def _queues_of(self, address: str | None) -> Iterator[MessageQueue]:
        router = self.router
        if address is None:
            return
        q = router.queues.get(address)
        if q is not None:
            yield q
        topic = router.topics.get(address)
        if topic is not None:
            for sub in topic.subscriptions:
                yield sub.queue

    def _all_queues(self) -> Iterator[MessageQueue]:
        yield from self.router.queues.values()
        for topic in self.router.topics.values():
            for sub in topic.subscriptions:
                yield sub.queue

    def _queue_full(self, q: MessageQueue, held: int) -> bool:
        """``held``: bytes of uncommitted sends to the queue's address."""
        limit = self.limits.queue_memory_limit
        return bool(limit) and (q.byte_size + held >= limit or q.paged > 0)

    def refusal(self, address: str | None) -> str | None:
        """Why a producer to ``address`` may not be given more credit now (None: it may)."""
        lim = self.limits
        if self.policy is AddressFullPolicy.BLOCK:
            held = self.txns.pending.get(address, 0) if address is not None else 0
            for q in self._queues_of(address):
                if self._queue_full(q, held):
                    return f"queue {q.name!r} is full (queue_memory_limit {lim.queue_memory_limit})"
        if lim.max_memory or lim.max_store_size:
            memory, paged = self._totals()
            if lim.max_memory and memory >= lim.max_memory:
                return f"broker memory limit reached (max_memory {lim.max_memory})"
            if lim.max_store_size and memory + paged >= lim.max_store_size:
                return f"broker store limit reached (max_store_size {lim.max_store_size})"
        return None

    def refusal_for(self, st: Any) -> str | None:
        """:meth:`refusal` for a producer link: its address, or for the anonymous relay each
        address it sent to lately (``IncomingLink.targets``)."""
        if st.address is not None or not st.targets:
            return self.refusal(st.address)
        for address in st.targets:
            why = self.refusal(address)
            if why is not None:
                return why
        return None

    def _totals(self) -> tuple[int, int]:
        """Bytes in memory (uncommitted sends included) and paged, all queues; summed at most
        once per ``_RETRY`` (with many queues and producers, every top-up would otherwise walk
        them all)."""
        now = self.loop.time()
        if now - self._totals_at >= _RETRY:
            memory, paged = self.txns.pending_total, 0
            for q in self._all_queues():
                memory += q.byte_size
                paged += q.paged_bytes
            self._totals_cache = (memory, paged)
            self._totals_at = now
        return self._totals_cache

    def rejects(self, address: str | None) -> str | None:
        """Under ``FAIL``: why a message to ``address`` is rejected (None: accept it)."""
        if self.policy is not AddressFullPolicy.FAIL:
            return None
        held = self.txns.pending.get(address, 0) if address is not None else 0
        for q in self._queues_of(address):
            if self._queue_full(q, held):
                return (f"queue {q.name!r} is full (queue_memory_limit {self.limits.queue_memory_limit}, "
                        "address-full-policy FAIL)")
        return None

    # -- blocking and unblocking ---------------------------------------------------------------
    def block(self, conn: Any, st: Any) -> None:
        st.blocked = True
        self.blocked.append((conn, st))
        if self._timer is None:
            self._timer = self.loop.call_later(_RETRY, self._retry)

    def _retry(self) -> None:
        self._timer = None
        still: list[tuple[Any, Any]] = []
        for conn, st in self.blocked:
            if conn.closed or st.closed:
                continue
            if self.refusal_for(st) is None:
                st.top_up()
                conn.dirty()
            else:
                still.append((conn, st))
        self.blocked = still
        if still:
            self._timer = self.loop.call_later(_RETRY, self._retry)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.blocked.clear()
