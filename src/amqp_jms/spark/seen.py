"""The message ids a receiver's log has taken: a redelivery of one of them is not a new row.

Why: the broker forgets a message only once its accept is stored. An accept lost with the
connection, voided by a failover, or received but not yet stored by a broker killed with -9 makes
the broker deliver the message again, though the log already holds it (and Spark may have written
it). The receiver looks each *redelivered* message (``JMSRedelivered``) up here: one the log took
is accepted again and not appended, so it never becomes a second row. A first delivery is never
looked up: a producer that reuses a message id for another message loses nothing.

What it covers: the newest :data:`SEEN_WINDOW` messages of this receiver's log, across restarts
(the ids travel in the log's ``ids-`` files, :meth:`.wal.WriteAheadLog.write_ids`). What it does
not: a message without an id (``disableMessageID``), one redelivered after more than the window
of newer messages, one whose ``ids-`` file a crash of the driver cut short, one the broker sends
back without the redelivered flag (a broker that does not keep delivery counts across its own
crash), and, with ``numReceivers`` > 1, one redelivered to another receiver than the one whose
log holds it. docs/spark.md lists these and how to de-duplicate on ``message_id``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

__all__ = ["SEEN_WINDOW", "SeenIds"]

#: How many of the newest message ids a receiver remembers (about 10 MB of memory): far more
#: than a broker sends again after a crash (what it delivered but had not stored as accepted:
#: the receiver's credit and its last segments).
SEEN_WINDOW = 100_000


class SeenIds:
    """The newest ``limit`` ids, in the order they were taken, with a set to look them up."""

    def __init__(self, limit: int = SEEN_WINDOW, ids: Iterable[str] = ()) -> None:
        self.limit = limit
        self._order: deque[str] = deque()
        self._set: set[str] = set()
        self.add_all(ids)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._set

    def __len__(self) -> int:
        return len(self._order)

    def add_all(self, ids: Iterable[str]) -> None:
        for message_id in ids:
            if message_id not in self._set:
                self._order.append(message_id)
                self._set.add(message_id)
        while len(self._order) > self.limit:
            self._set.discard(self._order.popleft())
