"""The broker's live counters: an attribute increment where the thing happens, nothing more.

Kept here, in the routing layer, because the things that count live here or above (a queue,
the core); ``operations.metrics`` reads them into snapshots and Prometheus text.
"""

from __future__ import annotations

__all__ = ["BrokerCounters", "QueueCounters"]


class QueueCounters:
    """What went through one queue since the broker started (recovered messages count as
    enqueued), so ``depth == enqueued - dequeued - expired - dead_lettered - removed`` minus what
    is being delivered."""

    __slots__ = ("dead_lettered", "dead_lettered_attempts", "dequeued", "enqueued", "expired",
                 "removed")

    def __init__(self) -> None:
        self.enqueued = 0  # entered the queue (sent, routed from a topic, dead-lettered to it)
        self.dequeued = 0  # consumed: accepted, or sent to a consumer that settles on receipt
        self.expired = 0  # dropped on reaching its expiry time
        self.dead_lettered = 0  # moved to the dead-letter queue (rejected, too many attempts)
        self.dead_lettered_attempts = 0  # of those, for max_delivery_attempts (the rest rejected)
        self.removed = 0  # taken out by an operator: purged or moved away ($management)


class BrokerCounters:
    """Broker-wide counts kept by the listener (one per broker, in ``BrokerCore.counters``)."""

    __slots__ = ("auth_failures", "connections")

    def __init__(self) -> None:
        self.connections = 0  # sockets accepted (not refused by max_connections)
        self.auth_failures = 0  # SASL exchanges that ended in failure (bad password, no such user)
