"""Transfers and dispositions of one connection: the per-message part of the broker protocol.

``TransferHandling`` is mixed into :class:`~amqp_jms.broker.connection.BrokerConnection`:
incoming transfers (to a node, through the anonymous relay, under a transaction, to the
coordinator) and outcomes of outgoing deliveries. Plain transfers and plain outcomes take the
cffi path (``on_delivery_raw``); the rest goes through proton's Python ``Delivery``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proton import Condition, Delivery, Described, ulong

from ._codec import coordinator_request
from ._fast import addr, ffi, lib, ptr_addr
from .authorization import Permission
from .links import TRANSACTIONAL_STATE, IncomingLink, OutgoingLink
from .message import BrokerMessage
from .nodes import NodeKind, Router
from .transactions import TransactionManager

if TYPE_CHECKING:
    from .core import BrokerCore

__all__ = ["TransferHandling"]

ACCEPTED = 0x24
REJECTED = 0x25
DECLARED = 0x33


class TransferHandling:
    """Mixin: needs the connection's links, router, transactions, core and flush hook."""

    id: int
    core: BrokerCore
    router: Router
    txns: TransactionManager
    links: dict[int, OutgoingLink | IncomingLink]
    closed: bool
    dirty: Callable[[], None]
    _durable_waiting: dict[int, list[Any]]
    _end_link: Callable[..., None]
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
        if lib.pn_delivery_partial(d) or not lib.pn_delivery_readable(d):
            return
        n = lib.pn_delivery_pending(d)
        buf = bytearray(n)
        lib.pn_link_recv(lnk, ffi.from_buffer(buf), n)
        lib.pn_link_advance(lnk)
        data = bytes(buf)
        if lib.pn_delivery_aborted(d):
            lib.pn_delivery_settle(d)
        elif st.coordinator or lib.pn_delivery_remote_state(d) == TRANSACTIONAL_STATE or st.address is None:
            dlv = Delivery.wrap(d)
            if st.coordinator:
                self._on_coordinator(dlv, data)
            else:
                self._on_message(st, dlv, data)
        else:
            self._on_message_fast(st, d, data)
        credit = lib.pn_link_credit(lnk)
        if credit < st.window // 2 and lib.pn_link_queued(lnk) == 0:
            # top up only once the transfers that arrived together are through, so that the
            # credit checked above is the credit the peer was told about
            lib.pn_link_flow(lnk, st.window - credit)
        self.dirty()

    def _transfer_limit_exceeded(self, st: IncomingLink, excess: int) -> None:
        """The peer sent transfers beyond the credit we granted: end that link, nothing else."""
        link = st.link
        self.links.pop(addr(link), None)  # its remaining deliveries are discarded unread
        self._end_link(link, st, closed=True, connection_gone=False)
        link.condition = Condition(
            "amqp:link:transfer-limit-exceeded",
            f"{excess} transfer(s) sent with no link credit left",
        )
        link.close()
        self.dirty()

    def _on_message_fast(self, st: IncomingLink, d: Any, data: bytes) -> None:
        router = self.router
        try:
            msg = BrokerMessage.parse(data, now=router.clock(), origin=self.id)
        except ValueError as exc:
            _reject(Delivery.wrap(d), "amqp:decode-error", str(exc))
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
            self.dirty()

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
        elif st.coordinator:
            self._on_coordinator(dlv, data)
        else:
            self._on_message(st, dlv, data)
        st.top_up()
        self.dirty()

    def _on_message(self, st: IncomingLink, dlv: Any, data: bytes) -> None:
        router = self.router
        try:
            msg = BrokerMessage.parse(data, now=router.clock(), origin=self.id)
        except ValueError as exc:
            _reject(dlv, "amqp:decode-error", str(exc))
            return
        address = st.address
        if address is None:
            address = self._relay_target(data)
            if address is None:
                _reject(dlv, "amqp:not-found", "anonymous relay: no 'to' address, or no such node")
                return
            if (denied := self.refusal(address, Permission.SEND)) is not None:
                _reject(dlv, "amqp:unauthorized-access", denied)
                return
        if dlv.remote_state == TRANSACTIONAL_STATE:
            txn_data = dlv.remote.data or []
            txn = self.txns.get(txn_data[0] if txn_data else None)
            if txn is None:
                _reject(dlv, "amqp:transaction:unknown-id", "unknown transaction id")
                return
            txn.publishes.append((address, msg))
            dlv.local.data = [txn.txn_id, Described(ulong(ACCEPTED), [])]
            dlv.update(TRANSACTIONAL_STATE)
            dlv.settle()
            return
        if not router.publish(address, msg):
            _reject(dlv, "amqp:not-found", f"node {address!r} no longer exists")
            return
        if dlv.settled:
            dlv.settle()
            return
        waiter = self.core.store_barrier() if msg.stored else None
        if waiter is None:
            dlv.update(ACCEPTED)
            dlv.settle()
        else:
            def done(_: object) -> None:
                if not self.closed:
                    dlv.update(ACCEPTED)
                    dlv.settle()
                    self.dirty()

            waiter.add_done_callback(done)

    def _relay_target(self, data: bytes) -> str | None:
        from ._codec import relay_address

        try:
            to, kind = relay_address(data)
        except ValueError:
            return None
        if not to:
            return None
        if self.router.node_kind(to) is None and self.refusal(to, Permission.SEND) is None:
            if kind == 0:
                self.router.ensure_node(to, NodeKind.QUEUE)
            elif kind == 1:
                self.router.ensure_node(to, NodeKind.TOPIC)
            else:
                return None
        return to

    def _on_coordinator(self, dlv: Any, data: bytes) -> None:
        body = coordinator_request(data)
        if body is None:
            _reject(dlv, "amqp:decode-error", "coordinator message is not a declare/discharge body")
            return
        code = body.descriptor
        if code in (0x31, "amqp:declare:list"):
            txn = self.txns.declare(self.id, addr(dlv.link))
            dlv.local.data = [txn.txn_id]
            dlv.update(DECLARED)
            dlv.settle()
        elif code in (0x32, "amqp:discharge:list"):
            fields = body.value if isinstance(body.value, list) else []
            found = self.txns.get(fields[0] if fields else None)
            if found is None:
                _reject(dlv, "amqp:transaction:unknown-id", "unknown transaction id")
                return
            fail = bool(fields[1]) if len(fields) > 1 else False
            self.core.store_begin_batch()
            try:
                self.txns.discharge(found, fail=fail)
            finally:
                waiter = self.core.store_end_batch()
            if waiter is None:
                dlv.update(ACCEPTED)
                dlv.settle()
            else:
                def done(_: object) -> None:
                    if not self.closed:
                        dlv.update(ACCEPTED)
                        dlv.settle()
                        self.dirty()

                waiter.add_done_callback(done)
        else:
            _reject(dlv, "amqp:not-implemented", f"coordinator request {code!r}")


def _reject(dlv: Any, condition: str, description: str) -> None:
    dlv.local.condition = Condition(condition, description)
    dlv.update(REJECTED)
    dlv.settle()
