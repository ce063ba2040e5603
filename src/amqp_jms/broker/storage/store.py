"""Where durable state goes: the interface, and the in-memory broker's no-op store.

The router calls ``add``/``remove``/``update_count`` as messages move and ``save_queue``/
``delete_queue`` as durable nodes come and go; none of these may block the event loop. A caller
that must not answer before the data is on disk (an unsettled durable send, a commit) asks for
``barrier()``: a future that completes once everything submitted so far is committed.
``begin_batch``/``end_batch`` bracket changes that must commit together (a transaction).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from .message import BrokerMessage

__all__ = ["MemoryStore", "Store"]


class Store:
    """Base class: persistence hooks (all no-ops here) and what ``load`` recovers."""

    persistent = False

    def add(self, queue: str, msg: BrokerMessage) -> None:
        return None

    def remove(self, queue: str, msg: BrokerMessage) -> None:
        return None

    def remove_many(self, queue: str, msgs: list[BrokerMessage]) -> None:
        """``remove`` for several messages of one queue (a transaction's accepts)."""
        for msg in msgs:
            self.remove(queue, msg)

    def update_count(self, queue: str, msg: BrokerMessage) -> None:
        return None

    def mark_delivered(self, queue: str, msg: BrokerMessage) -> None:
        """``msg`` is being sent to a consumer: store its count as one more delivery, so that
        after a crash it comes back redelivered (never lowers a stored count)."""
        return None

    def save_queue(self, name: str, kind: str, meta: dict[str, Any] | None) -> None:
        return None

    def delete_queue(self, name: str) -> None:
        return None

    def barrier(self) -> asyncio.Future[None] | None:
        """A future done when all submitted changes are durable (``None``: nothing to wait for)."""
        return None

    def begin_batch(self) -> None:
        return None

    def end_batch(self) -> asyncio.Future[None] | None:
        return None

    def load(self) -> tuple[list[tuple[str, str, dict[str, Any] | None]], list[tuple[str, BrokerMessage]]]:
        """(queue definitions, (queue name, message) in order) recovered at start."""
        return [], []

    # -- outcomes of committed transactions (routing/txn_outcomes.py) ------------------------
    def identity(self) -> tuple[str, int]:
        """(an id made once with the store, this start's number): transaction ids made of both
        are never reused, and a client can tell this broker's store from any other. Here the
        store lives as long as the process: a new id each time."""
        ident: tuple[str, int] | None = getattr(self, "_identity", None)
        if ident is None:
            ident = self._identity = (uuid.uuid4().hex[:16], 1)
        return ident

    def load_txn_outcomes(self) -> tuple[list[tuple[int, int, float, str]], tuple[int, int]]:
        """The committed transactions kept, as (start, number, when, user) oldest first, and
        the (start, number) below which outcomes were forgotten."""
        return [], (0, 0)

    def txn_committed(self, key: tuple[int, int], at: float, user: str) -> None:
        """Transaction ``key`` committed (called inside the commit's batch: stored with it)."""
        return None

    def txn_forgotten(self, keys: list[tuple[int, int]], below: tuple[int, int]) -> None:
        """These outcomes are dropped; nothing below ``below`` is known any more."""
        return None

    def close(self) -> None:
        return None


class MemoryStore(Store):
    """``data_dir=None``: nothing survives a restart."""
