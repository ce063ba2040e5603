"""Local transactions (AMQP 1.0 part 4): the coordinator's declare/discharge and their effects.

A transaction buffers two things until discharge: messages published under it (routed only on
commit) and outcomes of messages acquired under it (applied on commit; on rollback the messages
go back to their queues with delivery-count + 1). The store sees a commit as one batch.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from ..storage.message import BrokerMessage
from .dead_letter import Cause, Failure
from .nodes import Router
from .queue import MessageQueue
from .txn_outcomes import TxnOutcomes

__all__ = ["Outcome", "Transaction", "TransactionManager"]

ACCEPTED = 0x24
REJECTED = 0x25
RELEASED = 0x26
MODIFIED = 0x27


@dataclass(slots=True, frozen=True)
class Outcome:
    """A disposition of an acquired message, held until the transaction ends."""

    code: int
    failed: bool = False
    undeliverable: bool = False
    error: tuple[Any, Any] | None = None  # a rejected outcome's (condition, description)


@dataclass(eq=False)
class Transaction:
    txn_id: bytes
    owner: int  # connection id
    controller: int | None = None  # the coordinator link it was declared on (its address)
    user: str = ""  # who declared it ("" = anonymous): only they may ask what became of it
    publishes: list[tuple[str, BrokerMessage]] = field(default_factory=list)
    acks: list[tuple[MessageQueue, BrokerMessage, Outcome]] = field(default_factory=list)
    #: why a send of this transaction was refused: its commit must then roll back, or the client
    #: (whose transacted sends do not wait for their outcome) would hear "committed" for a
    #: transaction that lost a message
    refused: str | None = None


class TransactionManager:
    """Every open transaction of the broker, by id."""

    def __init__(self, router: Router, outcomes: TxnOutcomes | None = None) -> None:
        self.router = router
        #: commits kept for a client to ask about (``txn_outcomes.py``); None: ids are not kept
        self.outcomes = outcomes
        self.open: dict[bytes, Transaction] = {}
        self._per_owner: dict[int, int] = {}  # open transactions by connection (for its limit)
        self._ids = itertools.count(1)
        # heap bytes of sends held for a commit, by address: the flow gate counts them where
        # they will go, so a transaction that never commits is bounded like any producer
        self.pending: dict[str, int] = {}
        self.pending_total = 0

    def publish(self, txn: Transaction, address: str, msg: BrokerMessage) -> None:
        """A send under ``txn``: held until the commit."""
        txn.publishes.append((address, msg))
        self.pending[address] = self.pending.get(address, 0) + msg.mem
        self.pending_total += msg.mem

    def declare(self, owner: int, controller: int | None = None, user: str = "") -> Transaction:
        """A new transaction of connection ``owner``, declared on coordinator link ``controller``."""
        outcomes = self.outcomes
        txn_id = outcomes.new_id() if outcomes is not None else f"txn:{next(self._ids)}".encode()
        txn = Transaction(txn_id, owner, controller=controller, user=user)
        self.open[txn.txn_id] = txn
        self._per_owner[owner] = self._per_owner.get(owner, 0) + 1
        return txn

    def open_count(self, owner: int) -> int:
        """Transactions connection ``owner`` has declared and not discharged."""
        return self._per_owner.get(owner, 0)

    def get(self, txn_id: object) -> Transaction | None:
        if isinstance(txn_id, memoryview):
            txn_id = bytes(txn_id)
        if not isinstance(txn_id, bytes):
            return None
        return self.open.get(txn_id)

    def discharge(self, txn: Transaction, *, fail: bool) -> None:
        """Commit (``fail=False``) or roll back, and forget the transaction."""
        if self.open.pop(txn.txn_id, None) is not None:
            left = self._per_owner[txn.owner] - 1
            if left:
                self._per_owner[txn.owner] = left
            else:
                del self._per_owner[txn.owner]
        pending = self.pending
        for address, msg in txn.publishes:
            left = pending[address] - msg.mem
            if left:
                pending[address] = left
            else:
                del pending[address]
            self.pending_total -= msg.mem
        if fail:
            self._rollback(txn)
        else:
            self._commit(txn)
            if self.outcomes is not None:
                self.outcomes.committed(txn.txn_id, txn.user)

    def outcome(self, txn_id: bytes, user: str) -> bool | None:
        """What became of a transaction that is not open (``TxnOutcomes.outcome``)."""
        return self.outcomes.outcome(txn_id, user) if self.outcomes is not None else None

    def rollback_controlled_by(self, owner: int, controller: int) -> None:
        """A coordinator link detached, or its session ended: its open transaction rolls back.

        AMQP 1.0 ties a transaction to its controller; clients (Qpid JMS) discharge before
        closing a session, but one that does not must not keep messages locked until the
        connection closes.
        """
        for txn in [t for t in self.open.values() if t.owner == owner and t.controller == controller]:
            self.discharge(txn, fail=True)

    def rollback_owned_by(self, owner: int) -> None:
        """A connection went away: its open transactions roll back."""
        for txn in [t for t in self.open.values() if t.owner == owner]:
            self.discharge(txn, fail=True)

    def _commit(self, txn: Transaction) -> None:
        r = self.router
        for address, msg in txn.publishes:
            r.publish(address, msg)
        accepted: dict[int, tuple[MessageQueue, list[BrokerMessage]]] = {}
        for q, msg, out in txn.acks:
            if out.code == ACCEPTED:  # the common case: gone, in bulk per queue below
                accepted.setdefault(id(q), (q, []))[1].append(msg)
            elif out.code == REJECTED:
                r.dead_letter(q, msg, Cause.rejected(*(out.error or (None, None)), transactional=True))
            elif out.code == MODIFIED and out.undeliverable and not out.failed:
                r.released(q, msg, failed=False)
            else:
                how = Failure.UNDELIVERABLE if out.undeliverable else Failure.MODIFIED
                r.released(q, msg, failed=out.code == MODIFIED and out.failed, how=how)
        for q, msgs in accepted.values():
            r.consumed_many(q, msgs)

    def _rollback(self, txn: Transaction) -> None:
        by_queue: dict[int, tuple[MessageQueue, list[BrokerMessage]]] = {}
        for q, msg, _ in txn.acks:
            by_queue.setdefault(id(q), (q, []))[1].append(msg)
        for q, msgs in by_queue.values():
            self.router.released_many(q, msgs, failed=True, how=Failure.ROLLBACK)
