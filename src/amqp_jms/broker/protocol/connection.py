"""One client connection: proton events in, router calls out.

``BrokerConnection.handle(event)`` is the whole protocol logic of the broker side of AMQP:
open (capabilities, sole-connection), sessions, flow, detach and write back-pressure; attach
(node resolution, termini echo, subscriptions, temporary nodes, anonymous relay, the
transaction coordinator) is in :mod:`amqp_jms.broker.protocol.attach`, transfers and dispositions in
:mod:`amqp_jms.broker.protocol.transfers`. It never touches a socket:
the protocol adapter in :mod:`amqp_jms.broker.protocol.server` feeds it events and writes what proton
produces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from proton import Condition, Endpoint, Event, Link, symbol

from ..._logs import BROKER as log
from ..._version import __version__
from ..errors import MalformedFrame
from ..limits import AddressFullPolicy
from ..routing.txn_outcomes import STORE_ID_PROPERTY
from ._fast import addr, ptr_addr
from .attach import AttachHandling
from .cbs_link import CbsLink
from .links import IncomingLink, OutgoingLink
from .terminus import (
    symbol_set,
)
from .transfers import TransferHandling

if TYPE_CHECKING:
    from ..routing.core import BrokerCore
    from ..routing.queue import MessageQueue

__all__ = ["BrokerConnection", "registered"]


SOLE = "sole-connection-for-container"
OFFERED = ["ANONYMOUS-RELAY", "DELAYED_DELIVERY", "SHARED-SUBS"]
_LOCAL_ACTIVE = Endpoint.LOCAL_ACTIVE


class BrokerConnection(AttachHandling, TransferHandling):
    """The broker's side of one AMQP connection."""

    def __init__(self, core: BrokerCore, conn_id: int, peer: str, dirty: Callable[[], None],
                 flush: Callable[[], None] | None = None) -> None:
        self.core = core
        self.router = core.router
        self.txns = core.txns
        self.id = conn_id
        self.peer = peer
        self.dirty = dirty
        self.flush = flush or dirty  # output now (dirty: at the end of the loop turn)
        self.container: str | None = None
        self.user: str | None = None  # who logged in (set by the listener after SASL; None: anonymous)
        self.sole = False
        self.links: dict[int, OutgoingLink | IncomingLink] = {}  # by pn_link_t address
        self._durable_waiting: dict[int, list[Any]] = {}  # store group -> deliveries to accept
        self.closed = False
        self._counted_user: str | None = None  # the key counted in core.user_connections
        self.sessions = 0
        limits = core.limits  # the per-transfer ones, read once
        self.max_message_size = limits.max_message_size
        self.spooling = 0  # bytes its unfinished incoming transfers hold (max_spool_per_connection)
        self.max_value_depth = limits.max_value_depth
        self.depth_floor = 2 * limits.max_value_depth if limits.max_value_depth else 1 << 62
        self.fail_when_full = limits.address_full_policy is AddressFullPolicy.FAIL
        self.persist_counts = limits.persist_delivery_count and core.store.persistent
        self.large_threshold = limits.large_message_threshold or 1 << 62
        # write back-pressure: bytes of deliveries handed to proton since the socket last took
        # its output (or, while the socket's buffer is full, the limit itself)
        self.out_bytes = 0
        self.out_limit = limits.write_buffer_high or 1 << 62
        self.throttled = False  # a consumer link was refused credit by ``out_bytes``
        self.streams: set[OutgoingLink] = set()  # links part-way through a large message
        self.cbs_link = CbsLink(self)  # put-token on $cbs (when the broker has a $cbs node)

    # -- dispatch ------------------------------------------------------------------------------
    def on_flow_raw(self, lnk: Any) -> bool:
        """A LINK_FLOW event's link as a ``pn_link_t`` pointer: a consumer's credit (two per
        message of a prefetch-0 receive) read without an ``Event`` and its wrappers; False for a
        link this connection does not route (the ``$cbs`` reply), which ``handle`` takes."""
        st = self.links.get(ptr_addr(lnk))
        if st is None:
            return False
        if isinstance(st, OutgoingLink):
            st.on_flow()
        return True

    def handle(self, ev: Any) -> None:
        t = ev.type
        if t is Event.DELIVERY:
            self.on_delivery_raw(ev.delivery._impl)
        elif t is Event.LINK_FLOW:
            if not self.on_flow_raw(ev.link._impl):
                reply = self.cbs_link.reply
                if reply is not None and addr(ev.link) == addr(reply):
                    self.cbs_link.on_flow()
        elif t is Event.LINK_REMOTE_OPEN:
            self._on_attach(ev.link)
        elif t is Event.LINK_REMOTE_CLOSE:
            self._on_detach(ev.link, closed=True)
        elif t is Event.LINK_REMOTE_DETACH:
            self._on_detach(ev.link, closed=False)
        elif t is Event.SESSION_REMOTE_OPEN:
            self._on_begin(ev.session)
        elif t is Event.SESSION_REMOTE_CLOSE:
            self.sessions -= 1
            self._on_session_end(ev.session)
        elif t is Event.CONNECTION_REMOTE_OPEN:
            self._on_open(ev.connection)
        elif t is Event.CONNECTION_REMOTE_CLOSE:
            self.cleanup()
            ev.connection.close()

    # -- open / close --------------------------------------------------------------------------
    def _on_open(self, conn: Any) -> None:
        container = conn.remote_container
        self.container = str(container) if container else None
        try:
            desired = _symbol_set(conn.remote_desired_capabilities)
        except TypeError as exc:  # proton iterates the field: a non-array value raises here
            raise MalformedFrame(f"desired-capabilities must be symbols: {exc}") from exc
        conn.container = self.core.container_id
        offered = list(OFFERED)
        props: dict[Any, Any] = {
            symbol("product"): "amqp-jms",
            symbol("version"): __version__,
        }
        wants_sole = SOLE in desired
        if wants_sole:
            offered.append(SOLE)
        clash = self.container is not None and self.core.container_clash(self.container, wants_sole)
        conn.offered_capabilities = [symbol(c) for c in offered]
        if clash:
            _refuse_open(conn, props, Condition(
                "amqp:invalid-field",
                f"container-id {self.container!r} is already in use by another connection",
                {symbol("invalid-field"): symbol("container-id")},
            ))
            log.info("connection %s from %s refused: container-id in use", self.id, self.peer)
            return
        if self.core.prefixes is not None:
            props.update(self.core.prefixes.open_properties())
        outcomes = self.core.txns.outcomes
        if outcomes is not None and outcomes.offered:  # whose commit outcomes its coordinator keeps
            props[symbol(STORE_ID_PROPERTY)] = outcomes.store_id
        limit = self.core.limits.max_connections_per_user
        key = self.user or ""
        if limit and self.core.user_connections.get(key, 0) >= limit:
            _refuse_open(conn, props, Condition(
                "amqp:resource-limit-exceeded",
                f"user {self.user or 'anonymous'!r} already has {limit} connections "
                "(limit max_connections_per_user)",
            ))
            log.warning("connection %s from %s refused: max_connections_per_user (%d) for %r",
                        self.id, self.peer, limit, key)
            return
        self.core.user_connections[key] = self.core.user_connections.get(key, 0) + 1
        self._counted_user = key
        conn.properties = props
        self.sole = wants_sole
        if self.container is not None:
            self.core.register_container(self.container, self.id, wants_sole)
        conn.open()
        # a clean open is routine: DEBUG (refusals above are INFO/WARNING; nothing noisy at INFO)
        log.debug("connection %s open from %s container=%s", self.id, self.peer, self.container)

    def cleanup(self) -> None:
        """The connection ended (closed or dropped): release, roll back, delete temp nodes."""
        if self.closed:
            return
        self.closed = True
        for st in list(self.links.values()):
            self._end_link(st.link, st, closed=False, connection_gone=True)
        self.links.clear()
        if self.core.cbs is not None:
            self.core.cbs.forget(self.id)
        self.txns.rollback_owned_by(self.id)
        if self.container is not None:
            self.core.unregister_container(self.container, self.id)
        key = self._counted_user
        if key is not None:
            self._counted_user = None
            left = self.core.user_connections.get(key, 1) - 1
            if left > 0:
                self.core.user_connections[key] = left
            else:
                self.core.user_connections.pop(key, None)

    def _on_begin(self, session: Any) -> None:
        limit = self.core.limits.max_sessions_per_connection
        self.sessions += 1
        session.open()
        if self.sessions > limit:
            session.condition = Condition(
                "amqp:resource-limit-exceeded",
                f"a connection may have {limit} sessions (limit max_sessions_per_connection)",
            )
            session.close()

    def _on_session_end(self, session: Any) -> None:
        for key, st in list(self.links.items()):
            if st.link.session == session:
                self.links.pop(key, None)
                self._end_link(st.link, st, closed=False, connection_gone=False)
        session.close()

    # -- detach --------------------------------------------------------------------------------
    def _on_detach(self, link: Link, *, closed: bool) -> None:
        st = self.links.pop(addr(link), None)
        if st is not None:
            sub = st.subscription if isinstance(st, OutgoingLink) else None
            if closed and sub is not None and isinstance(st, OutgoingLink) and st.lookup and sub.links > 0:
                # unsubscribe while the subscription has consumers: refuse, keep it
                name = sub.key[2] if sub.key else ""
                link.condition = Condition("amqp:resource-locked", f"subscription {name!r} is in use")
            self._end_link(link, st, closed=closed, connection_gone=False)
        if link.state & _LOCAL_ACTIVE:
            if closed:
                link.close()
            else:
                link.detach()
        self.dirty()

    def _end_link(
        self, link: Link, st: OutgoingLink | IncomingLink, *, closed: bool, connection_gone: bool
    ) -> None:
        if isinstance(st, OutgoingLink):
            sub = st.subscription
            lookup = st.lookup
            if not lookup:
                st.queue.remove_consumer(st)
                st.release_unacked()
                if sub is not None:
                    sub.links -= 1
            if sub is not None:
                if sub.key is None:
                    self.router.unsubscribe(sub)
                elif sub.key[0] == "volatile" and sub.links <= 0:
                    self.router.unsubscribe(sub)
                elif closed and sub.links <= 0 and (lookup or not sub.shared):
                    self.router.unsubscribe(sub)
            node = sub.topic if sub is not None else st.queue.name
        else:
            st.closed = True
            if st.spool is not None:  # a transfer cut off by the link or connection ending
                st.spool.discard()
                st.spool = None
            node = st.address or ""
            if st.coordinator and not connection_gone:
                self.txns.rollback_controlled_by(self.id, addr(link))
        temp = st.temp_node
        if temp is not None:
            self.core.temp_owner.pop(temp, None)
        if node in self.core.temps.policy:
            self.core.temps.link_ended(node, creator=temp == node)

    # -- write back-pressure (driven by the listener) --------------------------------------------
    def output_taken(self, socket_full: bool) -> None:
        """The listener wrote our output to the socket; ``socket_full``: its buffer is over the
        high-water mark (keep every consumer's credit waiting until it drains)."""
        if socket_full:
            self.out_bytes = self.out_limit
            return
        self.out_bytes = 0
        if self.streams:
            for streaming in list(self.streams):
                if streaming.pump():
                    streaming.on_flow()
        if self.throttled:
            self.throttled = False
            for st in list(self.links.values()):
                if isinstance(st, OutgoingLink):
                    st.on_flow()

    # -- used by the core ----------------------------------------------------------------------
    def close_links_to(self, address: str) -> None:
        """A temporary node went away: end every link of ours that used it."""
        for key, st in list(self.links.items()):
            link = st.link
            if isinstance(st, OutgoingLink) and st.reads(address):
                self.links.pop(key, None)
                st.closed = True
                st.queue.remove_consumer(st)
                if link.state & _LOCAL_ACTIVE:
                    link.condition = Condition("amqp:resource-deleted", f"{address!r} was deleted")
                    link.close()
        self.dirty()

    def uses(self, address: str) -> bool:
        """A link of ours sends to ``address`` (and is open) or reads from it: a temporary
        node's 'no links' lifetime policy asks."""
        for st in self.links.values():
            if isinstance(st, IncomingLink) and st.address == address and not st.closed:
                return True
            if isinstance(st, OutgoingLink) and st.reads(address):
                return True
        return False

    def delivering_from(self, queue: MessageQueue) -> bool:
        """A link of ours holds deliveries of ``queue``'s messages not yet settled: a temporary
        node's 'no messages' lifetime policy asks."""
        return any(isinstance(st, OutgoingLink) and st.queue is queue and st.unacked
                   for st in self.links.values())


def registered(core: BrokerCore) -> dict[int, BrokerConnection]:
    """The connections the listener registered in ``core.connections``, as what they are: the
    routing layer sees each only through its small ``Connection`` interface; the operations
    layer (metrics, ``$management``) reads their peer, user, sessions and links."""
    return cast("dict[int, BrokerConnection]", core.connections)


def _symbol_set(value: Any) -> set[str]:
    """Connection capabilities as proton hands them over (a list of symbols, or None)."""
    return symbol_set(value)


def _refuse_open(conn: Any, props: dict[Any, Any], condition: Condition) -> None:
    """Answer an Open with a refusal (mapping 2.1): an Open that says the connection failed to
    establish, then Close with ``condition``."""
    props[symbol("amqp:connection-establishment-failed")] = True
    conn.properties = props
    conn.open()
    conn.condition = condition
    conn.close()
