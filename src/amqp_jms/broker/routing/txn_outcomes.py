"""What became of discharged transactions, kept a while so that a client can ask (issue 26).

A client whose Discharge lost its answer (the connection dropped, the broker crashed) cannot
tell a commit from a rollback; Qpid JMS guesses "rolled back", and an application that then
sends its batch again sends it twice. The broker keeps the outcome so the client can ask:

* Only commits are written down, each inside its commit's store batch: after a crash the
  record exists exactly when the commit's effects do.
* A transaction id names the store, the broker's start and a number (``<store>.<start>.<n>``),
  so no id is ever made twice, and an id from another broker's store is told apart.
* An id of this store that is neither open nor recorded, and not older than what was forgotten,
  was never committed: rolled back by the client, with its connection, or by a crash.
* At most ``max_txn_outcomes`` records are kept, none older than ``txn_outcome_seconds``; the
  oldest go first, and everything up to the newest one forgotten is then "unknown".

How a client asks is the coordinator's business (``protocol/transfers.py``): the coordinator
offers the capability ``amqp-jms:txn-outcomes`` and answers a Discharge of a transaction that
is no longer open from what is kept here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ..limits import BrokerLimits
from ..storage.store import Store

__all__ = ["STORE_ID_PROPERTY", "TXN_OUTCOMES_CAPABILITY", "TxnOutcomes"]

#: offered in the coordinator's capabilities: a Discharge of a transaction that is no longer
#: open is answered from what the broker kept (accepted: committed; rejected
#: ``amqp:transaction:rollback``: it was not; ``amqp:transaction:unknown-id``: cannot tell)
TXN_OUTCOMES_CAPABILITY = "amqp-jms:txn-outcomes"
#: the Open property naming the broker's store (when its coordinator offers the capability): a
#: client asks only a broker with the store that gave the transaction its id
STORE_ID_PROPERTY = "amqp-jms:store-id"

Key = tuple[int, int]  # (the broker's start, the transaction's number in it)


class TxnOutcomes:
    """The committed transactions the broker remembers, and the ids it makes."""

    def __init__(self, store: Store, limits: BrokerLimits, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self.keep = limits.max_txn_outcomes
        self.seconds = limits.txn_outcome_seconds
        self.store_id, self.epoch = store.identity()
        rows, self.below = store.load_txn_outcomes()
        #: (start, n) -> (when, user), oldest first (insertion order)
        self._kept: dict[Key, tuple[float, str]] = {(e, n): (at, user) for e, n, at, user in rows}
        self._numbers = itertools.count(1)
        self._last = 0  # the last number given in this start
        self._prefix = f"{self.store_id}.".encode()
        self.prune()

    @property
    def offered(self) -> bool:
        """Whether clients may ask (``max_txn_outcomes`` > 0)."""
        return self.keep > 0

    def new_id(self) -> bytes:
        self._last = next(self._numbers)
        return f"{self.store_id}.{self.epoch}.{self._last}".encode()

    def key_of(self, txn_id: bytes) -> Key | None:
        """``txn_id``'s (start, number), or None if this store did not make it."""
        if not txn_id.startswith(self._prefix):
            return None
        try:
            epoch, n = (int(part) for part in txn_id[len(self._prefix):].split(b"."))
        except ValueError:
            return None
        return epoch, n

    def committed(self, txn_id: bytes, user: str) -> None:
        """Called inside the commit's store batch."""
        key = self.key_of(txn_id)
        if not self.keep or key is None:
            return
        at = self.clock()
        self._kept[key] = (at, user)
        self.store.txn_committed(key, at, user)
        self.prune()

    def prune(self) -> None:
        """Forget beyond ``max_txn_outcomes`` and older than ``txn_outcome_seconds``."""
        kept = self._kept
        oldest = self.clock() - self.seconds
        gone: list[Key] = []
        while kept:
            key, (at, _) = next(iter(kept.items()))
            if len(kept) <= self.keep and at >= oldest:
                break
            del kept[key]
            gone.append(key)
        if gone:
            top = max(gone)
            self.below = max(self.below, (top[0], top[1] + 1))
            self.store.txn_forgotten(gone, self.below)

    def outcome(self, txn_id: bytes, user: str) -> bool | None:
        """Of a transaction that is not open: True committed, False never committed (rolled
        back), None cannot tell (not this store's id, forgotten, never made, another user's)."""
        if not self.keep:
            return None
        self.prune()
        key = self.key_of(txn_id)
        if key is None:
            return None
        record = self._kept.get(key)
        if record is not None:
            return True if record[1] == user else None
        if key < self.below or key > (self.epoch, self._last):
            return None
        return False
