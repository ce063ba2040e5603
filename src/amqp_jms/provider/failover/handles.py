"""The handles a failover connection gives the JMS layer: stable across reconnects.

The client keeps a ``FailoverSession`` / ``FailoverProducer`` / ``FailoverConsumer`` for life;
each forwards to the wrapped provider's handle of the current connection (``inner``) and is
re-bound by the replay (:mod:`.replay`) after every reconnect. Each handle is also the record
of what to re-create: its spec, its sink, its transaction state (Qpid JMS keeps these in its JMS
objects; ours stay AMQP- and failover-free). The handles share the connection's
:class:`~.state.FailoverState` (where the session handles are kept, which connection is live,
the send queue): they read its fields and change it only through its operations.

Every handle is created *recorded first, bound later*: the record exists before the wrapped
create is issued, so a reconnect that happens while it is in flight re-creates it like any
other, and the client's future resolves once it is bound on a live connection.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ...exceptions import IllegalStateException, JMSException, TransactionRolledBackException
from ...message import MessageData
from ..base import (
    ACCEPTED,
    ConsumerSpec,
    Inbound,
    InboundSink,
    ProducerSpec,
    ProviderConsumer,
    ProviderProducer,
    ProviderSession,
    relaying,
)
from ..errors import RedirectedException
from .futures import done_future, failure_of, reject, resolve
from .in_doubt import CommitInDoubt
from .pending_send import PendingSend
from .temporaries import follow_temporaries, renamed

if TYPE_CHECKING:
    from .state import FailoverState

__all__ = ["FailoverConsumer", "FailoverProducer", "FailoverSession"]

Future = concurrent.futures.Future


class _Bound:
    """A record with a client-facing future: resolved with the handle once first bound."""

    def __init__(self, state: FailoverState) -> None:
        self.state = state
        self.inner: Any = None
        self.gen = -1
        self.closed = False
        self.ready: Future[Any] = Future()
        self.ready.add_done_callback(self._ready_done)

    @property
    def bound(self) -> bool:
        return self.ready.done() and not self.ready.cancelled() and self.ready.exception() is None

    def bind(self, inner: Any, gen: int) -> None:
        self.inner, self.gen = inner, gen
        resolve(self.ready, self)  # (a replayed consumer is bound from two threads)

    def bind_when_created(self, fut: Future[Any], gen: int) -> None:
        """Bind the wrapped handle ``fut`` creates on connection ``gen`` when it comes, if that
        connection is still the live one; a refusal (not an I/O failure) goes to the client."""
        state = self.state

        def done(f: Future[Any]) -> None:
            exc = failure_of(f)
            if exc is None:
                with state.lock:
                    if gen == state.gen and not self.closed:
                        self.bind(f.result(), gen)
                        return
                # made on a connection since lost: the restore re-creates it; or unwanted
                if self.closed:
                    try:
                        f.result().close()
                    except JMSException:
                        pass
            elif not state.io_failed(gen):
                self.refuse(exc)
            # an I/O failure: the handle stays recorded and the restore creates it

        fut.add_done_callback(done)

    def refuse(self, exc: BaseException) -> None:
        """The first create was refused (not an I/O failure): the client hears it."""
        self.forget()
        if not self.ready.done():
            self.ready.set_exception(exc)

    def _ready_done(self, f: Future[Any]) -> None:
        if f.cancelled():  # the client's wait timed out: the handle is not wanted any more
            self.closed = True
            self.forget()
            inner = self.inner
            if inner is not None:
                try:
                    inner.close()
                except JMSException:
                    pass

    def current(self) -> Any:
        """The wrapped handle if it belongs to the live connection, else None (offline)."""
        inner = self.inner
        if inner is not None and self.gen == self.state.gen and self.state.online:
            return inner
        return None

    def live(self) -> Any:
        """The wrapped handle if it belongs to the wrapped connection of the moment and that has
        not failed, whether online or still replaying: what arrives on a re-created link before
        the replay ends is acknowledged on it (``current()`` would drop those acks)."""
        inner = self.inner
        if inner is not None and self.gen == self.state.gen and not self.state.inner_failed():
            return inner
        return None

    def forget(self) -> None:
        """Remove the record (closed, or refused): nothing to re-create."""

    def close_inner(self, close: Callable[[Any], Future[None]]) -> Future[None]:
        """Close: on the live connection forward it; offline it succeeds at once (Qpid JMS)."""
        self.closed = True
        self.forget()
        inner = self.current()
        if inner is None:
            return done_future()
        out: Future[None] = Future()

        def done(f: Future[None]) -> None:
            exc = failure_of(f)
            if exc is not None and not self.state.io_failed(self.gen):
                reject(out, exc)
            else:
                resolve(out)

        close(inner).add_done_callback(done)
        return out


class FailoverSession(_Bound, ProviderSession):
    def __init__(self, state: FailoverState, transacted: bool, number: int) -> None:
        super().__init__(state)
        self.transacted = transacted
        self.number = number
        self._links = 0
        self.producers: list[FailoverProducer] = []
        self.consumers: list[FailoverConsumer] = []
        #: the connection (generation) the current transaction did work on (a send, an ack)
        self.work_gen: int | None = None
        #: the transaction did work on a connection since lost: its commit must fail
        self.in_doubt = False

    def forget(self) -> None:
        self.state.forget_session(self)

    def link_name(self, kind: str, address: str | None) -> str:
        """The name a link of this session keeps on every connection (Qpid JMS names links from
        ids that survive failover; the AMQP provider would number them afresh)."""
        self._links += 1
        return f"qpid-jms:{kind}:{self.state.connection_id}:{self.number}:{self._links}:{address or ''}"

    def create_producer(self, spec: ProducerSpec) -> Future[Any]:
        if spec.link_name is None:
            address = spec.destination.name if spec.destination is not None else None
            spec = dataclasses.replace(spec, link_name=self.link_name("sender", address))
        p = FailoverProducer(self, spec)
        with self.state.lock:
            self.producers.append(p)
        p.create()
        return p.ready

    def create_consumer(self, spec: ConsumerSpec, sink: InboundSink) -> Future[Any]:
        if spec.link_name is None and spec.subscription_name is None:
            spec = dataclasses.replace(spec, link_name=self.link_name("receiver", spec.destination.name))
        c = FailoverConsumer(self, spec, sink)
        with self.state.lock:
            self.consumers.append(c)
        c.create()
        return c.ready

    def interrupted(self) -> None:
        """The connection went: each consumer drops what it holds unacknowledged."""
        for c in list(self.consumers):
            c.interrupted()

    def gave_up(self, exc: JMSException) -> None:
        """Failover gave up: a create still waiting fails with ``exc``, every consumer ends."""
        for h in [self, *self.producers, *self.consumers]:
            if not h.ready.done():
                h.ready.set_exception(exc)
        for c in self.consumers:
            c.sink.on_closed(exc)

    def rebound(self, gen: int) -> None:
        """Re-created on connection ``gen``: a transaction that did work before is in doubt."""
        if self.work_gen is not None and self.work_gen != gen:
            self.in_doubt = True
        self.work_gen = None

    def did_work(self, gen: int) -> None:
        if self.transacted:
            self.work_gen = gen

    def commit(self) -> Future[None]:
        out: Future[None] = Future()
        inner = self.current()
        if inner is None:
            # offline: wait for the reconnect (Qpid JMS fails at once, which makes a retrying
            # application spin); a transaction with work on the lost connection is then in doubt
            # and fails below, one whose sends were only queued commits them
            try:
                self.state.wait_online(self.state.request_timeout(), "commit")
            except JMSException as e:
                self.work_gen, self.in_doubt = None, False
                reject(out, TransactionRolledBackException(
                    f"the commit failed and the transaction was rolled back: {e.reason}", None, e))
                return out
            inner = self.current()
            if inner is None:
                return self.commit()
        gen = self.gen
        if self.in_doubt:
            # the transaction spanned a reconnect: what it did before is gone, so what it did
            # since cannot commit alone; roll the new one back and say so
            self.in_doubt, self.work_gen = False, None

            def rolled_back(f: Future[None]) -> None:
                reject(out, TransactionRolledBackException(
                    "the transaction was in doubt after a reconnect (failover) and was rolled back"))

            inner.rollback(list).add_done_callback(rolled_back)
            return out
        self.work_gen = None
        # no answer to the discharge: rolled back as Qpid JMS says, unless the peer can be asked
        in_doubt = CommitInDoubt(self.state, self, inner, out)

        def committed(f: Future[None]) -> None:
            exc = failure_of(f)
            if exc is None:
                resolve(out)
            elif self.state.io_failed(gen):  # (the wrapped session may already call it rolled back)
                in_doubt.lost(exc)
            else:
                reject(out, exc)

        inner.commit().add_done_callback(committed)
        # the connection lost before the discharge's answer: its I/O thread may never answer
        self.state.when_lost(gen, in_doubt.lost, out)
        return out

    def rollback(self, before: Callable[[], Iterable[Any]]) -> Future[None]:
        self.in_doubt, self.work_gen = False, None
        inner = self.current()
        if inner is None:  # offline: the transaction went with the connection
            before()
            return done_future()
        gen = self.gen
        out: Future[None] = Future()

        def done(f: Future[None]) -> None:
            exc = failure_of(f)
            if exc is not None and not self.state.io_failed(gen):
                reject(out, exc)
            else:
                resolve(out)

        inner.rollback(before).add_done_callback(done)
        self.state.when_lost(gen, lambda: resolve(out), out)  # the transaction went with the connection
        return out

    def close(self, before: Callable[[], Iterable[Any]] | None = None) -> Future[None]:
        for link in [*self.producers, *self.consumers]:
            link.closed = True
        return self.close_inner(lambda inner: inner.close(before))


class _Link(_Bound):
    """What producer and consumer handles share: their session, their record in it."""

    def __init__(self, session: FailoverSession) -> None:
        super().__init__(session.state)
        self.session = session

    def records(self) -> list[Any]:
        raise NotImplementedError

    def create_on(self, session: ProviderSession, gen: int) -> Future[Any]:
        """Issue the wrapped create on ``session`` of connection ``gen``."""
        raise NotImplementedError

    def create(self) -> None:
        """Create the wrapped link now if online, else the replay creates it at restore."""
        state = self.state
        with state.lock:
            state.check_usable()
            sess = self.session.current()
            gen = state.gen
        if sess is None or state.inner_failed():
            return
        self.bind_when_created(self.create_on(sess, gen), gen)

    def forget(self) -> None:
        with self.state.lock:
            if self in self.records():
                self.records().remove(self)

    def lost(self, gen: int, exc: BaseException) -> bool:
        """Whether a failure of this link on connection ``gen`` went with the connection, or
        with its session ended by the peer (a broker shutting down ends sessions before it
        closes): either way failover re-creates the link, and a session ended on a live
        connection makes it reconnect. False: the link alone was refused or closed."""
        if self.state.io_failed(gen):
            return True
        inner = self.session.inner
        if self.session.gen == gen and inner is not None and inner.failure is not None:
            self.state.lose(gen, exc if isinstance(exc, JMSException) else JMSException(str(exc)))
            return True
        return False


class FailoverProducer(_Link, ProviderProducer):
    def __init__(self, session: FailoverSession, spec: ProducerSpec) -> None:
        super().__init__(session)
        self.spec = spec

    def records(self) -> list[Any]:
        return self.session.producers

    def spec_now(self) -> ProducerSpec:
        """The spec on the connection of the moment (a temporary destination renamed)."""
        dest = self.spec.destination
        if dest is None or not dest.is_temporary:
            return self.spec
        return dataclasses.replace(self.spec, destination=renamed(dest, self.state.aliases))

    def create_on(self, session: ProviderSession, gen: int) -> Future[Any]:
        return session.create_producer(self.spec_now())

    def send(self, message: MessageData, sync: bool, time_to_live: int = 0) -> Future[None] | None:
        if self.closed:
            raise IllegalStateException("the producer is closed")
        aliases = self.state.aliases
        if aliases:
            message = follow_temporaries(message, aliases)
        tracing = self.state.tracing
        ctx = tracing.capture() if tracing is not None else None
        inner = self.current()
        if inner is not None:
            gen = self.gen
            try:
                f = inner.send(message, sync, time_to_live)
            except JMSException as e:
                if not self.lost(gen, e):
                    raise
            else:
                self.session.did_work(gen)
                if f is None:
                    return None
                out = relaying(f)  # (its waiting caller may read the answer for f)
                f.add_done_callback(lambda f: self.sent(f, out, message, time_to_live, gen, ctx))
                return out
        # offline (or the connection went during the hand-over): queued for after the reconnect
        pending = PendingSend(self, message, time_to_live, Future() if sync else None, ctx)
        self.state.queue_send(pending)
        return pending.future

    def sent(
        self, f: Future[None], out: Future[None], message: MessageData, ttl: int, gen: int,
        ctx: Any = None,
    ) -> None:
        """A wrapped send's outcome (on the I/O thread). Lost with the connection: re-sent after
        the reconnect, same message (same id): at-least-once."""
        if out.done():
            return
        exc = failure_of(f)
        if exc is None:
            resolve(out)
        elif isinstance(exc, RedirectedException) and not self.closed:
            self.state.lose(gen, exc)  # the link was redirected: move the connection, send there
            self.state.queue_send(PendingSend(self, message, ttl, out, ctx), resend=True)
        elif not self.closed and self.lost(gen, exc):
            self.state.queue_send(PendingSend(self, message, ttl, out, ctx), resend=True)
        else:
            reject(out, exc)

    def close(self) -> Future[None]:
        return self.close_inner(lambda inner: inner.close())


class _Sink:
    """The sink a wrapped consumer of one connection delivers to: forwards to the client's,
    except that a link ending with its connection is not the consumer's end (failover re-creates
    it); a link the peer closed on a live connection is."""

    def __init__(self, consumer: FailoverConsumer, gen: int) -> None:
        self.c = consumer
        self.gen = gen

    def deliver(self, inbound: Inbound) -> None:
        self._arrived(inbound)
        self.c.sink.deliver(inbound)

    def deliver_quietly(self, inbound: Inbound) -> None:
        self._arrived(inbound)
        self.c.sink.deliver_quietly(inbound)

    def wake(self) -> None:
        self.c.sink.wake()

    def _arrived(self, inbound: Inbound) -> None:
        c = self.c
        c.pulled = False
        if c.gen != self.gen and self.gen == c.state.gen and not c.closed:
            # a re-created link delivers before the replay has bound it: bind it now, or the
            # message's acknowledgement would find the old link and be dropped
            c.bind(inbound.consumer, self.gen)

    def __len__(self) -> int:
        return len(self.c.sink)

    def take_all(self) -> list[Any]:
        return self.c.sink.take_all()

    def give_back(self) -> list[tuple[Any, int]]:
        return self.c.sink.give_back()

    def clear(self) -> None:
        self.c.sink.clear()

    def on_closed(self, exc: JMSException, *, alone: bool = False) -> None:
        if self.c.closed or self.c.lost(self.gen, exc):
            return
        if isinstance(exc, RedirectedException):  # re-attach it where the peer says
            self.c.state.lose(self.gen, exc)
            return
        self.c.closed = True
        self.c.forget()
        self.c.sink.on_closed(exc, alone=alone)


class FailoverConsumer(_Link, ProviderConsumer):
    def __init__(self, session: FailoverSession, spec: ConsumerSpec, sink: InboundSink) -> None:
        super().__init__(session)
        self.spec = spec
        self.sink = sink
        #: a prefetch-0 pull is outstanding (a receive waits): re-issued after a reconnect
        self.pulled = False
        self.stopped = False

    def records(self) -> list[Any]:
        return self.session.consumers

    def spec_now(self) -> ConsumerSpec:
        """The spec on the connection of the moment (a temporary destination renamed)."""
        if not self.spec.destination.is_temporary:
            return self.spec
        return dataclasses.replace(self.spec, destination=renamed(self.spec.destination, self.state.aliases))

    def create_on(self, session: ProviderSession, gen: int) -> Future[Any]:
        return session.create_consumer(self.spec_now(), self.wrapped_sink(gen))

    def wrapped_sink(self, gen: int) -> _Sink:
        return _Sink(self, gen)

    def interrupted(self) -> None:
        """The connection went: what the local queue holds unsettled was never acknowledged and
        comes back from the broker (redelivered), so the sink drops it (Qpid JMS clears the
        message queue). A presettled consumer's messages are the sink's to keep: the broker
        settled them as it sent them and will not send them again (``InboundSink.clear``)."""
        self.sink.clear()

    # -- what the client reads: the wrapped consumer's, which may change on re-attach -------
    # (setting one is ignored: the wrapped consumer decides; offline, what the spec asked)
    @property
    def prefetch(self) -> int:
        inner = self.inner
        return self.spec.prefetch if inner is None else inner.prefetch

    @prefetch.setter
    def prefetch(self, value: int) -> None:
        pass

    @property
    def selector_applied_remotely(self) -> bool:
        inner = self.inner
        return True if inner is None else inner.selector_applied_remotely

    @selector_applied_remotely.setter
    def selector_applied_remotely(self, value: bool) -> None:
        pass

    @property
    def copy_honoured(self) -> bool:
        inner = self.inner
        return True if inner is None else inner.copy_honoured

    @copy_honoured.setter
    def copy_honoured(self, value: bool) -> None:
        pass

    @property
    def drain_on_empty(self) -> bool:
        inner = self.inner
        return True if inner is None else bool(inner.drain_on_empty)

    # -- operations ----------------------------------------------------------------------------
    def acknowledge(self, inbound: Inbound, outcome: int = ACCEPTED) -> None:
        inner = self.live()
        if inner is None:
            return  # offline: dropped; the broker redelivers the message
        if inbound.consumer is not inner:
            return  # delivered on a connection since lost: its ack is void (redelivered)
        self.session.did_work(self.gen)
        inner.acknowledge(inbound, outcome)

    def acknowledge_many(self, inbounds: Iterable[Inbound], outcome: int = ACCEPTED) -> None:
        inner = self.live()
        if inner is None:
            return  # offline: dropped; the broker redelivers the messages
        # those delivered on a connection since lost are void (redelivered), as in ``acknowledge``
        live = [inbound for inbound in inbounds if inbound.consumer is inner]
        if live:
            self.session.did_work(self.gen)
            inner.acknowledge_many(live, outcome)

    def taken(self) -> None:
        inner = self.live()
        if inner is not None:
            inner.taken()

    def read_here(self, arrived: Callable[[], bool], timeout: float | None) -> None:
        inner = self.current()  # (online: not while the links are being re-created)
        if inner is not None:
            inner.read_here(arrived, timeout)

    def pull(self, drain: bool) -> Future[None]:
        if not drain:
            self.pulled = True
        return self._forward(lambda inner: inner.pull(drain))

    def drain(self) -> Future[None]:
        return self._forward(lambda inner: inner.drain())

    def stop(self) -> Future[None]:
        self.stopped = True
        return self._forward(lambda inner: inner.stop())

    def _forward(self, op: Callable[[Any], Future[None]]) -> Future[None]:
        """Credit operations: offline they succeed at once (the reconnect restores credit, and
        a waiting receive keeps waiting); one lost with the connection succeeds likewise."""
        inner = self.current()
        if inner is None and not self.spec.browser:
            return done_future()
        if inner is None:
            offline: Future[None] = Future()
            self._after_reconnect(op, offline)
            return offline
        gen = self.gen

        def done(f: Future[None]) -> None:
            exc = failure_of(f)
            if exc is not None and not self.state.io_failed(gen):
                reject(out, exc)
            elif exc is not None and self.spec.browser:
                self._after_reconnect(op, out)
            else:
                resolve(out)

        wrapped = op(inner)
        out = relaying(wrapped)  # (its waiting caller may read the answer for it)
        wrapped.add_done_callback(done)
        return out

    def _after_reconnect(self, op: Callable[[Any], Future[None]], out: Future[None]) -> None:
        """A browser's drain decides where its enumeration ends, so offline it is made again on
        the re-attached link (which starts again at the queue's head: messages seen before may
        come again, as in Qpid JMS) instead of answering "nothing more" now."""

        def online(f: Future[None]) -> None:
            exc = failure_of(f)
            if exc is not None:
                reject(out, exc)
            else:
                self._forward(op).add_done_callback(
                    lambda g: reject(out, e) if (e := failure_of(g)) is not None else resolve(out))

        self.state.when_online().add_done_callback(online)

    def close(self) -> Future[None]:
        return self.close_inner(lambda inner: inner.close())
