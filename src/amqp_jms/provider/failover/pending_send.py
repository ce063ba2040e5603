"""A send the failover connection owes the application: made while offline, or one whose outcome
the lost connection never gave (re-sent after the reconnect: at-least-once, same message id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...exceptions import IllegalStateException, JMSException
from ...message import MessageData
from .futures import Future, reject

if TYPE_CHECKING:
    from .handles import FailoverProducer

__all__ = ["PendingSend"]


class PendingSend:
    """A send made while offline, or one whose outcome the lost connection never gave."""

    __slots__ = ("context", "future", "message", "producer", "ttl")

    def __init__(
        self, producer: FailoverProducer, message: MessageData, ttl: int, future: Future[None] | None,
        context: Any = None,
    ) -> None:
        self.producer = producer
        #: the send's frozen data (never the application's message object, which may have
        #: changed since ``send`` returned)
        self.message = message
        self.ttl = ttl
        self.future = future
        #: the application's tracing context at the send (``jms.tracing``), restored around the
        #: send this thread makes for it, so the span stays in the application's trace
        self.context = context

    def run(self) -> bool:
        """Send on the producer's live link; False when the connection went again meanwhile."""
        fut = self.future
        if fut is not None and fut.done():  # the client stopped waiting (send timeout)
            return True
        p = self.producer
        # (not ``current()``: the queue is sent before the connection is declared online)
        inner = p.live()
        if p.closed:
            if fut is not None:
                reject(fut, IllegalStateException("the producer was closed before the send"))
            return True
        if inner is None:
            return False
        gen = p.gen
        tracing = p.state.tracing
        try:
            if tracing is not None and self.context is not None:
                with tracing.restored(self.context):
                    f = inner.send(self.message, fut is not None, self.ttl)
            else:
                f = inner.send(self.message, fut is not None, self.ttl)
        except JMSException as e:
            if p.lost(gen, e):
                return False
            if fut is not None:
                reject(fut, e)
            return True
        p.session.did_work(gen)
        if f is not None and fut is not None:
            f.add_done_callback(lambda f: p.sent(f, fut, self.message, self.ttl, gen, self.context))
        return True

    def fail(self, exc: JMSException) -> None:
        if self.future is not None:
            reject(self.future, exc)
