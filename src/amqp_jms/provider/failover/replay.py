"""One reconnect's replay: re-create on the new connection what the application holds.

Qpid JMS's ``JmsConnection.onConnectionRecovery`` order: temporary destinations, then each
session in creation order with its producers, then its consumers (a transacted session declares
a new transaction as it begins); then the sends that waited, in order; the connection is online
once nothing is left (a create or send the application makes meanwhile is picked up by the next
pass); then each prefetch-0 receive that was waiting gets its credit again.

A re-creation the server refuses fails the reconnect (the next server is tried), unless
``jms.closeLinksThatFailOnReconnect`` closes that producer or consumer; a create the
application is still waiting for gets the refusal itself. A subscription the broker still holds
for the old link (``amqp:resource-locked``) is retried until it lets go.
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import TYPE_CHECKING, Any

from ...exceptions import JMSException
from ..base import Provider, ProviderSession
from .handles import FailoverConsumer, FailoverProducer, FailoverSession, _Bound

if TYPE_CHECKING:
    from .state import FailoverState

__all__ = ["Replay"]

Future = concurrent.futures.Future

#: how long a re-attach the broker refuses because it still holds the old link is retried
#: (a durable subscription's link after a drop the broker has not noticed yet), in seconds
LOCKED_RETRY_S = 30.0
#: bound on one step of a re-creation when jms.requestTimeout is unlimited, in seconds
RESTORE_STEP_S = 30.0


class Replay:
    """Re-creates what ``state`` holds on connection ``prov`` (generation ``gen``); ``run``
    raises JMSException when the reconnect must be given up and the next server tried."""

    def __init__(self, state: FailoverState, prov: Provider, gen: int) -> None:
        self.state = state
        self.prov = prov
        self.gen = gen

    def step(self, fut: Future[Any], what: str) -> Any:
        """Wait for one re-creation, bounded even when jms.requestTimeout is not."""
        timeout = self.state.request_timeout() or RESTORE_STEP_S
        if self.state.lost_gen >= self.gen:
            raise JMSException(f"the connection was lost again while re-creating: {what}")
        return self.prov.wait(fut, timeout, what)

    def run(self) -> None:
        state, gen = self.state, self.gen
        for t in state.live_temporaries():
            t.moved(self.step(self.prov.create_temporary(t.topic), "re-create a temporary destination"))
        state.update_aliases()
        while True:
            with state.lock:
                if state.lost_gen >= gen or state.closed:
                    raise JMSException("the connection was lost again while re-creating")
                sessions = state.live_sessions()
                todo = [s for s in sessions if s.gen != gen
                        or any(h.gen != gen and not h.closed for h in [*s.producers, *s.consumers])]
                if not todo and not state.has_queued_sends():
                    state.set_online()
                    break
            for s in todo:
                self.session(s)
            state.flush_sends()
        state.wake_online_waiters()
        for s in sessions:  # a receive that was waiting: its credit went with the old link
            for c in list(s.consumers):
                if c.pulled and not c.stopped and c.gen == gen:
                    c.inner.pull(False)

    def session(self, s: FailoverSession) -> None:
        gen = self.gen
        if s.gen != gen:
            try:
                inner = self.step(self.prov.create_session(s.transacted), "re-create a session")
            except JMSException as e:
                self.refused(s, e)
                for h in [*s.producers, *s.consumers]:
                    h.refuse(e)
                return
            s.bind(inner, gen)
            s.rebound(gen)
        for p in list(s.producers):
            if p.closed or p.gen == gen:
                continue
            try:
                p.bind(self.step(p.create_on(s.inner, gen), "re-create a producer"), gen)
            except JMSException as e:
                self.refused(p, e)
        for c in list(s.consumers):
            if c.closed or c.gen == gen:
                continue
            if c.stopped:
                # closed by the application, its link kept only for acknowledgements that are
                # void now: nothing to re-create (its close later finds it offline and returns)
                c.closed = True
                c.forget()
                continue
            try:
                c.bind(self.consumer(s.inner, c), gen)
            except JMSException as e:
                self.refused(c, e)

    def consumer(self, session: ProviderSession, c: FailoverConsumer) -> Any:
        """A consumer's attach again; a subscription the broker still holds for the old link
        (``amqp:resource-locked``) is retried until it lets go, not reported."""
        deadline = time.monotonic() + LOCKED_RETRY_S
        delay = 0.05
        while True:
            try:
                return self.step(c.create_on(session, self.gen), "re-create a consumer")
            except JMSException as e:
                if e.error_code != "amqp:resource-locked" or time.monotonic() >= deadline:
                    raise
                self.state.log.debug("failover: %s; retrying", e)
                if self.state.sleep(delay):
                    raise
                delay = min(delay * 2, 1.0)

    def refused(self, h: _Bound, exc: JMSException) -> None:
        """A re-creation failed. An I/O failure, or a refusal of something the application
        already had, fails the whole reconnect (the next server is tried, as in Qpid JMS) unless
        ``jms.closeLinksThatFailOnReconnect`` closes that producer or consumer instead; a
        refusal of a create still in progress goes to its caller."""
        if self.prov.failure is not None:
            raise exc
        if not h.bound:
            h.refuse(exc)
        elif self.state.config.close_links_that_fail_on_reconnect and isinstance(
                h, FailoverProducer | FailoverConsumer):
            self.state.log.warning("failover: closing a %s the server refused to re-create: %s",
                        "producer" if isinstance(h, FailoverProducer) else "consumer", exc)
            h.closed = True
            h.forget()
            if isinstance(h, FailoverConsumer):  # refused alone: the connection carries on
                h.sink.on_closed(exc, alone=True)
        else:
            raise exc
