"""QueueRequestor / TopicRequestor: the JMS helpers for request/reply over a temporary destination.

``request(message)`` sets ``JMSReplyTo`` to a temporary queue (topic) owned by the requestor,
sends the message and waits for the reply there. As in JMS, the requestor takes a
non-transacted session and ``close()`` closes that session too. Use it as a context manager.
A reply normally carries the request's ``JMSMessageID`` as its ``JMSCorrelationID``; the helper
does not filter on it (each requestor has its own reply destination, so replies cannot mix
unless requests overlap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..destination import Destination, Queue, Topic
from ..exceptions import IllegalStateException, InvalidDestinationException

if TYPE_CHECKING:
    from ..message import Message
    from .session import Session

__all__ = ["QueueRequestor", "TopicRequestor"]


class _Requestor:
    _kind: type[Destination] = Destination

    def __init__(self, session: Session, destination: Destination) -> None:
        if session.transacted:
            raise IllegalStateException("a requestor needs a non-transacted session")
        if destination is None or not isinstance(destination, self._kind):
            raise InvalidDestinationException(
                f"{type(self).__name__} needs a {self._kind.__name__}, got {destination!r}"
            )
        self._session = session
        self._reply_to = (session.create_temporary_topic() if destination.is_topic
                          else session.create_temporary_queue())
        self._producer = session.create_producer(destination)
        self._consumer = session.create_consumer(self._reply_to)

    @property
    def reply_to(self) -> Destination:
        return self._reply_to

    def request(self, message: Message, timeout_ms: int | None = None) -> Message | None:
        """Send ``message`` and wait for a reply (up to ``timeout_ms``; None = forever).

        The connection must be started, or no reply can be received."""
        message.set_jms_reply_to(self._reply_to)
        self._producer.send(message)
        return self._consumer.receive(timeout_ms)

    def close(self) -> None:
        """Close the requestor and its session (the temporary destination goes with them)."""
        try:
            self._consumer.close()
            self._reply_to.delete()
        except Exception:  # the session may already be closed; closing it below still matters
            pass
        self._session.close()

    def __enter__(self) -> _Requestor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class QueueRequestor(_Requestor):
    """Request/reply to a queue with a temporary reply queue."""

    _kind = Queue


class TopicRequestor(_Requestor):
    """Request/reply on a topic with a temporary reply topic."""

    _kind = Topic
