"""Receiving links: credit (prefetch, pull, drain), inbound deliveries and their settlement."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from proton import Delivery, Link, Terminus

from ...engine.raw import ffi, lib, set_transactional_state
from ...exceptions import JMSException
from .. import payload
from ..base import (
    ACCEPTED,
    MODIFIED_FAILED,
    MODIFIED_FAILED_UNDELIVERABLE,
    REJECTED,
    RELEASED,
    ConsumerSpec,
    DrainOutcome,
    InboundSink,
    ProviderConsumer,
)
from ..loop import PostedBatch
from .addressing import link_address
from .link import AmqpLink
from .terminus import OUTCOMES, capability_for, has_filter, put_symbols, set_filters

if TYPE_CHECKING:
    from .session import AmqpSession

__all__ = ["AmqpConsumer", "AmqpInbound"]

_OUTCOME_CODES = {ACCEPTED: 0x24, REJECTED: 0x25, RELEASED: 0x26, MODIFIED_FAILED: 0x27,
                  MODIFIED_FAILED_UNDELIVERABLE: 0x27}


_partial, _readable, _pending = lib.pn_delivery_partial, lib.pn_delivery_readable, lib.pn_delivery_pending
_settled, _settle = lib.pn_delivery_settled, lib.pn_delivery_settle
_recv, _advance, _credit = lib.pn_link_recv, lib.pn_link_advance, lib.pn_link_credit
_draining, _get_drain = lib.pn_link_draining, lib.pn_link_get_drain
_update, _incref, _decref = lib.pn_delivery_update, lib.pn_incref, lib.pn_decref
_PN_ACCEPTED, _PN_RELEASED = lib.PN_ACCEPTED, lib.PN_RELEASED
_alloc, _buffer, _gc = ffi.new_allocator(should_clear_after_alloc=False), ffi.buffer, ffi.gc


def _hold(delivery: Any) -> Any:
    """A reference of our own to a proton-c delivery, dropped when the pointer is collected:
    what a proton ``Delivery`` wrapper holds, without the wrapper's Python-side bookkeeping (most
    of the I/O thread's time per received message when every transfer got one)."""
    _incref(delivery)
    return _gc(delivery, _decref)


class AmqpInbound:
    """One received transfer: its bytes, its (unsettled) delivery, its decoded message.

    The delivery is kept as a held proton-c pointer (``raw``); ``delivery`` wraps it in proton's
    ``Delivery`` for the paths that need one (transactional or non-accept outcomes).
    """

    __slots__ = ("_msg", "_span", "_wrapped", "consumer", "data", "local_redeliveries", "raw")

    def __init__(self, data: bytes, raw: Any, consumer: AmqpConsumer) -> None:
        self.data = data
        self.raw = raw
        self._wrapped: Delivery | None = None
        self.consumer = consumer
        self.local_redeliveries = 0
        self._msg: Any = None
        self._span: Any = None  # the delivery's span (jms.tracing), made current by dispatch

    @property
    def delivery(self) -> Delivery | None:
        """The unsettled delivery (None once given up or settled)."""
        if self.raw is None:
            return None
        if self._wrapped is None:
            self._wrapped = Delivery.wrap(self.raw)
        return self._wrapped

    @delivery.setter
    def delivery(self, value: None) -> None:
        assert value is None, "an inbound message's delivery can only be given up"
        self.raw = None
        self._wrapped = None

    @property
    def log_ids(self) -> dict[str, str]:
        """What names this delivery in a log line: its connection, session and link."""
        c = self.consumer
        return {"connection": c.provider.connection_id, "session": c.session.id, "link": c.name}

    def decode(self, body: bool = True) -> Any:
        if self._msg is not None:
            return self._msg
        consumer = self.consumer
        provider = consumer.provider
        msg = consumer.decoder()(self.data, body=body)
        if msg.get_jms_redelivered():
            provider.counters.count_redelivery()
        if provider.tracing is not None:
            self._span = provider.tracing.received(msg, self.consumer.spec.destination)
        if body:  # a headers-only message is not what a later full receive may hand out
            self._msg = msg
        return msg

    def dispatch(self, on_message: Callable[[Any], None], message: Any) -> None:
        tracing = self.consumer.provider.tracing
        if tracing is None or self._span is None:
            on_message(message)
            return
        with tracing.current(self._span):
            on_message(message)

    def reset(self) -> None:
        self._msg = None


class AmqpConsumer(AmqpLink, ProviderConsumer):
    kind = "consumer"

    def __init__(self, session: AmqpSession, spec: ConsumerSpec, sink: InboundSink, name: str) -> None:
        super().__init__(session, name)
        self.spec = spec
        self.sink = sink
        self.prefetch = spec.prefetch
        #: the peer did not echo our selector filter: the JMS layer must evaluate it itself
        self.selector_applied_remotely = True
        self.credit = 0  # mirror of the link credit, readable from any thread
        self.copy_honoured = True  # browser: the peer answered distribution-mode copy
        self._refill_posted = False
        self._drain_waiters: list[asyncio.Future[None] | concurrent.futures.Future[None]] = []
        self._counters = session.provider.counters
        self._wake_pending = False
        #: accepted deliveries on their way to the I/O thread (``acknowledge``), in order
        self._accepts: PostedBatch[AmqpInbound] = PostedBatch(session.provider.loop_thread,
                                                               self._settle_accepted)
        self._decoder: tuple[str | None, str | None, Callable[..., Any]] | None = None

    async def open(self) -> None:
        spec = self.spec
        rcv = self.session.endpoint.receiver(self.name)
        src = rcv.source
        src.address = link_address(spec.destination, self.provider)
        caps = [capability_for(spec.destination)]
        if spec.shared:  # JMS 2.0 shared subscription; "global" when no client ID scopes it
            caps += ["shared"] if self.provider.config.client_id else ["shared", "global"]
        put_symbols(src.capabilities, caps)
        put_symbols(src.outcomes, OUTCOMES)
        set_filters(src, spec.selector, spec.no_local)
        if spec.durable:
            src.durability = Terminus.DELIVERIES
            src.expiry_policy = Terminus.EXPIRE_NEVER
            src.distribution_mode = Terminus.DIST_MODE_COPY
        elif spec.browser:
            src.distribution_mode = Terminus.DIST_MODE_COPY
        rcv.target.address = None
        rcv.snd_settle_mode = Link.SND_SETTLED if spec.presettle else Link.SND_UNSETTLED
        rcv.rcv_settle_mode = Link.RCV_FIRST
        await self.attach(rcv, f"attach consumer link {self.name!r}")

    def on_attached(self) -> None:
        assert self.endpoint is not None
        if self.spec.selector:
            echoed = has_filter(self.endpoint.remote_source.filter, "jms-selector")
            self.selector_applied_remotely = echoed and not self.provider.ignores_selectors
        if self.spec.browser:  # a peer that does not answer distribution-mode copy would consume
            self.copy_honoured = self.endpoint.remote_source.distribution_mode == Terminus.DIST_MODE_COPY
            if not self.copy_honoured:
                return  # no credit: the browser refuses (amqp_jms.client.browser)
        if self.prefetch > 0:
            self.endpoint.flow(self.prefetch)
            self.credit = self.endpoint.credit

    # -- loop: inbound -------------------------------------------------------------------------
    def on_delivery_raw(self, delivery: Any) -> bool:
        """``on_delivery`` read straight from proton-c (``engine.raw``): one Python wrapper per
        unsettled message (kept for its settlement) instead of an Event and its wrappers."""
        if _partial(delivery) or not _readable(delivery):
            return True  # more frames to come, or an update of one already taken: nothing to do
        rcv = self.endpoint
        assert rcv is not None
        link = rcv._impl
        size = _pending(delivery)
        if size > 0:
            buf = _alloc("char[]", size)
            n = _recv(link, buf, size)
            data = _buffer(buf, n)[:] if n > 0 else b""
        else:
            data = b""
        _advance(link)
        self.credit = _credit(link)
        counters = self._counters
        counters.messages_received += 1
        counters.bytes_received += len(data)
        if self.spec.presettle or _settled(delivery):
            _settle(delivery)
            inbound = AmqpInbound(data, None, self)
        elif self.closed:
            _update(delivery, _PN_RELEASED)
            _settle(delivery)
            return True
        else:
            inbound = AmqpInbound(data, _hold(delivery), self)
        if self.closed:
            return True
        # queued without waking the reader, who is woken once after this batch of input
        self.sink.deliver_quietly(inbound)
        if self.answers_here:
            # read by the receiving caller itself (``read_here``), who must not schedule on
            # the loop (not its thread) and is the reader to wake anyway
            self.sink.wake()
        elif not self._wake_pending:
            self._wake_pending = True
            self.provider.loop.call_soon(self._wake_sink)
        if self._drain_waiters and not _draining(link):
            self._drain_done()
        return True

    def read_here(self, arrived: Callable[[], bool], timeout: float | None) -> None:
        """A receive waiting on this consumer's local queue reads the peer's input itself while
        the I/O thread sleeps (``AmqpProvider.read_until``), until ``arrived()``: the message
        then wakes the one thread that waits for it, not the I/O thread first, which then
        woke the receiver. Only this link's deliveries and credit are taken on the way (a
        drain waited for, or any other link's input, leaves the rest to the I/O thread)."""
        if not self._drain_waiters:
            self._answering_here(lambda: self.provider.read_until(arrived, timeout))

    def answer_drain_here(self, fut: concurrent.futures.Future[None], timeout: float | None) -> None:
        """A caller waiting for this consumer's drain (``DrainOutcome``) reads the peer's answer
        itself while the I/O thread sleeps (``AmqpProvider.read_answer``): the messages the
        drain brings and the credit it returns are this link's input, taken on the way as a
        receive takes them (``read_here``); the drain's waiters are then completed on this
        thread (concurrent futures, whose callbacks may run on any thread)."""
        self._answering_here(lambda: self.provider.read_answer(fut, timeout))

    def _answering_here(self, read: Callable[[], None]) -> None:
        """``read`` with this link's input taken on the calling thread (``answers_here``),
        unless the consumer is over."""
        if self.closed or self.failure is not None:
            return
        self.answers_here = True
        try:
            read()
        finally:
            self.answers_here = False

    def decoder(self) -> Callable[..., Any]:
        """``payload.decode`` with this link's destination and the peer's address prefixes
        (made again should the prefixes change)."""
        provider = self.provider
        qp, tp = provider.queue_prefix, provider.topic_prefix
        made = self._decoder
        if made is None or made[0] is not qp or made[1] is not tp:
            made = self._decoder = (qp, tp, payload.decoder(self.spec.destination, queue_prefix=qp,
                                                            topic_prefix=tp))
        return made[2]

    def _wake_sink(self) -> None:
        self._wake_pending = False
        self.sink.wake()

    def on_delivery(self, delivery: Delivery) -> None:
        if delivery.partial or not delivery.readable:
            return
        rcv = self.endpoint
        assert rcv is not None
        data = bytes(rcv.recv(delivery.pending) or b"")
        rcv.advance()
        self.credit = rcv.credit
        counters = self._counters
        counters.messages_received += 1
        counters.bytes_received += len(data)
        if self.spec.presettle or delivery.settled:
            delivery.settle()
            inbound = AmqpInbound(data, None, self)
        else:
            inbound = AmqpInbound(data, _hold(delivery._impl), self)
        if self.closed:
            if inbound.delivery is not None:
                inbound.delivery.update(Delivery.RELEASED)
                inbound.delivery.settle()
            return
        self.sink.deliver(inbound)
        if self._drain_waiters and not rcv.draining():
            self._drain_done()

    def on_flow(self) -> None:
        rcv = self.endpoint
        if rcv is None:
            return
        self.credit = rcv.credit
        if self._drain_waiters and rcv.credit == 0:
            self._drain_done()

    def _drain_done(self) -> None:
        assert self.endpoint is not None
        self.endpoint.drain_mode = False
        waiters, self._drain_waiters = self._drain_waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)

    # -- any thread ----------------------------------------------------------------------------
    def acknowledge(self, inbound: Any, outcome: int = ACCEPTED) -> None:
        if inbound.raw is None:  # (not ``delivery``: that builds a proton wrapper per message)
            return
        if outcome == ACCEPTED and self.prefetch > 0:
            # a prefetching consumer's accepts join one batch the I/O thread settles in a single
            # queued run with one credit refill (a closure and a post per message was a tenth
            # of an AUTO_ACKNOWLEDGE receive); anything posted in between keeps its order. With
            # nothing more prefetched (a reply, the last of a burst: the receiver waits next)
            # the accept is written at once when the I/O thread sleeps, so the next wait finds
            # it asleep too, instead of woken to write it
            if len(self.sink) or not self.provider.write_if_idle(
                    lambda: self._settle_accepted([*self._accepts.take_now(), inbound]), self._accepts.run):
                self._accepts.add(inbound)
            return
        op = lambda: self.settle(inbound, outcome)  # noqa: E731
        # a pull consumer's receive is a round trip a caller waits for: its acknowledgement is
        # written at once when the I/O thread sleeps, so the next pull finds it asleep too; a
        # prefetching consumer's are batched (one wake-up of the I/O thread per burst)
        if self.prefetch > 0 or not self.provider.write_if_idle(op):
            self.provider.loop_thread.post(op)

    def acknowledge_many(self, inbounds: Iterable[Any], outcome: int = ACCEPTED) -> None:
        # one hand-off to the I/O thread for the batch (a CLIENT_ACKNOWLEDGE session's
        # acknowledge() of a 10k segment was 10k posts, each a lock and a wake-up)
        batch = [inbound for inbound in inbounds if inbound.raw is not None]
        if batch:
            self.provider.loop_thread.post(lambda: self.settle_many(batch, outcome))

    def taken(self) -> None:
        if self.prefetch <= 0 or self._refill_posted:
            return
        if self.credit + len(self.sink) <= self.prefetch // 2:
            self._refill_posted = True
            # The caller writes the credit itself (with the accepts gathered so far) when the
            # I/O thread sleeps. Why: a receiving thread working through its prefetched messages
            # keeps the GIL, and the I/O thread, which gives it up at every proton-c call (cffi)
            # and then waits up to the 5 ms switch interval to get it back, wrote the flow only
            # once the local queue had run dry: the caller then waited a round trip to the peer
            # every half prefetch. Written here, the peer's next transfers arrive while the
            # caller still has half its prefetch to work through.
            provider = self.provider
            if not provider.write_if_idle(self._settle_taken_and_refill, self._accepts.run):
                provider.loop_thread.post(self.refill)

    @property
    def drain_on_empty(self) -> bool:
        return not self.provider.drain_unsafe

    def pull(self, drain: bool) -> concurrent.futures.Future[None]:
        fut: concurrent.futures.Future[None] = self._drain_outcome() if drain else concurrent.futures.Future()

        def go() -> None:
            rcv = self.endpoint
            if self.failure is not None or rcv is None or self.closed:
                fut.set_exception(self.failure or JMSException("the consumer is closed"))
                return
            if rcv.credit == 0 and len(self.sink) == 0:
                rcv.flow(1)
            self.credit = rcv.credit
            if not drain:
                fut.set_result(None)
                return
            self._start_drain(fut)

        self._now_or_posted(go)
        return fut

    def _now_or_posted(self, go: Callable[[], None]) -> None:
        """A request a receive waits for: made on the calling thread when the I/O thread sleeps
        (``AmqpProvider.write_if_idle``: no wake-up of it, no wait for its answer), else posted."""
        if not self.provider.write_if_idle(go):
            self.provider.loop_thread.post(go)

    def drain(self) -> concurrent.futures.Future[None]:
        fut = self._drain_outcome()

        def go() -> None:
            if self.failure is not None or self.endpoint is None or self.closed:
                fut.set_result(None)
                return
            self._start_drain(fut)

        self._now_or_posted(go)
        return fut

    def _drain_outcome(self) -> DrainOutcome:
        """The future of a drain a caller waits for, naming this consumer (its answer may be
        read on the caller's thread: ``answer_drain_here``)."""
        fut = DrainOutcome()
        fut.consumer = self
        return fut

    def _start_drain(self, fut: concurrent.futures.Future[None]) -> None:
        rcv = self.endpoint
        assert rcv is not None
        if rcv.credit == 0 or self.provider.drain_unsafe:
            # (a peer that fails on drains keeps its credit: a pull consumer then holds one
            # credit out, like prefetch 1, and what arrives later waits for the next receive)
            fut.set_result(None)
            return
        self._drain_waiters.append(fut)
        rcv.drain(0)

    def stop(self) -> concurrent.futures.Future[None]:
        fut: concurrent.futures.Future[None] = concurrent.futures.Future()

        def go() -> None:
            self.prefetch = 0  # no refill from now on
            if self.failure is not None or self.endpoint is None or self.closed or self.spec.presettle:
                fut.set_result(None)
                return
            self._start_drain(fut)

        self.provider.loop_thread.post(go)
        return fut

    def close(self) -> concurrent.futures.Future[None]:
        return self.provider.loop_thread.submit(self.detach())

    async def detach(self, close: bool = True) -> None:
        await self._take_back_credit()
        # a durable subscriber detaches without closing (also at session close): the
        # subscription outlives it
        await super().detach(close and not self.spec.durable)

    async def _take_back_credit(self) -> None:
        """Before the link goes, when there is something to give back: drain its credit, so what
        the sink gives back (released) is not sent to this link again while it detaches (Qpid
        JMS's stop-and-release). What is in flight arrives during the drain and is given back
        with the rest. With nothing to give back the link just detaches (no round trip)."""
        rcv = self.endpoint
        if (rcv is None or len(self.sink) == 0 or self.closed or self.failure is not None
                or self.session.failure is not None or self.provider.failure is not None
                or self.provider.closing or self.spec.presettle
                or self.spec.browser or rcv.credit <= 0 or self.provider.drain_unsafe):
            return
        fut: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._start_drain(fut)
        self.provider.flush()
        try:
            await asyncio.wait_for(asyncio.wrap_future(fut),
                                   self.provider.config.seconds(self.provider.config.drain_timeout_ms))
        except (TimeoutError, JMSException):
            pass  # detach anyway: what the peer still holds for us is its to count

    # -- loop: settlement and credit -----------------------------------------------------------
    def settle(self, inbound: AmqpInbound, outcome: int, txn_id: Any = None) -> None:
        if inbound.raw is None:
            return
        self._settle_one(inbound, outcome, txn_id)
        self.refill()

    def _settle_accepted(self, inbounds: list[AmqpInbound]) -> None:
        """A batch ``acknowledge`` gathered, settled accepted in order, then one refill."""
        settle_one = self._settle_one
        for inbound in inbounds:
            if inbound.raw is not None:  # (given up meanwhile: a failover, a close)
                settle_one(inbound, ACCEPTED, None)
        self.refill()

    def _settle_taken_and_refill(self) -> None:
        """``taken``'s direct write: the accepts gathered so far, then the credit."""
        self._settle_accepted(self._accepts.take_now())

    def settle_many(self, inbounds: list[AmqpInbound], outcome: int) -> None:
        """``settle`` for a batch, in order, with one credit refill after it (plain accepts of
        consecutive deliveries leave as ranges: proton-c merges settled dispositions)."""
        settle_one = self._settle_one  # (``acknowledge_many`` kept only deliveries with a ``raw``)
        for inbound in inbounds:
            settle_one(inbound, outcome, None)
        self.refill()

    def _settle_one(self, inbound: AmqpInbound, outcome: int, txn_id: Any) -> None:
        raw = inbound.raw
        if self.failure is not None or _settled(raw):
            inbound.delivery = None
            return
        txn = txn_id if txn_id is not None else (self.session.txn_id() if outcome == ACCEPTED else None)
        session = self.session
        if txn is None and outcome == ACCEPTED and session.in_doubt and not self.spec.browser:
            # acknowledged in a lost transaction: nothing goes out until the commit or rollback
            # that reports it gives the message back (Qpid JMS skips the ack the same way)
            session.hold_lost_ack(self, inbound)
            self.refill()
            return
        if txn is None and outcome == ACCEPTED:  # the common case, straight to proton-c
            inbound.delivery = None
            _update(raw, _PN_ACCEPTED)
            _settle(raw)
            self._counters.acks_accepted += 1
        else:
            d = inbound.delivery
            assert d is not None
            inbound.delivery = None
            if txn is not None:
                set_transactional_state(raw, txn, _OUTCOME_CODES[outcome])
            elif outcome == ACCEPTED:
                d.update(Delivery.ACCEPTED)
            elif outcome == REJECTED:
                d.update(Delivery.REJECTED)
            elif outcome == RELEASED:
                d.update(Delivery.RELEASED)
            else:
                d.local.failed = True
                d.local.undeliverable = outcome == MODIFIED_FAILED_UNDELIVERABLE
                d.update(Delivery.MODIFIED)
            d.settle()
            self._counters.count_outcome("acks_", _OUTCOME_CODES[outcome])

    def refill(self) -> None:
        self._refill_posted = False
        rcv = self.endpoint
        if rcv is None or self.closed or self.failure is not None or self.prefetch <= 0:
            return
        # (this runs after every settled message: the credit mirror, kept by every transfer and
        # flow, saves asking proton-c unless a refill is due)
        have = self.credit + len(self.sink)
        if have <= self.prefetch // 2:
            link = rcv._impl
            if _get_drain(link):
                return
            have = _credit(link) + len(self.sink)
            if have <= self.prefetch // 2:
                rcv.flow(self.prefetch - have)
            self.credit = _credit(link)

    def on_failed(self, exc: JMSException) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for w in waiters:
            if not w.done():
                w.set_exception(exc)
        self.sink.on_closed(exc, alone=self.closed_alone)

    def before_detach(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)
        # what the application never saw goes back with the outcome the JMS layer picks
        # (released), not left to the source's default outcome (modified-failed: counted)
        for inbound, outcome in self.sink.give_back():
            assert isinstance(inbound, AmqpInbound)  # a sink gives back what this link gave it
            self.settle(inbound, outcome)
