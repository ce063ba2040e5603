"""One AMQP session per JMS session, with its links and (if transacted) its coordinator."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proton import Delivery

from ...exceptions import JMSException, TransactionRolledBackException
from ..base import (
    MODIFIED_FAILED,
    CommitOutcome,
    ConsumerSpec,
    InboundSink,
    ProducerSpec,
    ProviderProducer,
    ProviderSession,
)
from ..errors import to_jms
from .anonymous import AnonymousFallbackProducer
from .consumer import AmqpConsumer
from .producer import AmqpProducer, ControlRequest, TxCoordinator

if TYPE_CHECKING:
    from .connection import AmqpProvider

__all__ = ["AmqpSession", "InDoubtCommit"]

DECLARE = 0x31
DISCHARGE = 0x32
DECLARED = 0x33


@dataclass(frozen=True, slots=True)
class InDoubtCommit:
    """A commit whose Discharge went out and whose answer did not come back: what a session
    on the next connection asks about (``AmqpSession.commit_outcome``), only if its peer keeps
    outcomes in the same ``store`` (never another broker)."""

    store: str
    txn_id: bytes


class AmqpSession(ProviderSession):
    def __init__(self, provider: AmqpProvider, session_id: str, transacted: bool) -> None:
        self.provider = provider
        self.id = session_id
        self.transacted = transacted
        self.endpoint: Any = None
        self.links: set[Any] = set()
        self.failure: JMSException | None = None
        self.closed = False
        self._opened: asyncio.Future[None] | None = None
        self._ended: asyncio.Future[None] | None = None
        self._ids = itertools.count(1)
        self.coordinator: TxCoordinator | None = None
        #: a send of the current transaction the peer refused while nobody waited: fails commit
        self.txn_send_failure: JMSException | None = None
        #: acknowledgements held back while the transaction is lost (``in_doubt``), each
        #: (consumer, inbound): given back as failed deliveries when the commit/rollback says so
        self._lost_acks: list[tuple[AmqpConsumer, Any]] = []
        self._txn_lock = asyncio.Lock()  # one commit/rollback (and its new declare) at a time
        #: the commit on the wire whose answer has not arrived, when the peer could be asked
        #: about it from another connection (``in_doubt_commit``)
        self._unanswered_commit: InDoubtCommit | None = None

    # -- loop ----------------------------------------------------------------------------------
    async def open(self) -> None:
        assert self.provider.engine is not None
        endpoint = self.provider.engine.connection.session()
        endpoint.jms = self
        self.endpoint = endpoint
        self.provider.sessions.add(self)
        self._opened = self.provider.loop.create_future()
        endpoint.open()
        try:
            await self.provider.await_remote(self._opened, self.provider.request_timeout(), "begin a session")
            if self.transacted:
                self.coordinator = TxCoordinator(self, f"qpid-jms:coordinator:{self.id}")
                await self.coordinator.open()
                await self._declare()
        except BaseException:
            self.provider.sessions.discard(self)
            if self.failure is None and endpoint.state & endpoint.LOCAL_ACTIVE:
                # the JMS session failed to be created (no answer to begin, the coordinator
                # refused, a declare refused or unanswered): end the AMQP one too, as Qpid JMS does
                self.closed = True
                endpoint.close()
                self.provider.flush()
            raise

    def on_remote_open(self) -> None:
        if self._opened is not None and not self._opened.done():
            self._opened.set_result(None)

    def on_remote_close(self) -> None:
        cond = self.endpoint.remote_condition
        name = str(cond.name) if cond is not None and cond.name else None
        desc = cond.description if cond is not None else None
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)
            return
        self.endpoint.close()
        self.fail(to_jms(name, desc, "the peer ended the session"))

    def fail(self, exc: JMSException) -> None:
        if self.failure is not None:
            return
        self.failure = exc
        for fut in (self._opened, self._ended):
            if fut is not None and not fut.done():
                fut.set_exception(exc)
                fut.exception()
        for link in list(self.links):
            link.fail(exc)
        self.provider.sessions.discard(self)

    def unawaited_send_failed(self, exc: JMSException) -> None:
        """The peer refused a send nobody waited for (Qpid JMS): in a transaction the commit
        fails (rolled back); otherwise the connection's ExceptionListener hears of it."""
        if self.coordinator is not None:
            if self.txn_send_failure is None:
                self.txn_send_failure = exc
            return
        self.provider.report_async(exc)

    def txn_id(self) -> Any:
        """The transaction sends and acknowledgements go in; None outside one, or while the
        transaction is lost (``in_doubt``)."""
        c = self.coordinator
        return c.txn_id if c is not None and c.failure is None else None

    @property
    def in_doubt(self) -> bool:
        """A transacted session whose transaction is lost: the peer closed the coordinator, or
        the last declare failed. Qpid JMS's rule: until the commit or rollback that reports it,
        its sends go nowhere and its acknowledgements are held (nothing may count outside the
        transaction the application believes it is in)."""
        return self.coordinator is not None and self.txn_id() is None

    def hold_lost_ack(self, consumer: AmqpConsumer, inbound: Any) -> None:
        """An acknowledgement in a lost transaction: kept unsettled until the commit or rollback
        gives the message back (``_give_back_lost_acks``)."""
        self._lost_acks.append((consumer, inbound))

    def _give_back_lost_acks(self) -> None:
        """The lost transaction ends: what it consumed comes back as a failed delivery
        (``modified{delivery-failed}``, redelivered with its count raised), as a rollback would."""
        held, self._lost_acks = self._lost_acks, []
        for consumer, inbound in held:
            consumer.settle(inbound, MODIFIED_FAILED)
        if held:
            self.provider.flush()  # on the wire before what the session does next

    def _link_name(self, kind: str, address: str | None) -> str:
        return f"qpid-jms:{kind}:{self.id}:{next(self._ids)}:{address or ''}"

    async def _declare(self) -> None:
        assert self.coordinator is not None
        self.coordinator.txn_id = None
        await self._declared(self.coordinator, self.coordinator.request(DECLARE, []))

    @staticmethod
    async def _declared(coordinator: TxCoordinator, request: ControlRequest) -> None:
        """Wait for the answer to a declare sent earlier; the transaction it names is current."""
        state, d = await coordinator.answer(request)
        if state != DECLARED:
            c = d.remote.condition
            raise to_jms(str(c.name) if c is not None else None, c.description if c is not None else None,
                         "the peer refused to declare a transaction")
        data: Any = d.remote.data or [None]
        txn_id = data[0]
        # proton hands binary as a memoryview into the delivery's memory, which is reused once
        # the delivery goes: copy it, or a later discharge names another transaction's id
        coordinator.txn_id = bytes(txn_id) if isinstance(txn_id, memoryview) else txn_id

    async def _discharge(self, fail: bool) -> None:
        async with self._txn_lock:
            self._give_back_lost_acks()  # (none unless the transaction was lost at some point)
            if self.in_doubt:
                await self._end_lost_transaction(fail)
            else:
                await self._discharge_current(fail)

    async def _discharge_current(self, fail: bool) -> None:
        """Discharge the current transaction and declare the next one in the same round trip.

        As Qpid JMS does, the declare follows the discharge onto the wire before the discharge's
        answer: the peer answers both in order, so a commit costs one round trip, not two. The
        outcome is the discharge's (a refused commit raises TransactionRolledBackException even
        if the declare failed too); a failed declare after a good discharge is raised, and
        either way leaves the session ``in_doubt`` until the next commit or rollback. The
        declared transaction is current whatever the discharge's outcome, even when the
        discharge got no answer (in doubt: it may have committed). A closing session declares
        none: its rollback is the last discharge."""
        coordinator = self.coordinator
        assert coordinator is not None
        txn = coordinator.txn_id
        if not fail:
            # sends of the transaction do not wait for their outcome: each must be on the wire
            # (some may wait for credit) before the discharge that commits them
            timeout = self.provider.request_timeout()
            for link in list(self.links):
                if isinstance(link, AmqpProducer) and not await link.all_written(timeout):
                    self.txn_send_failure = self.txn_send_failure or JMSException(
                        f"a message of the transaction got no credit from the peer on {link.name!r}")
        coordinator.txn_id = None
        refused, self.txn_send_failure = self.txn_send_failure, None
        store = coordinator.outcomes_store
        if not fail and refused is None and store is not None and isinstance(txn, bytes):
            self._unanswered_commit = InDoubtCommit(store, txn)
        declared: ControlRequest | None = None
        try:
            discharged = coordinator.request(DISCHARGE, [txn, fail or refused is not None])
            if self.failure is None and not self.closed:
                declared = coordinator.request(DECLARE, [], right_behind=True)
            state, d = await coordinator.answer(discharged)
            self._unanswered_commit = None
        except JMSException:
            if coordinator.failure is not None:  # the peer closed the coordinator meanwhile
                _ignore_failure(declared)  # failed with the link: the new coordinator declares
                await self._end_lost_transaction(fail)
            elif declared is not None:
                try:
                    await self._declared(coordinator, declared)  # the transaction to go on in
                except JMSException:
                    pass  # in doubt: the next commit or rollback says so and declares again
            raise
        # the peer answers in order: a refusal that arrived before the discharge's answer is
        # of this transaction, not of the next one
        late, self.txn_send_failure = self.txn_send_failure, None
        refused = refused or late
        failed: JMSException | None = None
        if refused is not None and not fail:
            failed = TransactionRolledBackException(
                f"the commit failed and the transaction was rolled back: {refused.reason}",
                refused.error_code, refused)
        elif state != Delivery.ACCEPTED and not fail:
            c = d.remote.condition
            name = str(c.name) if c is not None and c.name else "amqp:transaction:rollback"
            failed = to_jms(name, c.description if c is not None else None,
                            "the commit failed and the transaction was rolled back",
                            default=TransactionRolledBackException)
        if declared is not None:
            try:
                await self._declared(coordinator, declared)
            except JMSException:
                if failed is None and self.failure is None and not self.closed:
                    raise  # (a session closed or failed meanwhile needs no next transaction)
        if failed is not None:
            raise failed

    async def _end_lost_transaction(self, fail: bool) -> None:
        """Commit or rollback of a lost transaction (``in_doubt``): give back what it consumed,
        begin a new one (a new coordinator link if the peer closed the old one), and raise: a
        commit is rolled back (TransactionRolledBackException); a rollback could not be asked for
        (JMSException, as Qpid JMS) unless no transaction was ever declared."""
        old = self.coordinator
        assert old is not None
        lost = old.failure
        self._give_back_lost_acks()
        self.txn_send_failure = None
        again: JMSException | None = None
        if self.failure is None and not self.closed:
            try:
                if old.failure is not None or old.closed:
                    self.coordinator = TxCoordinator(self, old.name)
                    await self.coordinator.open()
                await self._declare()
            except JMSException as exc:
                again = exc  # still in doubt: the next commit or rollback tries again
        why = lost.reason if lost is not None else "the peer did not declare a transaction"
        if again is not None:
            why += f"; beginning a new transaction failed too: {again.reason}"
        if not fail:
            raise TransactionRolledBackException(
                f"the commit failed and the transaction was rolled back: {why}",
                lost.error_code if lost is not None else None, lost or again)
        if lost is not None or again is not None:
            raise JMSException(f"the rollback could not be sent: {why} (the peer rolls back a transaction "
                               "whose coordinator is gone)", lost.error_code if lost is not None else None,
                               lost or again)

    # -- any thread ----------------------------------------------------------------------------
    def in_doubt_commit(self) -> InDoubtCommit | None:
        return self._unanswered_commit

    def commit_outcome(self, token: object) -> concurrent.futures.Future[CommitOutcome]:
        """Ask this session's coordinator what became of ``token`` (an ``InDoubtCommit`` of a
        session on a lost connection): the same Discharge again, which a peer offering
        ``amqp-jms:txn-outcomes`` answers from what it kept. Never sent to another store."""

        async def ask() -> CommitOutcome:
            self.check()
            c = self.coordinator
            if not isinstance(token, InDoubtCommit) or c is None or c.outcomes_store != token.store:
                return CommitOutcome.NOT_ASKED
            async with self._txn_lock:
                state, d = await c.control(DISCHARGE, [token.txn_id, False])
            if state == Delivery.ACCEPTED:
                return CommitOutcome.COMMITTED
            cond = d.remote.condition
            if cond is not None and str(cond.name) == "amqp:transaction:rollback":
                return CommitOutcome.ROLLED_BACK
            return CommitOutcome.UNKNOWN

        return self.provider.loop_thread.submit(ask())

    def create_producer(self, spec: ProducerSpec) -> concurrent.futures.Future[Any]:
        async def go() -> ProviderProducer:
            self.check()
            if spec.destination is None and not self.provider.capabilities.anonymous_relay:
                # the peer cannot relay: a link per destination, opened as sends need them
                return AnonymousFallbackProducer(self, spec.presettle)
            addr = spec.destination.name if spec.destination is not None else None
            prod = AmqpProducer(self, spec, spec.link_name or self._link_name("sender", addr))
            await prod.open()
            return prod

        return self.provider.loop_thread.submit(go())

    def create_consumer(self, spec: ConsumerSpec, sink: InboundSink) -> concurrent.futures.Future[Any]:
        async def go() -> AmqpConsumer:
            self.check()
            name = spec.subscription_name or spec.link_name or self._link_name("receiver",
                                                                               spec.destination.name)
            cons = AmqpConsumer(self, spec, sink, name)
            await cons.open()
            return cons

        return self.provider.loop_thread.submit(go())

    def commit(self) -> concurrent.futures.Future[None]:
        return self.provider.loop_thread.submit(_uncancelled(lambda: self._discharge(False)))

    def rollback(self, before: Callable[[], Iterable[Any]]) -> concurrent.futures.Future[None]:
        async def go() -> None:
            self.check()
            for inbound in before():
                self._release(inbound)
            try:
                await _uncancelled(lambda: self._discharge(True))
            finally:
                for link in list(self.links):
                    if isinstance(link, AmqpConsumer):
                        link.refill()

        return self.provider.loop_thread.submit(go())

    @staticmethod
    def _release(inbound: Any) -> None:
        """Give a prefetched, never-delivered message back to the peer (not transactional)."""
        d = inbound.delivery
        inbound.delivery = None
        if d is not None and not d.settled:
            d.update(Delivery.RELEASED)
            d.settle()

    def close(self, before: Callable[[], Iterable[Any]] | None = None) -> concurrent.futures.Future[None]:
        # uncancelled: a caller whose jms.closeTimeout ends first (its wait is the whole close;
        # each step here has its own) must not cut the close short, or the End is never sent
        # and the session lives on at the peer for the connection's life
        return self.provider.loop_thread.submit(_uncancelled(lambda: self._close(before)))

    async def _close(self, before: Callable[[], Iterable[Any]] | None = None) -> None:
        if self.closed:
            return
        self.closed = True  # also keeps _discharge from declaring a new transaction
        await self._rollback_on_close(before)
        for link in list(self.links):
            try:
                await link.detach()
            except JMSException:
                pass
        self.provider.sessions.discard(self)
        if self.failure is not None or self.provider.failure is not None or self.provider.closing:
            return
        self._ended = self.provider.loop.create_future()
        self.endpoint.close()
        try:
            timeout = self.provider.config.seconds(self.provider.config.close_timeout_ms)
            await self.provider.await_remote(self._ended, timeout, "end the session")
        except JMSException:
            if self.failure is not None or self.provider.failure is not None:
                return  # the session or the connection failed meanwhile: the session went with it
            # No answer within jms.closeTimeout: the caller hears it (Qpid JMS throws
            # JmsOperationTimedOutException). Swallowed here, the caller's own wait of the same
            # length decided the outcome: whichever thread woke first, so close() sometimes
            # returned quietly after the full wait and sometimes raised.
            raise

    async def _rollback_on_close(self, before: Callable[[], Iterable[Any]] | None) -> None:
        """JMS 2.0 (Session.close): closing a transacted session rolls back its transaction.

        Like Qpid JMS, discharge(fail=true) explicitly before the links go, so the peer
        unlocks what the transaction consumed now, not when the connection closes; messages
        prefetched but never delivered are released first, as on rollback().
        """
        if self.coordinator is None or self.in_doubt or self.failure is not None \
                or self.provider.failure is not None or self.provider.closing:
            self._give_back_lost_acks()
            return
        await self._drain_consumers()
        for inbound in before() if before is not None else ():
            self._release(inbound)
        try:
            await self._discharge(True)
        except JMSException:
            pass  # closing anyway: the peer rolls back when the coordinator/session goes

    async def _drain_consumers(self) -> None:
        """Take back the consumers' credit, so the peer does not hand what the rollback returns
        to links about to detach (each bounce would count as another delivery attempt)."""
        waits: list[asyncio.Future[None]] = []
        for link in list(self.links):
            rcv = link.endpoint if isinstance(link, AmqpConsumer) else None
            if rcv is not None and not link.closed and link.failure is None and rcv.credit > 0:
                fut: concurrent.futures.Future[None] = concurrent.futures.Future()
                link._start_drain(fut)
                waits.append(asyncio.wrap_future(fut))
        if not waits:
            return
        self.provider.flush()
        timeout = self.provider.config.seconds(self.provider.config.close_timeout_ms)
        try:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)
        except (TimeoutError, JMSException):
            pass  # roll back anyway; what still arrives is released when its link detaches

    def check(self) -> None:
        self.provider.check_usable()
        if self.failure is not None:
            raise type(self.failure)(self.failure.reason, self.failure.error_code, self.failure)
        if self.closed:
            from ...exceptions import IllegalStateException

            raise IllegalStateException("the session is closed")


def _ignore_failure(request: ControlRequest | None) -> None:
    """A request whose answer nobody will wait for: its failure is retrieved here, so asyncio
    does not log it as never retrieved."""
    if request is not None:
        request.answer.add_done_callback(lambda f: f.cancelled() or f.exception())


async def _uncancelled(make: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a discharge or a session close to its end even if the caller stops waiting (a commit,
    rollback or close that timed out for the application): the new transaction a discharge
    declares afterwards must not be cut off half-way, or the session would be left without one;
    a close cut off before its End leaves the session open at the peer.

    The coroutine is made here, once this runs: made by the caller, it would be left never
    awaited (and Python would warn so) when the I/O thread stopped before this started, as when
    a crash cuts a commit."""
    await asyncio.shield(make())
