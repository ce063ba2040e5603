"""JMS destinations as value objects.

A destination is a name and a kind. Queues and topics compare by kind and name, so a
``Queue("orders")`` built by the user equals the one decoded from a received message's
``JMSDestination``. Temporary destinations compare by name too (their names are unique, assigned
by the peer) and can be deleted once a connection owns them; the owner is attached through
``bind_deleter`` by the client, which keeps this module free of any client or AMQP knowledge.

``str(Queue("orders"))`` is ``queue://orders`` (the form ActiveMQ, Qpid JMS and our CLI use);
``parse_destination`` reads that form back. A temporary destination's name is the address its
broker gave it; when that address already carries the scheme (ActiveMQ names them
``temp-queue://ID:...``), ``str()`` shows it once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from .exceptions import IllegalStateException, InvalidDestinationException

__all__ = [
    "Destination",
    "Queue",
    "TemporaryQueue",
    "TemporaryTopic",
    "Topic",
    "parse_destination",
]


class Destination:
    """Base of the four destination kinds. Immutable, hashable."""

    __slots__ = ("_name",)
    _name: str
    kind: ClassVar[str] = "destination"
    #: URI scheme used by ``str()`` and ``parse_destination``.
    scheme: ClassVar[str] = ""
    is_queue: ClassVar[bool] = False
    is_topic: ClassVar[bool] = False
    is_temporary: ClassVar[bool] = False

    def __init__(self, name: str) -> None:
        if name is None:
            raise TypeError("destination name must not be None")
        if not isinstance(name, str):
            raise TypeError(f"destination name must be a str, not {type(name).__name__}")
        if not name:
            raise InvalidDestinationException("destination name must not be empty")
        object.__setattr__(self, "_name", name)

    @property
    def name(self) -> str:
        return self._name

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Destination):
            return NotImplemented
        return self.kind == other.kind and self._name == other._name

    def __hash__(self) -> int:
        return hash((self.kind, self._name))

    def __str__(self) -> str:
        # a broker may name a temporary node with the scheme already on (ActiveMQ's
        # ``temp-queue://ID:...``): print it once
        name = self._name
        if self.is_temporary and name.startswith(f"{self.scheme}://"):
            return name
        return f"{self.scheme}://{name}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"

    def __reduce__(self) -> tuple[type[Destination], tuple[str]]:
        return (type(self), (self._name,))


class Queue(Destination):
    """A point-to-point destination: each message goes to one consumer. A value, not a handle
    (equal by kind and name), so one decoded from a received JMSReplyTo can be used as is."""

    __slots__ = ()
    kind = "queue"
    scheme = "queue"
    is_queue = True

    def get_queue_name(self) -> str:
        """The name (JMS ``Queue.getQueueName``; ``name`` is the same for any destination)."""
        return self._name


class Topic(Destination):
    """A publish/subscribe destination: each subscription gets its own copy of every message."""

    __slots__ = ()
    kind = "topic"
    scheme = "topic"
    is_topic = True

    def get_topic_name(self) -> str:
        """The name (JMS ``Topic.getTopicName``; ``name`` is the same for any destination)."""
        return self._name


class _Temporary(Destination):
    """A temporary destination: lives as long as the connection that created it."""

    __slots__ = ("_deleted", "_deleter")
    _deleted: bool
    _deleter: Callable[[Destination], None] | None
    is_temporary = True

    def __init__(self, name: str) -> None:
        super().__init__(name)
        object.__setattr__(self, "_deleter", None)
        object.__setattr__(self, "_deleted", False)

    def bind_deleter(self, deleter: Callable[[Destination], None]) -> None:
        """Called by the connection that created it: ``delete()`` then goes through it."""
        object.__setattr__(self, "_deleter", deleter)

    @property
    def deleted(self) -> bool:
        return bool(self._deleted)

    def delete(self) -> None:
        """Delete the destination. Raises IllegalStateException while consumers are active."""
        deleter = self._deleter
        if deleter is None:
            raise IllegalStateException(
                f"{self!r} is not owned by a connection of this process and cannot be deleted"
            )
        if self._deleted:
            return
        deleter(self)
        object.__setattr__(self, "_deleted", True)


class TemporaryQueue(_Temporary, Queue):
    """A queue for replies: only its creating connection may consume from it, and it goes away
    with that connection. Still a Queue, so code that routes by kind needs no special case."""

    __slots__ = ()
    kind = "temporary-queue"
    scheme = "temp-queue"


class TemporaryTopic(_Temporary, Topic):
    """A topic that lives as long as its creating connection (see TemporaryQueue)."""

    __slots__ = ()
    kind = "temporary-topic"
    scheme = "temp-topic"


_BY_SCHEME: dict[str, type[Destination]] = {
    cls.scheme: cls for cls in (Queue, Topic, TemporaryQueue, TemporaryTopic)
}


def parse_destination(text: str, default: type[Destination] = Queue) -> Destination:
    """``queue://a``, ``topic://b``, ``temp-queue://c``, ``temp-topic://d``; a bare name is ``default``."""
    if not isinstance(text, str):
        raise TypeError("destination must be a str")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return default(text)
    cls = _BY_SCHEME.get(scheme.lower())
    if cls is None:
        raise InvalidDestinationException(
            f"unknown destination scheme {scheme!r} in {text!r}: expected one of "
            + ", ".join(f"{s}://" for s in _BY_SCHEME)
        )
    return cls(rest)
