"""Temporary destinations across a reconnect: re-created under new names, and the application's
``TemporaryQueue`` / ``TemporaryTopic`` objects (and the messages naming them) follow.
"""

from __future__ import annotations

from typing import Any

from ...destination import Destination, TemporaryQueue, TemporaryTopic

__all__ = ["Temporary", "follow_temporaries", "renamed"]


class Temporary:
    """A temporary destination the application holds: its first address (the name its
    ``TemporaryQueue`` carries), the current one, and those in between."""

    __slots__ = ("address", "earlier", "original", "topic")

    def __init__(self, original: str, topic: bool) -> None:
        self.original = original
        self.address = original
        self.earlier: list[str] = []
        self.topic = topic

    def moved(self, address: str) -> None:
        self.earlier.append(self.address)
        self.address = address


def renamed(dest: Destination, aliases: dict[str, str]) -> Destination:
    """``dest`` with a temporary destination's address replaced by the one the current
    connection gave it (temporary destinations are re-created with new names)."""
    new = aliases.get(dest.name) if dest.is_temporary else None
    if new is None:
        return dest
    return TemporaryTopic(new) if dest.is_topic else TemporaryQueue(new)



def follow_temporaries(message: Any, aliases: dict[str, str]) -> None:
    """A message addressed to (or replying to) a temporary destination re-created under a new
    name after a reconnect is sent to (or names) the new one: the application's
    ``TemporaryQueue`` follows, as Qpid JMS's does (it renames the object in place; ours are
    immutable values, so the message's headers take the renamed value, which is what was sent)."""
    for attr in ("_destination", "_reply_to"):
        dest = getattr(message, attr, None)
        if dest is not None and dest.is_temporary and dest.name in aliases:
            setattr(message, attr, renamed(dest, aliases))
