"""Subscription names to AMQP link names, per connection (Qpid JMS's subscription tracker).

A durable subscription is identified on the wire by its receiver link's name (design notes,
"Durable Subscriptions"); a shared subscription may have many consumers on one connection, and
link names must stay unique per connection, so Qpid JMS numbers them:

==============================  ============================  ============================
kind                            with a client ID              without (``global``)
==============================  ============================  ============================
durable, not shared             ``sub``                       (client ID required)
shared durable                  ``sub``, ``sub|2``, ...       ``sub|global``, ``sub|global2``
shared non-durable (volatile)   ``sub|volatile1``, ...        ``sub|global-volatile1``, ...
==============================  ============================  ============================

The counter of a shared subscription grows with each consumer and starts again once the last
consumer of that subscription on this connection has closed. Closed consumers are pruned
lazily (the tracker keeps the consumer objects and looks at their ``_closed`` flag), so no
close path needs to call back here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..destination import Destination
from ..exceptions import IllegalStateException, JMSException

__all__ = ["SubscriptionTracker", "durable_link_name", "validate_subscription_name"]

DELIMITER = "|"


def durable_link_name(name: str, has_client_id: bool) -> str:
    """The link name of a durable subscription's first consumer, as Qpid JMS names it: the
    subscription name itself under a client ID, ``name|global`` without one (shared, so no
    client ID scopes it). Unsubscribe looks the subscription up under this name."""
    return name if has_client_id else f"{name}{DELIMITER}global"


def validate_subscription_name(name: Any) -> str:
    if not isinstance(name, str):
        raise JMSException(f"subscription name must be a str, not {type(name).__name__}")
    if not name:
        raise JMSException("subscription name must not be empty")
    if DELIMITER in name:
        raise JMSException(f"subscription name {name!r} must not contain the '|' character")
    return name


@dataclass
class _Shared:
    topic: Destination
    selector: str | None
    consumers: list[Any] = field(default_factory=list)
    count: int = 0  # consumers ever added since the subscription was last idle here


class SubscriptionTracker:
    """Which subscriptions this connection has consumers on, and their link names."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exclusive: dict[str, Any] = {}  # durable unshared name -> consumer (or None while opening)
        self._shared: dict[tuple[bool, str], _Shared] = {}

    # -- reservations (called before the attach; ``release`` undoes a failed one) --------------
    def reserve_durable(self, name: str, topic: Destination, selector: str | None) -> str:
        with self._lock:
            self._prune()
            if name in self._exclusive:
                raise IllegalStateException(
                    f"the durable subscription {name!r} already has an active consumer"
                )
            if (True, name) in self._shared:
                raise JMSException(
                    f"a shared durable subscription named {name!r} is active on this connection"
                )
            self._exclusive[name] = None
            return name

    def reserve_shared(
        self, name: str, durable: bool, topic: Destination, selector: str | None, has_client_id: bool
    ) -> str:
        with self._lock:
            self._prune()
            if durable and name in self._exclusive:
                raise JMSException(f"a non-shared durable subscription named {name!r} is active")
            key = (durable, name)
            sub = self._shared.get(key)
            if sub is None:
                sub = self._shared[key] = _Shared(topic, selector)
            elif sub.topic != topic or (sub.selector or None) != (selector or None):
                raise JMSException(
                    f"shared subscription {name!r} is active with topic {sub.topic} and selector "
                    f"{sub.selector!r}: a consumer cannot join it with topic {topic} and selector "
                    f"{selector!r}"
                )
            sub.count += 1
            sub.consumers.append(None)
            n = sub.count
        if durable:
            first = durable_link_name(name, has_client_id)
            if n == 1:
                return first
            return f"{first}{DELIMITER}{n}" if has_client_id else f"{first}{n}"
        return f"{name}{DELIMITER}{'volatile' if has_client_id else 'global-volatile'}{n}"

    def bind(self, name: str, shared: bool, durable: bool, consumer: Any) -> None:
        """The attach succeeded: remember the consumer in its reservation's place."""
        with self._lock:
            if not shared:
                self._exclusive[name] = consumer
                return
            sub = self._shared.get((durable, name))
            if sub is not None and None in sub.consumers:
                sub.consumers[sub.consumers.index(None)] = consumer

    def release(self, name: str, shared: bool, durable: bool) -> None:
        """The attach failed: drop the reservation."""
        with self._lock:
            if not shared:
                if self._exclusive.get(name, 0) is None:
                    del self._exclusive[name]
                return
            sub = self._shared.get((durable, name))
            if sub is not None and None in sub.consumers:
                sub.consumers.remove(None)
                if not sub.consumers:
                    del self._shared[(durable, name)]

    # -- queries -------------------------------------------------------------------------------
    def is_active(self, name: str) -> bool:
        """A durable subscription (shared or not) with an open consumer on this connection."""
        with self._lock:
            self._prune()
            return name in self._exclusive or (True, name) in self._shared

    def _prune(self) -> None:
        for name, c in list(self._exclusive.items()):
            if c is not None and getattr(c, "closed", False):
                del self._exclusive[name]
        for key, sub in list(self._shared.items()):
            sub.consumers = [c for c in sub.consumers if c is None or not getattr(c, "closed", False)]
            if not sub.consumers:
                del self._shared[key]
