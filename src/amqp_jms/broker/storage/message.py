"""The broker's view of one message: the encoded bytes plus the few fields it routes on.

The broker never rebuilds a message: it keeps the bytes exactly as the producer sent them and
reads only what routing needs (priority, durability, expiry, delivery time, the ``to`` address
and, lazily, the properties a selector asks for). A redelivered message gets its header's
``delivery-count`` bumped; that is the only time the bytes are rewritten.

All AMQP decoding goes through :mod:`amqp_jms.broker.storage.message_bytes`, the one seam to the shared codec.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from ...types import Int
from . import message_bytes
from .large import memory_size

__all__ = ["BrokerMessage", "advance_seq", "next_seq"]

_seq = itertools.count(1)
_last = 0


def next_seq() -> int:
    """A process-wide increasing number: FIFO order and the store's row key."""
    global _last
    _last = next(_seq)
    return _last


def advance_seq(at_least: int) -> None:
    """Make later numbers exceed ``at_least`` (after recovering stored messages)."""
    global _seq, _last
    if at_least >= _last:
        _last = at_least
        _seq = itertools.count(at_least + 1)


class BrokerMessage:
    """One message held by one queue (topic subscriptions each get their own record).

    ``data`` is shared between the records of a fan-out, never copied.
    """

    __slots__ = (
        "_props",
        "data",
        "deliver_at",
        "delivery_count",
        "durable",
        "expiry",
        "mem",
        "origin",
        "priority",
        "seq",
        "stored",
    )

    def __init__(
        self,
        data: Any,
        *,
        priority: int = 4,
        durable: bool = False,
        expiry: float = 0.0,
        deliver_at: float = 0.0,
        delivery_count: int = 0,
        origin: int = 0,
        seq: int = 0,
    ) -> None:
        self.data = data  # bytes, or a large message's file mapped read-only (``large.py``)
        # what it costs the heap (queues page by this): a mapped large message costs little
        self.mem = len(data) if type(data) is bytes else memory_size(data)
        self.priority = priority
        self.durable = durable
        self.expiry = expiry  # absolute, seconds since the epoch; 0 = never
        self.deliver_at = deliver_at  # absolute, seconds since the epoch; 0 = now
        self.delivery_count = delivery_count
        self.origin = origin  # id of the connection that published it (no-local)
        self.seq = seq or next_seq()
        self.stored = False  # a row for it exists in the store
        self._props: dict[str, Any] | None = None

    @classmethod
    def parse(cls, data: Any, *, now: float, origin: int = 0) -> BrokerMessage:
        """Read the routing fields of an encoded message (raises ``ValueError`` if malformed)."""
        info = message_bytes.inspect(data)
        expiry = 0.0
        if info.absolute_expiry:
            expiry = info.absolute_expiry
        elif info.ttl:
            expiry = now + info.ttl / 1000.0
        deliver_at = 0.0
        if info.delivery_time:
            deliver_at = info.delivery_time / 1000.0
        elif info.delivery_delay and info.delivery_delay > 0:
            deliver_at = now + info.delivery_delay / 1000.0
        prio = max(0, min(9, info.priority))
        return cls(
            data,
            priority=prio,
            durable=info.durable,
            expiry=expiry,
            deliver_at=deliver_at if deliver_at > now else 0.0,
            delivery_count=info.delivery_count,
            origin=origin,
        )

    def copy(self) -> BrokerMessage:
        """A record for another queue sharing the same bytes (topic fan-out)."""
        m = BrokerMessage(
            self.data,
            priority=self.priority,
            durable=self.durable,
            expiry=self.expiry,
            deliver_at=self.deliver_at,
            delivery_count=self.delivery_count,
            origin=self.origin,
        )
        m._props = self._props
        return m

    def expired(self, now: float) -> bool:
        return 0.0 < self.expiry <= now

    def wire_bytes(self) -> bytes:
        """The bytes to transfer: the original, or with the header's delivery-count updated."""
        if self.delivery_count == 0:
            return self.data
        return message_bytes.with_delivery_count(self.data, self.delivery_count)

    def _view(self) -> dict[str, Any]:
        """The selector identifiers of this message (``message_bytes.selector_view``) with the
        two header fields the record holds rather than the bytes, decoded once."""
        props = self._props
        if props is None:
            props = self._props = message_bytes.selector_view(self.data)
            props["JMSDeliveryMode"] = "PERSISTENT" if self.durable else "NON_PERSISTENT"
            props["JMSPriority"] = Int(self.priority)
        return props

    def selector_get(self) -> Callable[[str], Any]:
        """``lookup`` as one C-level ``dict.get``. A selector of hundreds of terms reads hundreds
        of identifiers per message and consumer; a Python call for each was most of its cost."""
        return self._view().get

    def lookup(self, name: str) -> Any:
        """Value of a selector identifier: a JMS header field or an application property."""
        if name == "JMSRedelivered":
            return self.delivery_count > 0
        return self._view().get(name)

    def __len__(self) -> int:
        return len(self.data)
