"""Per-connection counters: what went through a connection, read as a frozen snapshot.

The provider counts on its I/O thread, where every transfer, outcome and settlement already
passes: plain ``int`` attributes of one ``__slots__`` object, bumped without a lock (one thread
writes them). ``connection.metrics()`` (and ``await conn.metrics()`` is not needed: the asyncio
face reads it the same way) copies them into a :class:`ConnectionMetrics`; a reader on another
thread may see one counter a message ahead of another, never a torn value.

What counts:

* ``messages_sent``/``bytes_sent``: transfers handed to proton (bytes are the encoded message,
  the transfer's payload); ``messages_received``/``bytes_received`` likewise for arrivals. A
  failover connection has one set for its life, whichever server carried the traffic; a send
  the lost connection never answered is re-sent on the next one and counts twice here (two
  transfers), once in ``sends_accepted``;
* ``sends_accepted``/``_rejected``/``_released``/``_modified``: the outcomes the peer gave our
  unsettled sends (presettled sends have none);
* ``acks_accepted``/``_rejected``/``_released``/``_modified``: the outcomes we gave deliveries
  (acknowledgements, and what was given back at close or rollback);
* ``redeliveries``: messages that arrived marked as delivered before (AMQP delivery-count > 0,
  ``JMSRedelivered``), counted as the application gets them;
* ``failures``: the connection failed (lost, closed by the peer with an error);
* ``reconnects``: the failover provider's reconnections (0 for a plain connection).

With ``jms.metrics=opentelemetry`` the same counters are exported as OpenTelemetry metrics
(``otel_metrics``), read at collection time: counting costs the same either way.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["ConnectionMetrics", "Counters"]


@dataclass(frozen=True, slots=True)
class ConnectionMetrics:
    """A snapshot of one connection's counters (module docstring says what each counts)."""

    connection_id: str = ""
    messages_sent: int = 0
    bytes_sent: int = 0
    messages_received: int = 0
    bytes_received: int = 0
    sends_accepted: int = 0
    sends_rejected: int = 0
    sends_released: int = 0
    sends_modified: int = 0
    acks_accepted: int = 0
    acks_rejected: int = 0
    acks_released: int = 0
    acks_modified: int = 0
    redeliveries: int = 0
    failures: int = 0
    reconnects: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: the counters (every field of the snapshot but the id)
COUNTER_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ConnectionMetrics))[1:]


class Counters:
    """The live counters of one connection; written on its I/O thread only (but see
    ``count_redelivery``)."""

    __slots__ = ("__weakref__", "_lock", "connection_id", *COUNTER_NAMES)
    messages_sent: int
    bytes_sent: int
    messages_received: int
    bytes_received: int
    sends_accepted: int
    sends_rejected: int
    sends_released: int
    sends_modified: int
    acks_accepted: int
    acks_rejected: int
    acks_released: int
    acks_modified: int
    redeliveries: int
    failures: int
    reconnects: int

    def __init__(self, connection_id: str) -> None:
        self.connection_id = connection_id
        self._lock = threading.Lock()
        for name in COUNTER_NAMES:
            setattr(self, name, 0)

    def count_redelivery(self) -> None:
        """From an application thread (decoding happens there); rare, so a lock is affordable."""
        with self._lock:
            self.redeliveries += 1

    def count_outcome(self, prefix: str, code: int) -> None:
        """An outcome by its AMQP descriptor code (0x24 accepted .. 0x27 modified)."""
        name = _OUTCOME_NAMES.get(code)
        if name is not None:
            attr = prefix + name
            setattr(self, attr, getattr(self, attr) + 1)

    def snapshot(self) -> ConnectionMetrics:
        return ConnectionMetrics(self.connection_id, *(getattr(self, n) for n in COUNTER_NAMES))


_OUTCOME_NAMES = {0x24: "accepted", 0x25: "rejected", 0x26: "released", 0x27: "modified"}
