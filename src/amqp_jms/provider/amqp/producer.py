"""Sending links: producer (and the transaction coordinator's control link)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from proton import Delivery, Link

from ...engine.raw import ACCEPTED, NO_OUTCOME, addr, ffi, lib, set_transactional_state, transactional_state
from ...exceptions import IllegalStateException, JMSException
from ...mapping.codec import AMQP_VALUE, encode_sections
from ...message import MessageData
from ...types import Described, ULong
from .. import payload
from ..base import ProducerSpec, ProviderProducer, SendOutcome
from ..errors import TRANSACTIONAL_STATE, outcome_error
from .addressing import link_address
from .capabilities import txn_outcomes_of
from .connection import NotIdle
from .link import AmqpLink, fail_waiting, take_answer
from .terminus import OUTCOMES, capability_for, data_symbols, put_symbols

if TYPE_CHECKING:
    from .session import AmqpSession

__all__ = ["AmqpProducer"]

#: messages a producer may have handed over but not yet written (waiting for credit)
SEND_WINDOW = 1024
#: a send nobody waits for that comes at least this long after the producer's last one is
#: written by its own thread when the I/O thread sleeps (a reply, a sparse event), not handed
#: over: its wake-up of the I/O thread would be most of its latency. Sends closer together (a
#: burst) are handed over, batched into one write and one wake-up for many.
SPARSE_SEND_SECONDS = 100e-6
_remote_state, _delivery_tag = lib.pn_delivery_remote_state, lib.pn_delivery_tag
_settle = lib.pn_delivery_settle
_new_delivery, _send, _advance = lib.pn_delivery, lib.pn_link_send, lib.pn_link_advance
_from_buffer = ffi.from_buffer
_queued = lib.pn_link_queued
_unpack = ffi.unpack


class _Window:
    """Back-pressure: ``send`` blocks while ``SEND_WINDOW`` messages wait for link credit.

    Without it a fast producer against a slow peer would buffer without bound in proton (and a
    close would then wait for the whole backlog). Slots are taken on the sending thread and
    given back on the I/O thread once proton has written the transfer.
    """

    def __init__(self, size: int) -> None:
        self._free = size
        # a plain lock taken on every send (in C), its condition only by a sender that must
        # wait; ``_blocked`` counts those, so that a release with none waiting notifies nobody
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._blocked = 0
        self.broken: JMSException | None = None

    def acquire(self, timeout: float | None) -> None:
        with self._lock:
            if self._free > 0 and self.broken is None:
                self._free -= 1
                return
            self._blocked += 1
            try:
                if not self._cond.wait_for(lambda: self._free > 0 or self.broken is not None, timeout):
                    raise JMSException(f"send timed out after {timeout} s waiting for credit from the peer")
            finally:
                self._blocked -= 1
            if self.broken is not None:
                raise type(self.broken)(self.broken.reason, self.broken.error_code, self.broken)
            self._free -= 1

    def release(self, n: int) -> None:
        with self._lock:
            self._free += n
            if self._blocked:
                self._cond.notify(n)

    def break_(self, exc: JMSException) -> None:
        with self._lock:
            self.broken = exc
            self._cond.notify_all()


class AmqpProducer(AmqpLink, ProviderProducer):
    kind = "producer"
    answers_here = True

    def __init__(self, session: AmqpSession, spec: ProducerSpec, name: str) -> None:
        super().__init__(session, name)
        self.spec = spec
        self._tag = 0
        self._waiting: dict[str, concurrent.futures.Future[None]] = {}
        #: tags of sends whose ``accepted`` a waiting caller took before their delivery event was
        #: handled (``accepted_alone``): that event then only settles, counted already
        self._answered: set[str] = set()
        self._window = _Window(SEND_WINDOW)
        self._last_unawaited = 0.0  # time.monotonic() of the last send nobody waits for
        self._unwritten = 0  # slots taken by messages proton has not written yet (loop side)
        self._all_written: asyncio.Future[None] | None = None
        cfg = session.provider.config
        self._send_timeout = cfg.seconds(cfg.send_timeout_ms)
        self._counters = session.provider.counters
        self._link_addr = 0  # the pn_link_t's address, once attached (``AmqpProvider.transfer_out``)

    async def open(self) -> None:
        snd = self.session.endpoint.sender(self.name)
        dest = self.spec.destination
        if dest is not None:
            snd.target.address = link_address(dest, self.provider)
            put_symbols(snd.target.capabilities, [capability_for(dest)])
        put_symbols(snd.source.outcomes, OUTCOMES)
        snd.snd_settle_mode = Link.SND_SETTLED if self.spec.presettle else Link.SND_UNSETTLED
        snd.rcv_settle_mode = Link.RCV_FIRST
        await self.attach(snd, f"attach producer link {self.name!r}")
        self._link_addr = addr(snd)

    # -- any thread ----------------------------------------------------------------------------
    def send(
        self, message: MessageData, sync: bool, time_to_live: int = 0
    ) -> concurrent.futures.Future[None] | None:
        provider = self.provider
        if self.closed_alone:
            # the producer is closed for good (Qpid JMS's checkClosed), and a send must say so
            # rather than go nowhere
            failure = self.failure
            assert failure is not None
            raise IllegalStateException(
                f"the producer was closed due to an unrecoverable error: {failure.reason}",
                failure.error_code, failure)
        tracing = provider.tracing
        span = None
        if tracing is not None:
            span, message = tracing.sending(message, self.spec.destination)
        data = payload.encode(message, time_to_live=time_to_live, queue_prefix=provider.queue_prefix,
                              topic_prefix=provider.topic_prefix)
        self._window.acquire(self._send_timeout)
        fut: concurrent.futures.Future[None] | None = None
        if sync and not self.spec.presettle:
            fut = SendOutcome()
            # a send with nothing else in flight on this link (a synchronous producer's): written
            # by this thread when the I/O thread sleeps, one thread hand-off per round trip, not
            # two. Sends behind others (completion listeners, asyncio pipelines) are batched
            # (``post``: one wake-up of the I/O thread per burst).
            direct = not self._waiting
        else:
            # one nobody waits for: written here only after a pause (``SPARSE_SEND_SECONDS``)
            now = time.monotonic()
            direct = now - self._last_unawaited >= SPARSE_SEND_SECONDS
            self._last_unawaited = now
        if direct and provider.write_if_idle(lambda: self._transfer(data, fut, here=True)):
            if tracing is not None:
                tracing.sent(span, fut)
            return fut
        provider.loop_thread.post(lambda: self._transfer(data, fut))
        if tracing is not None:
            tracing.sent(span, fut)
        return fut

    def close(self) -> concurrent.futures.Future[None]:
        return self.provider.loop_thread.submit(self.detach())

    # -- loop ----------------------------------------------------------------------------------
    def _transfer(self, data: bytes, fut: concurrent.futures.Future[None] | None, here: bool = False) -> None:
        """The transfer, on the I/O thread or, ``here``, on the sending thread holding the loop
        (``write_if_idle``)."""
        if self.failure is not None or self.closed:
            if here and fut is None:
                # a send nobody waits for, on a link that failed or closed meanwhile: handed over,
                # so that its failure reaches the ExceptionListener from the I/O thread, as the
                # provider's listener expects
                raise NotIdle
            self._window.release(1)
            exc = self.failure or JMSException("the producer is closed")
            if fut is not None:
                fut.set_exception(exc)
            elif self.closed_alone:
                # a send nobody waits for, handed over as the peer closed the link: not sent
                self.session.unawaited_send_failed(JMSException(
                    f"a message sent without waiting was not sent: the peer closed the link: "
                    f"{exc.reason}", exc.error_code, exc))
            return
        snd = self.endpoint
        assert snd is not None
        self._tag += 1
        tag = str(self._tag)
        session = self.session
        txn = session.txn_id()
        if txn is None and session.in_doubt:
            # the transaction is lost (the peer closed its coordinator, or a declare failed): as
            # Qpid JMS, the send goes nowhere and the commit reports the transaction rolled back
            self._window.release(1)
            if fut is not None:
                fut.set_result(None)
            return
        tag_bytes = tag.encode()
        presettle = self.spec.presettle
        # on the sending thread, the transfer and its write in one C call where it is built
        # (not for a transaction's send, whose delivery carries a state before its bytes, nor a
        # presettled one, settled before proton writes it)
        d = (self.provider.transfer_out(self._link_addr, tag_bytes, data)
             if here and txn is None and not presettle and self._link_addr else None)
        if d is None:
            # straight to proton-c: no Delivery wrapper per message
            impl = snd._impl
            d = _new_delivery(impl, (len(tag_bytes), _from_buffer(tag_bytes)))
            if txn is not None:
                set_transactional_state(d, txn)
            _send(impl, _from_buffer(data), len(data))
            _advance(impl)
            if presettle:
                _settle(d)
        self._unwritten += 1
        self.provider.unwritten.add(self)
        counters = self._counters
        counters.messages_sent += 1
        counters.bytes_sent += len(data)
        if presettle:
            if fut is not None:
                fut.set_result(None)
        elif fut is not None:
            self._waiting[tag] = fut
            fut.transfer = (d, self, tag)  # type: ignore[attr-defined]  # (a SendOutcome)

    def on_delivery_raw(self, delivery: Any) -> bool:
        """``accepted``, the answer to nearly every send, read straight from proton-c; any other
        outcome (and a settlement without one) goes through ``on_delivery``."""
        state = _remote_state(delivery)
        if state != ACCEPTED:
            # a transacted send's answer is accepted inside a transactional state
            if state != TRANSACTIONAL_STATE or transactional_state(delivery)[1] not in (ACCEPTED, NO_OUTCOME):
                return False
        tag = _delivery_tag(delivery)
        key = _unpack(tag.start, tag.size).decode()
        fut = self._waiting.pop(key, None)
        if fut is not None:
            self.provider.completed.append(fut)  # resolved at the end of the flush
        elif key in self._answered:  # its caller took the answer already (and counted it)
            self._answered.discard(key)
            _settle(delivery)
            return True
        _settle(delivery)
        self._counters.sends_accepted += 1
        return True

    def accepted_alone(self, delivery: Any, tag: str, fut: concurrent.futures.Future[None]) -> bool:
        """The answer a waiting caller read on its own thread, when that answer's event is the
        only one pending (``AmqpProvider._handle_here``): ``accepted`` resolves ``fut`` at
        once and leaves the event pending, to be settled by whoever next takes the events
        (``on_delivery_raw``), off the caller's round trip. Any other outcome (a refusal, a
        transactional state): False, for the usual path."""
        if _remote_state(delivery) != ACCEPTED:
            return False
        self._waiting.pop(tag, None)
        self._answered.add(tag)
        self._counters.sends_accepted += 1
        if not fut.done():  # (as ``_resolve_completed``: a send given up meanwhile stays so)
            fut.set_result(None)
        return True

    def on_delivery(self, delivery: Delivery) -> None:
        answer = take_answer(self._waiting, delivery)
        if answer is None:
            return
        state, fut = answer
        self._counters.count_outcome("sends_", state)
        if fut is not None and not fut.done():
            err = outcome_error(state, delivery, "the message")
            if err is None:
                fut.set_result(None)
            else:
                fut.set_exception(err)
        elif fut is None:  # a send nobody waits for: its failure goes to the session
            err = outcome_error(state, delivery, "a message sent without waiting")
            if err is not None:
                self.session.unawaited_send_failed(err)
        delivery.settle()

    def written(self) -> bool:
        """After the engine's output: give back the slots of transfers proton has written.

        Returns True while some are still waiting for credit."""
        snd = self.endpoint
        queued = _queued(snd._impl) if snd is not None and not self.closed else 0
        done = self._unwritten - queued
        if done > 0:
            self._unwritten = queued
            self._window.release(done)
        if self._unwritten == 0 and self._all_written is not None and not self._all_written.done():
            self._all_written.set_result(None)
        return self._unwritten > 0

    async def all_written(self, timeout: float | None) -> bool:
        """Wait (up to ``timeout``) until proton has written every transfer handed over: those
        still waiting for credit. False on timeout."""
        if self._unwritten and self.failure is None and not self.closed:
            if self._all_written is None or self._all_written.done():
                self._all_written = self.provider.loop.create_future()
            try:
                await asyncio.wait_for(asyncio.shield(self._all_written), timeout)
            except TimeoutError:
                return False
        return True

    async def detach(self, close: bool = True) -> None:
        """Close waits (up to the close timeout) for messages still waiting for credit."""
        await self.all_written(self.provider.config.seconds(self.provider.config.close_timeout_ms))
        await super().detach(close)

    def before_detach(self) -> None:
        fail_waiting(self._waiting,
                     JMSException("the producer was closed before the peer settled the message"))
        self._window.break_(JMSException("the producer is closed"))

    def on_failed(self, exc: JMSException) -> None:
        snd = self.endpoint
        unawaited = (snd.unsettled if snd is not None else 0) - len(self._waiting)
        fail_waiting(self._waiting, exc)
        self._window.break_(exc)
        if unawaited > 0 and self.closed_alone:
            # the peer closed this link alone with sends nobody waits for still unsettled: their
            # fate is unknown, so say so where an unawaited send's failure goes (a transaction's
            # commit, else the ExceptionListener); a lost connection is reported once, elsewhere
            self.session.unawaited_send_failed(JMSException(
                f"{unawaited} message(s) sent without waiting got no outcome before the peer closed "
                f"the link: {exc.reason}", exc.error_code, exc))



class ControlRequest(NamedTuple):
    """A declare or discharge on its way: the future the peer's answer resolves, and the loop
    time it was sent (its request timeout counts from then)."""

    answer: asyncio.Future[tuple[int, Delivery]]
    sent_at: float


class TxCoordinator(AmqpLink):
    """The control link to the peer's coordinator (``amqp:local-transactions``)."""

    kind = "transaction coordinator"

    def __init__(self, session: AmqpSession, name: str) -> None:
        super().__init__(session, name)
        self._tag = 0
        self._waiting: dict[str, Any] = {}
        self.txn_id: Any = None
        #: the store the peer keeps commit outcomes in, when a reconnected client may ask it
        #: about a commit whose answer was lost (``capabilities.txn_outcomes_of``); None: it keeps none
        self.outcomes_store: str | None = None

    async def open(self) -> None:
        from proton import Terminus

        snd = self.session.endpoint.sender(self.name)
        snd.target.type = Terminus.COORDINATOR
        put_symbols(snd.target.capabilities, ["amqp:local-transactions"])
        put_symbols(snd.source.outcomes, OUTCOMES)
        await self.attach(snd, "attach the transaction coordinator")
        self.outcomes_store = txn_outcomes_of(data_symbols(snd.remote_target.capabilities),
                                              self.provider.remote_properties)

    async def control(self, descriptor: int, fields: list[Any]) -> tuple[int, Delivery]:
        """Send a declare or discharge and wait for the peer's answer."""
        return await self.answer(self.request(descriptor, fields))

    def request(self, descriptor: int, fields: list[Any], *, right_behind: bool = False) -> ControlRequest:
        """Send a declare or discharge without waiting: its answer comes to ``answer``. Two
        requests sent back to back (a discharge, then the next declare, ``right_behind`` it)
        share one write and one round trip: the peer reads and answers both in one turn."""
        self.check()
        if not right_behind:
            # proton may write a new transfer before dispositions queued earlier on other links:
            # push those out first, so every transactional ack precedes its discharge on the
            # wire (nothing can be queued between two requests made back to back)
            self.provider.flush()
        snd = self.endpoint
        assert snd is not None
        self._tag += 1
        tag = f"txn-{self._tag}"
        fut: asyncio.Future[tuple[int, Delivery]] = self.provider.loop.create_future()
        self._waiting[tag] = fut
        snd.delivery(tag)
        # the control as an amqp-value section alone, as Qpid JMS sends it (proton's Message
        # would add an empty header and properties, and cost about five times as much)
        snd.stream(encode_sections(body_type=AMQP_VALUE, body=Described(ULong(descriptor), fields)))
        snd.advance()
        return ControlRequest(fut, self.provider.loop.time())

    async def answer(self, request: ControlRequest) -> tuple[int, Delivery]:
        """The peer's answer to a request: JMSException if none comes within the request
        timeout counted from when it was sent (a declare sent with a discharge has waited as
        long as the discharge), or if the link fails first."""
        result: tuple[int, Delivery] = await self.provider.await_remote(
            request.answer, self.provider.request_timeout(), "answer a transaction request",
            since=request.sent_at)
        return result

    def on_delivery(self, delivery: Delivery) -> None:
        answer = take_answer(self._waiting, delivery)
        if answer is None:
            return
        state, fut = answer
        if fut is not None and not fut.done():
            fut.set_result((state, delivery))
        delivery.settle()

    def on_failed(self, exc: JMSException) -> None:
        fail_waiting(self._waiting, exc)

