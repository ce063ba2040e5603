"""``MappingContext``: what the mapping rules depend on besides the message itself."""

from __future__ import annotations

from dataclasses import dataclass

from ..destination import Destination

__all__ = ["DEFAULT_CONTEXT", "MappingContext", "resolve_context"]


@dataclass(frozen=True, slots=True)
class MappingContext:
    """The link/connection state a message is mapped in.

    * ``consumer_destination``: the destination the receiving consumer was created on; it
      stands in for a missing ``to`` and gives the destination type when a message carries no
      type annotation (5.1).
    * ``queue_prefix`` / ``topic_prefix``: the address prefixes in force (the peer's
      ``queue-prefix``/``topic-prefix`` Open properties, e.g. ActiveMQ's ``queue://``, or the
      ``jms.queuePrefix``/``jms.topicPrefix`` options): added to ``to``/``reply-to`` addresses
      on send and stripped on receive, never for temporary destinations
      (:mod:`.destinations`).
    * ``time_to_live``: the producer's time to live in ms, for the header ``ttl`` (6.1; values
      above 2^32-1 leave ``ttl`` out).
    * ``now_ms``: the current time in ms, used when a received message has a ``ttl`` but no
      ``absolute-expiry-time``; ``None`` reads the clock.
    """

    consumer_destination: Destination | None = None
    queue_prefix: str | None = None
    topic_prefix: str | None = None
    time_to_live: int = 0
    now_ms: int | None = None

    def __post_init__(self) -> None:
        if self.consumer_destination is not None and not isinstance(self.consumer_destination, Destination):
            raise TypeError(
                f"consumer_destination must be a Destination, not {type(self.consumer_destination).__name__}"
            )
        if type(self.time_to_live) is bool or not isinstance(self.time_to_live, int) or self.time_to_live < 0:
            raise ValueError(f"time_to_live must be a non-negative int (ms), not {self.time_to_live!r}")


DEFAULT_CONTEXT = MappingContext()


def resolve_context(context: MappingContext | None) -> MappingContext:
    """``context``, or the default when ``None``. Anything else is a TypeError naming it here, at
    the call, rather than an AttributeError from deep inside the mapping."""
    if context is None:
        return DEFAULT_CONTEXT
    if not isinstance(context, MappingContext):
        raise TypeError(f"context must be a MappingContext, not {type(context).__name__}")
    return context
