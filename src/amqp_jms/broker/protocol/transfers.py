"""Transfers and dispositions of one connection: the per-message part of the broker protocol.

``TransferHandling`` is mixed into :class:`~amqp_jms.broker.protocol.connection.BrokerConnection`:
incoming transfers (to a node, through the anonymous relay, under a transaction, to the
coordinator) and outcomes of outgoing deliveries. Plain transfers and plain outcomes take the
cffi path (``on_delivery_raw``); the rest goes through proton's Python ``Delivery``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proton import Condition, Delivery

from ..._logs import BROKER as log
from ..routing.authorization import Permission
from ..routing.depth import check_depth
from ..routing.nodes import NodeKind, Router
from ..routing.transactions import Transaction, TransactionManager
from ..storage.large import DRAIN_AT, IncomingSpool
from ..storage.message import BrokerMessage
from ..storage.message_bytes import coordinator_request
from ._fast import ACCEPTED, addr, ffi, lib, ptr_addr, set_transactional_state, transactional_state
from .links import TRANSACTIONAL_STATE, IncomingLink, OutgoingLink

if TYPE_CHECKING:
    from ..routing.core import BrokerCore
    from .cbs_link import CbsLink

__all__ = ["TransferHandling"]

REJECTED = 0x25
DECLARED = 0x33


class TransferHandling:
    """Mixin: needs the connection's links, router, transactions, core and flush hook."""

    id: int
    user: str | None
    core: BrokerCore
    router: Router
    txns: TransactionManager
    links: dict[int, OutgoingLink | IncomingLink]
    closed: bool
    dirty: Callable[[], None]
    flush: Callable[[], None]
    _durable_waiting: dict[int, list[Any]]
    _end_link: Callable[..., None]
    cbs_link: CbsLink
    max_message_size: int
    spooling: int  # bytes this connection's unfinished incoming transfers hold
    max_value_depth: int
    depth_floor: int  # messages at most this long cannot nest past max_value_depth
    fail_when_full: bool  # address-full policy FAIL: check the target queue per message
    large_threshold: int  # a delivery at least this big is spooled to a file as it arrives
    refusal: Callable[[str, Permission], str | None]

    # -- transfers and dispositions ------------------------------------------------------------
    def on_delivery_raw(self, d: Any) -> None:
        """A DELIVERY event, as a ``pn_delivery_t`` pointer: the per-message hot path.

        Plain transfers and plain outcomes are handled with proton-c calls only; anything
        unusual (transactions, the coordinator, rejections with an error, unknown links) goes
        to the wrapper-based path below.
        """
        lnk = lib.pn_delivery_link(d)
        st = self.links.get(ptr_addr(lnk))
        if st is None:
            if lib.pn_link_is_receiver(lnk):
                _discard(lnk, d)  # a link we ended (e.g. message too large): drop what still comes
                self.dirty()
                return
            self._on_delivery(Delivery.wrap(d))
            return
        if type(st) is OutgoingLink:
            st.on_disposition_raw(d)
            return
        assert isinstance(st, IncomingLink)
        if lib.pn_link_credit(lnk) <= 0 and not st.closed:
            # proton takes a receiver's credit down as deliveries are advanced past and never
            # checks it: a delivery arriving with none left was sent beyond our grant
            self._transfer_limit_exceeded(st, lib.pn_link_queued(lnk))
            return
        n = lib.pn_delivery_pending(d)
        spool = st.spool
        if spool is not None or lib.pn_delivery_partial(d):
            # a multi-frame delivery: taken out of proton as it arrives, checked against the
            # size limit before more is buffered (a never-ending more=true transfer included)
            if (spool.size if spool is not None else 0) + n > self.max_message_size:
                self._message_too_large(st, n + (spool.size if spool is not None else 0))
                return
            partial = lib.pn_delivery_partial(d)
            if partial:
                self._transfer_progressed(st)
            if partial and n < DRAIN_AT and not lib.pn_delivery_aborted(d):
                return
            if n:
                refusal = self._spool_refusal(n)
                if refusal is not None:
                    self._end_incoming(st, "amqp:resource-limit-exceeded", refusal)
                    return
            if spool is None:
                spool = IncomingSpool(self.large_threshold, self.core.spill_dir, self._account_spool)
                st.spool = spool
            if n:
                buf = bytearray(n)
                lib.pn_link_recv(lnk, ffi.from_buffer(buf), n)
                spool.add(buf)
            if partial and not lib.pn_delivery_aborted(d):
                return
            st.spool = None
            st.progress_at = 0.0
            lib.pn_link_advance(lnk)
            if lib.pn_delivery_aborted(d):
                spool.discard()
                lib.pn_delivery_settle(d)
                self.dirty()
                return
            data: Any = spool.finish()
        elif not lib.pn_delivery_readable(d):
            return
        else:
            if n > self.max_message_size:
                self._message_too_large(st, n)
                return
            buf = bytearray(n)
            lib.pn_link_recv(lnk, ffi.from_buffer(buf), n)
            lib.pn_link_advance(lnk)
            data = bytes(buf)
        if lib.pn_delivery_aborted(d):
            lib.pn_delivery_settle(d)
        elif st.coordinator or lib.pn_delivery_remote_state(d) == TRANSACTIONAL_STATE or st.address is None \
                or st.management:
            self._on_payload(st, Delivery.wrap(d), data)
        else:
            self._on_message_fast(st, d, data)
        credit = lib.pn_link_credit(lnk)
        if credit < st.window // 2 and lib.pn_link_queued(lnk) == 0:
            # top up only once the transfers that arrived together are through, so that the
            # credit checked above is the credit the peer was told about; a full broker or
            # queue (address-full policy BLOCK) withholds it until consumers make room
            if st.blocked:
                pass  # the gate's timer gives the credit back
            elif not (st.coordinator or st.management) and self.core.gate.refusal_for(st) is not None:
                self.core.gate.block(self, st)
            else:
                lib.pn_link_flow(lnk, st.window - credit)
        self.dirty()

    # -- unfinished transfers: what they hold, how long they may stall ---------------------------
    def _account_spool(self, n: int) -> None:
        """An unfinished transfer of this connection took in (+) or gave back (-) ``n`` bytes."""
        self.spooling += n
        self.core.spooling += n

    def _spool_refusal(self, n: int) -> str | None:
        """Why ``n`` more bytes of an unfinished transfer may not be held, or None."""
        limits = self.core.limits
        if limits.max_spool_per_connection and self.spooling + n > limits.max_spool_per_connection:
            return (f"this connection's unfinished transfers would hold {self.spooling + n} bytes, more than "
                    f"the broker allows (limit max_spool_per_connection = {limits.max_spool_per_connection})")
        if limits.max_spool_total and self.core.spooling + n > limits.max_spool_total:
            return (f"unfinished transfers would hold {self.core.spooling + n} bytes in all, more than the "
                    f"broker allows (limit max_spool_total = {limits.max_spool_total})")
        return None

    def _transfer_progressed(self, st: IncomingLink) -> None:
        """A frame of an unfinished delivery arrived: its stall deadline starts again."""
        timeout = self.core.limits.transfer_timeout
        if not timeout:
            return
        first = st.progress_at == 0.0
        st.progress_at = time.monotonic()
        if first:
            self.core.loop.call_later(timeout, self._transfer_deadline, st)

    def _transfer_deadline(self, st: IncomingLink) -> None:
        if st.closed or st.progress_at == 0.0 or self.closed:
            return  # finished, ended, or the connection went
        timeout = self.core.limits.transfer_timeout
        idle = time.monotonic() - st.progress_at
        if idle < timeout:
            self.core.loop.call_later(timeout - idle, self._transfer_deadline, st)
            return
        held = st.spool.size if st.spool is not None else 0
        log.info("connection %s: a transfer on link %r stalled for %ss with %d bytes, detaching it",
                 self.id, st.link.name, timeout, held)
        self._end_incoming(st, "amqp:resource-limit-exceeded",
                           f"the transfer made no progress for {timeout} s (limit transfer_timeout); "
                           "what it sent was discarded")

    def _transfer_limit_exceeded(self, st: IncomingLink, excess: int) -> None:
        """The peer sent transfers beyond the credit we granted: end that link, nothing else."""
        self._end_incoming(st, "amqp:link:transfer-limit-exceeded",
                           f"{excess} transfer(s) sent with no link credit left")

    def _message_too_large(self, st: IncomingLink, size: int) -> None:
        """A message over ``max_message_size``: detach the link (AMQP 1.0 part 2.7.3), which
        discards the delivery in progress; the connection and its other links carry on."""
        limit = self.core.limits.max_message_size
        self._end_incoming(st, "amqp:link:message-size-exceeded",
                           f"message of {size}+ bytes exceeds the broker's max-message-size of {limit} bytes")

    def _end_incoming(self, st: IncomingLink, condition: str, description: str) -> None:
        link = st.link
        self.links.pop(addr(link), None)  # what still arrives on it is read and dropped
        if st.spool is not None:
            st.spool.discard()
            st.spool = None
        st.progress_at = 0.0
        self._end_link(link, st, closed=True, connection_gone=False)
        link.condition = Condition(condition, description)
        link.close()
        self.dirty()

    def _parse(self, data: bytes) -> BrokerMessage:
        """A message as the broker keeps it; ``ValueError`` (-> amqp:decode-error) when it is
        malformed or nests deeper than ``max_value_depth``."""
        if len(data) > self.depth_floor:
            check_depth(data, self.max_value_depth)
        return BrokerMessage.parse(data, now=self.router.clock(), origin=self.id)

    def _on_message_fast(self, st: IncomingLink, d: Any, data: bytes) -> None:
        router = self.router
        try:
            msg = self._parse(data)
        except ValueError as exc:
            _reject(Delivery.wrap(d), "amqp:decode-error", str(exc))
            return
        if self.fail_when_full:
            full = self.core.gate.rejects(st.address)
            if full is not None:
                _reject(Delivery.wrap(d), "amqp:resource-limit-exceeded", full)
                return
        if not router.publish(st.address or "", msg):
            _reject(Delivery.wrap(d), "amqp:not-found", f"node {st.address!r} no longer exists")
            return
        if lib.pn_delivery_settled(d):
            lib.pn_delivery_settle(d)
            return
        waiter = self.core.store_barrier() if msg.stored else None
        if waiter is None:
            lib.pn_delivery_update(d, ACCEPTED)
            lib.pn_delivery_settle(d)
            return
        # accept once the store has it; one callback per store group, not per message
        lib.pn_incref(d)
        waiting = self._durable_waiting.get(id(waiter))
        if waiting is None:
            waiting = self._durable_waiting[id(waiter)] = []
            waiter.add_done_callback(functools.partial(self._accept_stored, deliveries=waiting))
        waiting.append(d)

    def _accept_stored(self, fut: object, *, deliveries: list[Any]) -> None:
        self._durable_waiting.pop(id(fut), None)
        closed = self.closed
        for d in deliveries:
            if not closed:
                lib.pn_delivery_update(d, ACCEPTED)
                lib.pn_delivery_settle(d)
            lib.pn_decref(d)
        if not closed:
            self.flush()  # the producers are waiting for these: no extra loop turn

    def _on_delivery(self, dlv: Any) -> None:
        link = dlv.link
        st = self.links.get(addr(link))
        if st is None:
            if dlv.link.is_receiver and not dlv.partial:
                link.advance()
                dlv.settle()
            return
        if isinstance(st, OutgoingLink):
            st.on_disposition_raw(dlv._impl)
            return
        if dlv.partial or not dlv.readable:
            return
        data = bytes(link.recv(dlv.pending) or b"")  # proton gives a bytearray; the codec wants bytes
        link.advance()
        if dlv.aborted:
            dlv.settle()
        else:
            self._on_payload(st, dlv, data)
        st.top_up()
        self.dirty()

    def _on_payload(self, st: IncomingLink, dlv: Any, data: bytes) -> None:
        """A whole transfer on the wrapper-based path, to whom its link sends: the transaction
        coordinator, ``$management`` or a node."""
        if st.coordinator:
            self._on_coordinator(dlv, data)
        elif st.management:
            self._on_management(dlv, data)
        else:
            self._on_message(st, dlv, data)

    def _refuse_message(self, dlv: Any, condition: str, description: str) -> None:
        """Reject a message; one sent in a transaction also dooms that transaction's commit."""
        if dlv.remote_state == TRANSACTIONAL_STATE:
            txn = self._transaction_of(dlv)
            if txn is not None and txn.refused is None:
                txn.refused = f"{condition}: {description}"
        _reject(dlv, condition, description)

    def _transaction_of(self, dlv: Any) -> Any:
        """The transaction a transfer in transactional state names, or None (unknown id)."""
        return self.txns.get(transactional_state(dlv._impl)[0])

    def _on_message(self, st: IncomingLink, dlv: Any, data: bytes) -> None:
        router = self.router
        try:
            msg = self._parse(data)
        except ValueError as exc:
            self._refuse_message(dlv, "amqp:decode-error", str(exc))
            return
        address = st.address
        if address is None:
            address = self._relay_target(data)
            if address is None:
                self._refuse_message(dlv, "amqp:not-found",
                                     "anonymous relay: no 'to' address, or no such node")
                return
            if (denied := self.refusal(address, Permission.SEND)) is not None:
                self._refuse_message(dlv, "amqp:unauthorized-access", denied)
                return
            st.sent_to(address)  # the flow gate withholds the relay's credit while one is full
        full = self.core.gate.rejects(address)
        if full is not None:  # address-full policy FAIL, in a transaction or not
            self._refuse_message(dlv, "amqp:resource-limit-exceeded", full)
            return
        if dlv.remote_state == TRANSACTIONAL_STATE:
            txn = self._transaction_of(dlv)
            if txn is None:
                self._refuse_message(dlv, "amqp:transaction:unknown-id", "unknown transaction id")
                return
            self.txns.publish(txn, address, msg)
            set_transactional_state(dlv._impl, txn.txn_id, ACCEPTED)
            dlv.settle()
            return
        if not router.publish(address, msg):
            self._refuse_message(dlv, "amqp:not-found", f"node {address!r} no longer exists")
            return
        if dlv.settled:
            dlv.settle()
            return
        self._accept_when_stored(dlv, self.core.store_barrier() if msg.stored else None)

    def _accept_when_stored(self, dlv: Any, waiter: Any) -> None:
        """Accept and settle ``dlv`` now, or, given the store's ``waiter``, once the store has
        written it: a peer that hears "accepted" may forget the message, so it must survive a
        crash by then. (The raw fast path batches the same rule per store group:
        ``_accept_stored``.)"""
        if waiter is None:
            dlv.update(ACCEPTED)
            dlv.settle()
            return

        def done(_: object) -> None:
            if not self.closed:
                dlv.update(ACCEPTED)
                dlv.settle()
                self.dirty()

        waiter.add_done_callback(done)

    def _relay_target(self, data: bytes) -> str | None:
        from ..storage.message_bytes import relay_address

        try:
            to, kind = relay_address(data)
        except ValueError:
            return None
        if not to:
            return None
        if self.router.node_kind(to) is None and self.refusal(to, Permission.SEND) is None:
            limit = self.core.limits.max_nodes
            if limit and len(self.router.kinds) + len(self.router.subscriptions) >= limit:
                return None  # no room for another node (max_nodes)
            prefixes = self.core.prefixes
            if prefixes is not None:  # prefix mode: the address says the type, as on ActiveMQ
                by_prefix = prefixes.kind_of(to)
                kind = None if by_prefix.is_temporary else 1 if by_prefix.is_topic else 0
            if kind == 0:
                self.router.ensure_node(to, NodeKind.QUEUE)
            elif kind == 1:
                self.router.ensure_node(to, NodeKind.TOPIC)
            else:
                return None
        return to

    def _on_management(self, dlv: Any, data: bytes) -> None:
        """A request to ``$management`` (or ``$cbs``): taken (answered) or rejected."""
        if dlv.remote_state == TRANSACTIONAL_STATE:
            _reject(dlv, "amqp:not-implemented", "management requests cannot be transacted")
            return
        st = self.links.get(addr(dlv.link))
        node = self.core.management
        if isinstance(st, IncomingLink) and st.cbs:
            refused = self.cbs_link.request(data)
        elif node is not None:
            refused = node.receive(self, data)
        else:
            refused = ("amqp:not-found", "no management node")
        if refused is not None:
            _reject(dlv, *refused)
        elif not dlv.settled:
            dlv.update(ACCEPTED)
            dlv.settle()
        else:
            dlv.settle()

    def _on_coordinator(self, dlv: Any, data: bytes) -> None:
        body = coordinator_request(data)
        if body is None:
            _reject(dlv, "amqp:decode-error", "coordinator message is not a declare/discharge body")
            return
        code = body.descriptor
        if code in (0x31, "amqp:declare:list"):
            limit = self.core.limits.max_transactions_per_connection
            if limit and self.txns.open_count(self.id) >= limit:
                _reject(dlv, "amqp:resource-limit-exceeded", f"the connection has {limit} open "
                        "transactions (limit max_transactions_per_connection)")
                return
            txn = self.txns.declare(self.id, addr(dlv.link), self.user or "")
            dlv.local.data = [txn.txn_id]
            dlv.update(DECLARED)
            dlv.settle()
        elif code in (0x32, "amqp:discharge:list"):
            fields = body.value if isinstance(body.value, list) else []
            found = self.txns.get(fields[0] if fields else None)
            fail = bool(fields[1]) if len(fields) > 1 else False
            if found is None or found.owner != self.id:
                self._answer_from_outcomes(dlv, fields[0] if fields else None, found)
                return
            if not fail and found.refused is not None:  # a send of it was refused: roll back
                self.txns.discharge(found, fail=True)
                _reject(dlv, "amqp:transaction:rollback",
                        f"the transaction was rolled back: one of its sends was refused ({found.refused})")
                return
            self.core.store_begin_batch()
            try:
                self.txns.discharge(found, fail=fail)
            finally:
                waiter = self.core.store_end_batch()
            self._accept_when_stored(dlv, waiter)
        else:
            _reject(dlv, "amqp:not-implemented", f"coordinator request {code!r}")

    def _answer_from_outcomes(self, dlv: Any, txn_id: Any, found: Transaction | None) -> None:
        """A Discharge of a transaction this connection does not hold: a client that lost the
        answer to its own Discharge (its connection dropped, the broker restarted) asks what
        became of it (``txn_outcomes.py``; the coordinator offers ``amqp-jms:txn-outcomes``).

        Still open on another connection of the same user (one the broker has not yet seen
        die): its Discharge never arrived, and it is rolled back now, so that it cannot commit
        after its client has been told it did not. Committed: accepted (once stored, as the
        commit was). Not committed: rejected ``amqp:transaction:rollback``. Anything else
        (another user's, forgotten, not this broker's): ``amqp:transaction:unknown-id``."""
        user = self.user or ""
        if isinstance(txn_id, memoryview):
            txn_id = bytes(txn_id)
        if found is not None:
            if found.user != user or self.txns.outcomes is None:
                _reject(dlv, "amqp:transaction:unknown-id", "unknown transaction id")
                return
            self.txns.discharge(found, fail=True)
            outcome: bool | None = False
        else:
            outcome = self.txns.outcome(txn_id, user) if isinstance(txn_id, bytes) else None
        if outcome is None:
            _reject(dlv, "amqp:transaction:unknown-id", "unknown transaction id")
        elif outcome:
            self._accept_when_stored(dlv, self.core.store_barrier())
        else:
            _reject(dlv, "amqp:transaction:rollback", "the transaction was rolled back (it was never "
                    "committed)")


_SCRATCH = bytearray(65536)
_SCRATCH_PTR = ffi.from_buffer(_SCRATCH)


def _discard(lnk: Any, d: Any) -> None:
    """Read and drop a delivery's bytes on a link the broker no longer serves (nothing piles up
    in proton), settling it once complete."""
    while lib.pn_link_recv(lnk, _SCRATCH_PTR, len(_SCRATCH)) > 0:
        pass
    if not lib.pn_delivery_partial(d):
        if lib.pn_link_current(lnk) == d:
            lib.pn_link_advance(lnk)
        lib.pn_delivery_settle(d)


def _reject(dlv: Any, condition: str, description: str) -> None:
    dlv.local.condition = Condition(condition, description)
    dlv.update(REJECTED)
    dlv.settle()
