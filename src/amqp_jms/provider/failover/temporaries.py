"""Temporary destinations across a reconnect: re-created under new names, and the application's
``TemporaryQueue`` / ``TemporaryTopic`` objects (and the messages naming them) follow.
"""

from __future__ import annotations

from ...destination import Destination, TemporaryQueue, TemporaryTopic
from ...message import MessageData

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



def follow_temporaries(message: MessageData, aliases: dict[str, str]) -> MessageData:
    """A message addressed to (or replying to) a temporary destination re-created under a new
    name after a reconnect is sent to (or names) the new one: the application's
    ``TemporaryQueue`` follows, as Qpid JMS's does (it renames the object in place; ours are
    immutable values, so the send's data takes the renamed value)."""
    dest, reply_to = message.destination, message.reply_to
    new_dest = dest if dest is None else renamed(dest, aliases)
    new_reply_to = reply_to if reply_to is None else renamed(reply_to, aliases)
    if new_dest is dest and new_reply_to is reply_to:
        return message
    return message._replace(destination=new_dest, reply_to=new_reply_to)
