"""The ``jms`` source and sink with a ``failover:`` URL: who reconnects, and what a loss voids.

One policy owns reconnecting. With a plain ``amqp://`` URL the streaming receiver reconnects
itself (``reconnectTimeoutMs``) and a write task that loses its connection fails (Spark retries
the task). With ``failover:(amqp://a,amqp://b)?failover.*`` the client's failover provider
reconnects (``failover.maxReconnectAttempts`` and its delays) under a connection that stays
open; the receiver then never reconnects on its own, and fails the query only when failover
gives up. What a failover voids, and how the connector keeps "nothing lost, no silent
redelivery":

- the receiver's accepts: the chunk it is filling goes on through the failover; the messages
  received before the loss can no longer be accepted (their acknowledgement is void, the broker
  redelivers them, flagged redelivered), so once the chunk is appended durably its
  ``acknowledge()`` accepts only what came on the new connection, and the rest come again:
  duplicates with the same ``message_id``, as after any lost accept, and never a loss.
- a write task's transaction: its sends on the lost connection are gone and ``commit`` raises
  ``TransactionRolledBackException``; the task re-sends its messages in the new transaction with
  the same message ids (``writer.py``), so a commit that was in doubt (the broker had
  committed) leaves duplicates with the same ``message_id`` only.
"""

from __future__ import annotations

from typing import Any

from .._logs import SPARK
from ..provider.failover.uri import OPTION_NAMES, is_failover_url, with_client_options

__all__ = [
    "FAILOVER_OPTION_NAMES",
    "PROBE_OPTIONS",
    "LossLog",
    "append_client_options",
    "is_failover_url",
]

#: ``failover.*`` option names in their documented spelling (Spark lower-cases option keys).
FAILOVER_OPTION_NAMES = OPTION_NAMES
#: The planning-time connection check makes one pass over the servers, not the provider's
#: default of trying forever: an unreachable broker fails the query when it is planned.
PROBE_OPTIONS = {"failover.startupMaxReconnectAttempts": "1"}
#: the source's client options appended to a failover url (the one rule for it, shared with the CLI)
append_client_options = with_client_options


class LossLog:
    """A connection listener that counts and logs the failovers under a receiver (the receiver's
    own reconnect does that for a plain url); called on a thread of the connection's."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats

    def on_connection_interrupted(self, uri: str) -> None:
        self.stats.reconnects += 1
        SPARK.warning(
            "jms receiver: connection to %s lost; failover reconnects (un-accepted messages, and "
            "those of a chunk whose accept the loss voids, come again with the same message_id)",
            uri,
        )

    def on_connection_restored(self, uri: str) -> None:
        SPARK.warning("jms receiver: failover reconnected to %s", uri)
