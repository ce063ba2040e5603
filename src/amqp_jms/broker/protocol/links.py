"""Per-link state: a consumer link the broker sends on, a producer link it receives on.

``OutgoingLink`` is a :class:`~amqp_jms.broker.routing.queue.Consumer`: the queue calls ``deliver``
while the link has credit, and the link keeps the unsettled messages by delivery tag until the
client's disposition says what became of them. Browsers (distribution-mode ``copy``) read a
snapshot instead of acquiring.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from proton import Delivery, Described, Link

from ..routing.dead_letter import Cause, Failure
from ..routing.nodes import Subscription
from ..routing.queue import MessageQueue
from ..routing.transactions import ACCEPTED, MODIFIED, REJECTED, RELEASED, Outcome
from ..storage import message_bytes
from ..storage.large import STREAM_CHUNK, IncomingSpool, OutgoingStream
from ..storage.message import BrokerMessage
from ._fast import NO_OUTCOME, TRANSACTIONAL_STATE, ffi, lib, ptr_addr, transactional_state

if TYPE_CHECKING:
    from .connection import BrokerConnection

__all__ = ["IncomingLink", "OutgoingLink"]

RELAY_TARGETS = 16  # addresses an anonymous relay link is flow-controlled by (the latest)


class OutgoingLink:
    """A link on which the broker delivers messages from one queue (or subscription)."""

    def __init__(
        self,
        conn: BrokerConnection,
        link: Link,
        queue: MessageQueue,
        *,
        presettled: bool,
        matcher: Callable[[BrokerMessage], bool] | None = None,
        subscription: Subscription | None = None,
        browse: bool = False,
    ) -> None:
        self.conn = conn
        self.link = link
        self.queue = queue
        self.presettled = presettled
        self.matcher = matcher
        self.subscription = subscription
        self.browse = browse
        self.unacked: dict[int, BrokerMessage] = {}  # by pn_delivery_t address
        self._impl = link._impl
        self.refused: set[int] = set()  # seqs this consumer declared undeliverable-here
        self._tag = 0
        self._browse: Iterator[BrokerMessage] | None = queue.browse() if browse else None
        self.temp_node: str | None = None  # dynamic source created by this link
        self.lookup = False  # a null-source attach that only looks a subscription up
        self.closed = False
        self.stream: OutgoingStream | None = None  # a large message part-way out

    # -- Consumer protocol ---------------------------------------------------------------------
    def credit(self) -> int:
        conn = self.conn
        if conn.out_bytes >= conn.out_limit or self.stream is not None:
            # the peer is not reading fast enough (bytes sent but not yet taken by its socket):
            # its credit waits; the listener resumes the links once the output has drained
            conn.throttled = True
            return 0
        return int(lib.pn_link_credit(self._impl))

    @property
    def filtered(self) -> bool:
        return self.matcher is not None or bool(self.refused)

    def accepts(self, msg: BrokerMessage) -> bool:
        if msg.seq in self.refused:
            return False
        m = self.matcher
        if m is None:
            return True
        try:
            return bool(m(msg))
        except Exception:
            return False

    def reads(self, address: str) -> bool:
        """This link takes its messages from ``address``: its queue, or the topic of its
        subscription."""
        sub = self.subscription
        return self.queue.name == address or (sub is not None and sub.topic == address)

    def deliver(self, msg: BrokerMessage) -> None:
        self._tag += 1
        tag = b"%d" % self._tag
        lnk = self._impl
        d = lib.pn_delivery(lnk, (len(tag), ffi.from_buffer(tag)))
        data = msg.data
        if msg.delivery_count and (type(data) is bytes or len(data) <= STREAM_CHUNK):
            data = msg.wire_bytes()  # a big mapped one gets its new header in _start_stream
        conn = self.conn
        if msg.stored and conn.persist_counts:
            conn.core.store.mark_delivered(self.queue.name, msg)
        if len(data) > STREAM_CHUNK:
            self._start_stream(d, data, msg)
            return
        conn.out_bytes += len(data)
        lib.pn_link_send(lnk, ffi.from_buffer(data), len(data))
        lib.pn_link_advance(lnk)
        self._sent(d, msg)

    def _sent(self, d: Any, msg: BrokerMessage) -> None:
        if self.presettled:
            lib.pn_delivery_settle(d)
            if not self.browse:
                self.conn.router.consumed(self.queue, msg)
        elif not self.browse:  # a browser's outcomes change nothing: it keeps no copies
            self.unacked[ptr_addr(d)] = msg
        self.conn.dirty()

    # -- large messages: out in chunks as the socket drains ------------------------------------
    def _start_stream(self, d: Any, data: Any, msg: BrokerMessage) -> None:
        """Send a big message a chunk at a time (``large.py``): this link takes no other message
        until it is through (its credit reads 0), and a release meanwhile returns it."""
        self.unacked[ptr_addr(d)] = msg  # so that a link or connection ending returns it
        at = 0
        if msg.delivery_count and type(data) is not bytes:
            # redelivered: the header with its new delivery-count goes first, then the rest
            # streams unchanged from the mapped file (never the whole message on the heap)
            head, at = message_bytes.header_rewrite(data, msg.delivery_count)
            lib.pn_link_send(self._impl, ffi.from_buffer(head), len(head))
            self.conn.out_bytes += len(head)
        self.stream = OutgoingStream(d, memoryview(data)[at:], 0, msg, at)
        self.conn.streams.add(self)
        self.pump()

    def pump(self) -> bool:
        """Hand proton the next chunks while the connection's output has room; True when done."""
        st = self.stream
        if st is None:
            return True
        conn, lnk = self.conn, self._impl
        view, total = st.view, len(st.view)
        mapped = st.msg.data if type(st.msg.data) is mmap.mmap else None
        while st.sent < total and conn.out_bytes < conn.out_limit:
            piece = view[st.sent:st.sent + STREAM_CHUNK]
            lib.pn_link_send(lnk, ffi.from_buffer(piece), len(piece))
            if mapped is not None and st.view.obj is mapped:
                # proton has its copy: drop the file's pages from this process (page cache keeps
                # them); madvise wants a page-aligned start
                start = st.base + st.sent
                aligned = start - start % mmap.PAGESIZE
                mapped.madvise(mmap.MADV_DONTNEED, aligned, start + len(piece) - aligned)
            st.sent += len(piece)
            conn.out_bytes += len(piece)
        conn.dirty()
        if st.sent < total:
            return False
        self.stream = None
        conn.streams.discard(self)
        lib.pn_link_advance(lnk)
        self.unacked.pop(ptr_addr(st.delivery), None)
        self._sent(st.delivery, st.msg)
        return True

    # -- flow ----------------------------------------------------------------------------------
    def on_flow(self) -> None:
        if self.closed:
            return
        if self.browse:
            self._browse_more()
        else:
            self.queue.dispatch()
        if self.link.drain_mode and self.link.credit > 0:
            if self.browse:
                self._finish_drain()
            else:  # a selector's scan runs in slices: what it has not reached yet is not "empty"
                self.queue.when_scanned(self._finish_drain)

    def _finish_drain(self) -> None:
        link = self.link
        if self.credit() <= 0 and link.credit > 0:
            return  # held back by write back-pressure, not empty: drained once the output moves
        if not self.closed and link.drain_mode and link.credit > 0:
            link.drained()
            self.conn.dirty()

    def _browse_more(self) -> None:
        items = self._browse
        if items is None:
            return
        while self.credit() > 0:
            msg = next(items, None)
            if msg is None:
                self._browse = None  # seen it all
                return
            if self.accepts(msg):
                self.deliver(msg)

    # -- dispositions --------------------------------------------------------------------------
    def on_disposition_raw(self, d: Any) -> None:
        """The client updated a delivery we sent (proton-c pointer; see ``_fast``)."""
        if not lib.pn_delivery_updated(d):
            return
        state = lib.pn_delivery_remote_state(d)
        settled = lib.pn_delivery_settled(d)
        if not state and not settled:
            return
        key = ptr_addr(d)
        msg = self.unacked.pop(key, None)
        if msg is None or self.browse:
            if settled:
                lib.pn_delivery_settle(d)
            return
        router = self.conn.router
        if state == ACCEPTED or (not state and settled):
            router.consumed(self.queue, msg)
        elif state == TRANSACTIONAL_STATE:
            self._transactional(d, msg)
        elif state == RELEASED:
            router.released(self.queue, msg, failed=False)
        elif state == MODIFIED:
            remote = lib.pn_delivery_remote(d)
            how = Failure.MODIFIED
            if lib.pn_disposition_is_undeliverable(remote):
                self.refused.add(msg.seq)
                how = Failure.UNDELIVERABLE
            router.released(self.queue, msg, failed=bool(lib.pn_disposition_is_failed(remote)), how=how)
        elif state == REJECTED:
            router.dead_letter(self.queue, msg, _rejected(Delivery.wrap(d).remote.condition))
        else:  # received or unknown: keep waiting for a terminal outcome
            self.unacked[key] = msg
            return
        lib.pn_delivery_settle(d)
        self.conn.dirty()

    def _transactional(self, d: Any, msg: BrokerMessage) -> None:
        """An acknowledgement inside a transaction (``d``: proton-c pointer): held by the
        transaction until it ends, or released if the transaction is unknown."""
        txn_id, code = transactional_state(d)
        if code in (ACCEPTED, NO_OUTCOME):  # nearly every one: read in place
            txn, outcome = self.conn.txns.get(txn_id), _ACCEPTED
        else:  # another outcome carries fields (modified's flags, rejected's error)
            data = Delivery.wrap(d).remote.data or []
            txn = self.conn.txns.get(data[0] if data else None)
            outcome = _outcome_of(data[1] if len(data) > 1 else None)
        if txn is None:
            self.conn.router.released(self.queue, msg, failed=True)
        else:
            txn.acks.append((self.queue, msg, outcome))

    def release_unacked(self) -> None:
        """The link or connection ended: unsettled messages return, counted as delivered."""
        self.closed = True
        if self.stream is not None:
            self.stream = None
            self.conn.streams.discard(self)
        if self.unacked and not self.browse:
            msgs = list(self.unacked.values())
            self.unacked.clear()
            self.conn.router.released_many(self.queue, msgs, failed=True, how=Failure.LINK_CLOSED)


def _rejected(condition: Any) -> Cause:
    """The cause of a ``rejected`` outcome from the error the consumer sent (proton's
    ``Condition``, or ``None``)."""
    if condition is None:
        return Cause.rejected()
    return Cause.rejected(condition.name, condition.description)


_ACCEPTED = Outcome(ACCEPTED)


def _outcome_of(obj: Any) -> Outcome:
    if isinstance(obj, Described):
        code = int(obj.descriptor) if isinstance(obj.descriptor, int) else ACCEPTED
        fields = obj.value if isinstance(obj.value, list) else []
        if code == MODIFIED:
            failed = bool(fields[0]) if len(fields) > 0 else False
            undeliverable = bool(fields[1]) if len(fields) > 1 else False
            return Outcome(code, failed, undeliverable)
        if code == REJECTED:  # rejected(error: described error(condition, description, info))
            err = fields[0] if fields else None
            efields = err.value if isinstance(err, Described) and isinstance(err.value, list) else []
            condition = efields[0] if efields else None
            return Outcome(code, error=(condition, efields[1] if len(efields) > 1 else None))
        return Outcome(code)
    return Outcome(ACCEPTED)


class IncomingLink:
    """A link on which the broker receives messages: to a node, anonymous relay, or coordinator."""

    def __init__(
        self,
        link: Link,
        address: str | None,
        *,
        coordinator: bool = False,
        management: bool = False,
        cbs: bool = False,
        window: int = 2000,
    ) -> None:
        self.link = link
        self.address = address  # None = anonymous relay (route by ``to``)
        self.coordinator = coordinator
        # requests to the ``$management`` node (``management.py``), or to ``$cbs`` (``cbs_link.py``)
        self.management = management or cbs
        self.cbs = cbs
        self.window = window
        self.temp_node: str | None = None  # dynamic target created by this link
        self.closed = False
        self.blocked = False  # credit withheld by the flow gate (a full queue or broker)
        self.spool: IncomingSpool | None = None  # a multi-frame delivery still arriving
        self.progress_at = 0.0  # when its last frame came (0: none unfinished; transfer_timeout)
        # the anonymous relay: the addresses it sent to lately, which the flow gate checks as
        # it checks a named link's address (insertion order, the oldest dropped past a few)
        self.targets: dict[str, None] = {}

    def sent_to(self, address: str) -> None:
        targets = self.targets
        if address not in targets:
            if len(targets) >= RELAY_TARGETS:
                del targets[next(iter(targets))]
            targets[address] = None

    def top_up(self) -> None:
        self.blocked = False
        link = self.link
        credit = link.credit
        if 0 <= credit < self.window // 2:
            link.flow(self.window - credit)
