"""One client connection: proton events in, router calls out.

``BrokerConnection.handle(event)`` is the whole protocol logic of the broker side of AMQP:
open (capabilities, sole-connection), sessions, attach (node resolution, termini echo,
subscriptions, temporary nodes, anonymous relay, the transaction coordinator), flow and detach;
transfers and dispositions are in :mod:`amqp_jms.broker.transfers`. It never touches a socket:
the protocol adapter in :mod:`amqp_jms.broker.server` feeds it events and writes what proton
produces.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from proton import Condition, Endpoint, Event, Link, Terminus, symbol

from .._version import __version__
from ._fast import addr
from .authorization import Permission
from .errors import MalformedFrame
from .limits import AddressFullPolicy
from .links import IncomingLink, OutgoingLink
from .management import ADDRESS as MANAGEMENT_ADDRESS
from .message import BrokerMessage
from .nodes import NodeKind, Subscription
from .temporary import lifetime_policy, set_lifetime_policy
from .terminus import (
    filters_of,
    is_durable,
    kind_from_caps,
    parse_subscription_name,
    set_capabilities,
    set_filters,
    symbol_set,
    symbols,
)
from .transfers import TransferHandling

if TYPE_CHECKING:
    from .core import BrokerCore

__all__ = ["AttachRefused", "BrokerConnection"]

log = logging.getLogger("amqp_jms.broker")

SOLE = "sole-connection-for-container"
OFFERED = ["ANONYMOUS-RELAY", "DELAYED_DELIVERY", "SHARED-SUBS"]
_LOCAL_ACTIVE = Endpoint.LOCAL_ACTIVE


class AttachRefused(Exception):
    def __init__(self, condition: str, description: str) -> None:
        super().__init__(description)
        self.condition = condition
        self.description = description


class BrokerConnection(TransferHandling):
    """The broker's side of one AMQP connection."""

    def __init__(self, core: BrokerCore, conn_id: int, peer: str, dirty: Callable[[], None]) -> None:
        self.core = core
        self.router = core.router
        self.txns = core.txns
        self.id = conn_id
        self.peer = peer
        self.dirty = dirty
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

    # -- dispatch ------------------------------------------------------------------------------
    def handle(self, ev: Any) -> None:
        t = ev.type
        if t is Event.DELIVERY:
            self.on_delivery_raw(ev.delivery._impl)
        elif t is Event.LINK_FLOW:
            st = self.links.get(addr(ev.link))
            if isinstance(st, OutgoingLink):
                st.on_flow()
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
        log.info("connection %s open from %s container=%s", self.id, self.peer, self.container)

    def cleanup(self) -> None:
        """The connection ended (closed or dropped): release, roll back, delete temp nodes."""
        if self.closed:
            return
        self.closed = True
        for st in list(self.links.values()):
            self._end_link(st.link, st, closed=False, connection_gone=True)
        self.links.clear()
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

    # -- authorization -------------------------------------------------------------------------
    def refusal(self, address: str, permission: Permission) -> str | None:
        """``None`` if this connection's user may, else why not (see ``authorization``). In prefix
        mode the rules name destinations, not addresses: ``queue://orders.eu`` is ``orders.eu``."""
        auth = self.core.authorization
        if auth is None:
            return None
        prefixes = self.core.prefixes
        return auth.refusal(self.user, address if prefixes is None else prefixes.name_of(address), permission)

    def _authorize(self, address: str, permission: Permission) -> None:
        denied = self.refusal(address, permission)
        if denied is not None:
            raise AttachRefused("amqp:unauthorized-access", denied)

    # -- attach --------------------------------------------------------------------------------
    def _on_attach(self, link: Link) -> None:
        if link.state & _LOCAL_ACTIVE:
            return
        try:
            limit = self.core.limits.max_links_per_connection
            if len(self.links) >= limit:
                raise AttachRefused(
                    "amqp:resource-limit-exceeded",
                    f"a connection may have {limit} links attached (limit max_links_per_connection)",
                )
            if link.is_receiver:
                self._attach_incoming(link)
            else:
                self._attach_outgoing(link)
        except AttachRefused as exc:
            self._refuse(link, exc.condition, exc.description)
        self.dirty()

    def _refuse(self, link: Link, condition: str, description: str) -> None:
        if link.is_sender:
            link.source.type = Terminus.UNSPECIFIED
            link.target.copy(link.remote_target)
        else:
            link.target.type = Terminus.UNSPECIFIED
            link.source.copy(link.remote_source)
        link.open()
        link.condition = Condition(condition, description)
        link.close()

    def _attach_incoming(self, link: Link) -> None:
        """The client sends on this link: resolve its target."""
        target = link.remote_target
        link.source.copy(link.remote_source)
        link.rcv_settle_mode = Link.RCV_FIRST
        if target.type == Terminus.COORDINATOR:
            link.target.copy(target)
            st = IncomingLink(link, None, coordinator=True, window=100)
        elif target.dynamic:
            address, _, policy = self._create_temporary(target, symbols(target.capabilities))
            link.target.copy(target)
            link.target.address = address
            set_lifetime_policy(link.target, policy)
            st = IncomingLink(link, address)
            st.temp_node = address
        elif not target.address:
            link.target.copy(target)
            st = IncomingLink(link, None)
        elif self._is_management(str(target.address)):  # authorized per request (management.py)
            link.target.copy(target)
            st = IncomingLink(link, str(target.address), management=True, window=100)
        else:
            address = str(target.address)
            caps = symbols(target.capabilities)
            self._authorize(address, Permission.SEND)
            self._resolve(address, caps)
            link.target.copy(target)
            st = IncomingLink(link, address)
        self.links[addr(link)] = st
        link.max_message_size = self.core.limits.max_message_size
        link.open()
        link.flow(st.window)

    def _is_management(self, address: str) -> bool:
        prefixes = self.core.prefixes
        return (address if prefixes is None else prefixes.name_of(address)) == MANAGEMENT_ADDRESS

    def _resolve(self, address: str, caps: set[str]) -> NodeKind:
        """The node at ``address`` of the type the capabilities ask for (created if absent); in
        prefix mode the address prefix decides and capabilities are ignored."""
        prefixes = self.core.prefixes
        if prefixes is not None:
            caps = {prefixes.kind_of(address).value}
        want = kind_from_caps(caps)
        have = self.router.node_kind(address)
        if have is None:
            if want.is_temporary:
                raise AttributeRefused("amqp:not-found", f"temporary destination {address!r} does not exist")
            self._room_for_node()
            return self.router.ensure_node(address, want)
        explicit = bool(caps & {"queue", "topic", "temporary-queue", "temporary-topic"})
        if explicit and have.is_topic != want.is_topic:
            raise AttachRefused(
                "amqp:not-found",
                f"{address!r} is a {have.value}, not a {want.value}",
            )
        return have

    def _create_temporary(self, terminus: Any, caps: Any) -> tuple[str, NodeKind, Any]:
        """A dynamic terminus: create the temporary node it asks for (a queue unless its
        capabilities say topic), owned by this connection, with its lifetime policy; the node's
        address, kind and that policy."""
        kind = kind_from_caps(caps, NodeKind.TEMP_QUEUE)
        address = self._temp_address(kind)
        self._authorize(address, Permission.CREATE_TEMPORARY)
        self._room_for_node()
        self.router.ensure_node(address, kind)
        self.core.temp_owner[address] = self.id
        policy = lifetime_policy(terminus)
        self.core.temps.created(address, policy)
        return address, kind, policy

    def _temp_address(self, kind: NodeKind) -> str:
        """A new temporary node's address (with its ``temp-*://`` scheme in prefix mode)."""
        address = self.router.temp_address(kind)
        prefixes = self.core.prefixes
        return address if prefixes is None else prefixes.temp_address(address, kind)

    def _room_for_node(self) -> None:
        """Refuse to create a node or a named subscription once ``max_nodes`` exist."""
        limit = self.core.limits.max_nodes
        router = self.router
        if limit and len(router.kinds) + len(router.subscriptions) >= limit:
            raise AttachRefused(
                "amqp:resource-limit-exceeded",
                f"the broker holds {limit} queues, topics and subscriptions (limit max_nodes)",
            )

    def _attach_outgoing(self, link: Link) -> None:
        """The client receives on this link: resolve its source (queue, topic, subscription)."""
        source = link.remote_source
        link.target.copy(link.remote_target)
        presettled = link.remote_snd_settle_mode == Link.SND_SETTLED
        link.snd_settle_mode = Link.SND_SETTLED if presettled else Link.SND_UNSETTLED
        if source.type == Terminus.UNSPECIFIED or (
            not source.address and not source.dynamic and self._lookup_subscription(link.name) is not None
        ):
            self._attach_lookup(link)
            return
        caps = symbols(source.capabilities)
        filters = filters_of(source)
        matcher = self.core.compile_selector(filters.selector) if filters.selector else None
        link.source.copy(source)
        set_filters(link.source, filters.selector, filters.no_local)
        st: OutgoingLink
        if source.dynamic:
            address, kind, policy = self._create_temporary(source, caps)
            link.source.address = address
            set_lifetime_policy(link.source, policy)
            if kind.is_topic:
                sub = self._new_subscription(None, address, filters.selector, matcher, filters.no_local)
                st = OutgoingLink(self, link, sub.queue, presettled=presettled, subscription=sub)
            else:
                st = OutgoingLink(self, link, self.router.queues[address], presettled=presettled,
                                  matcher=matcher)
                st.queue.add_consumer(st)
            st.temp_node = address
        else:
            address = str(source.address or "")
            if not address:
                raise AttachRefused("amqp:invalid-field", "source address is required")
            is_topic = (self.router.node_kind(address) or kind_from_caps(caps)).is_topic
            browsing = source.distribution_mode == Terminus.DIST_MODE_COPY and not is_topic
            if self.core.temp_owner.get(address) != self.id:  # a temporary's creator may read it
                self._authorize(address, Permission.BROWSE if browsing else Permission.CONSUME)
            kind = self._resolve(address, caps)
            if kind.is_topic:
                st = self._attach_subscriber(link, address, caps, filters.selector, matcher, filters.no_local,
                                             presettled)
            else:
                browse = source.distribution_mode == Terminus.DIST_MODE_COPY
                st = OutgoingLink(self, link, self.router.queues[address], presettled=presettled,
                                  matcher=matcher, browse=browse)
                if not browse:
                    st.queue.add_consumer(st)
        self.links[addr(link)] = st
        link.open()

    def _new_subscription(
        self,
        key: tuple[str, str | None, str] | None,
        topic: str,
        selector: str | None,
        matcher: Callable[[BrokerMessage], bool] | None,
        no_local: bool,
        *,
        durable: bool = False,
        shared: bool = False,
        global_: bool = False,
        source: dict[str, Any] | None = None,
    ) -> Subscription:
        if key is not None:
            self._room_for_node()
            qname = f"sub:{key[1] or ''}:{key[2]}"
        else:
            qname = f"sub:{self.id}:{self.router.temp_address(NodeKind.TEMP_QUEUE)}"
        sub = Subscription(
            key=key,
            topic=topic,
            queue=self.router.new_queue(qname, durable=durable),
            selector_text=selector,
            matcher=matcher,
            no_local=no_local,
            owner=self.id,
            durable=durable,
            shared=shared,
            global_=global_,
            source=source or {},
        )
        self.router.subscribe(topic, sub)
        return sub

    def _attach_subscriber(
        self,
        link: Link,
        topic: str,
        caps: set[str],
        selector: str | None,
        matcher: Callable[[BrokerMessage], bool] | None,
        no_local: bool,
        presettled: bool,
    ) -> OutgoingLink:
        source = link.remote_source
        durable = is_durable(source)
        name = parse_subscription_name(str(link.name), caps)
        sub: Subscription | None = None
        if durable or name.shared:
            scope = None if name.global_ else self.container
            key = ("durable" if durable and not name.volatile else "volatile", scope, name.name)
            sub = self.router.subscriptions.get(key)
            changed = sub is not None and (
                sub.topic != topic or sub.selector_text != selector or sub.no_local != no_local
            )
            if sub is not None and changed:
                if sub.links:
                    raise AttachRefused(
                        "amqp:resource-locked",
                        f"subscription {name.name!r} is active with a different topic or selector",
                    )
                self.router.unsubscribe(sub)
                sub = None
            if sub is not None and sub.links and not sub.shared:
                raise AttachRefused(
                    "amqp:resource-locked", f"durable subscription {name.name!r} is already active"
                )
            if sub is None:
                stored_caps = ["topic"]
                if name.shared:
                    stored_caps.append("shared")
                if name.global_:
                    stored_caps.append("global")
                sub = self._new_subscription(
                    key, topic, selector, matcher, no_local,
                    durable=key[0] == "durable", shared=name.shared, global_=name.global_,
                    source={"address": topic, "capabilities": stored_caps, "selector": selector,
                            "no_local": no_local},
                )
            sub.owner = self.id
            if durable:
                link.source.durability = Terminus.DELIVERIES
                link.source.expiry_policy = Terminus.EXPIRE_NEVER
        else:
            sub = self._new_subscription(None, topic, selector, matcher, no_local)
        sub.links += 1
        st = OutgoingLink(self, link, sub.queue, presettled=presettled, subscription=sub)
        sub.queue.add_consumer(st)
        return st

    def _lookup_subscription(self, link_name: str) -> Subscription | None:
        name = parse_subscription_name(link_name, set())
        for kind in ("durable", "volatile"):
            for scope in (self.container, None):
                sub = self.router.subscriptions.get((kind, scope, name.name))
                if sub is not None and (scope is not None or name.global_ or link_name == name.name):
                    return sub
        return None

    def _attach_lookup(self, link: Link) -> None:
        """Attach with a null source: return the stored source of the named subscription."""
        sub = self._lookup_subscription(str(link.name))
        if sub is None:
            link.source.type = Terminus.UNSPECIFIED
            link.open()
            self.links[addr(link)] = OutgoingLink(self, link, self.router.new_queue("lookup", durable=False),
                                            presettled=False)
            return
        self._authorize(sub.topic, Permission.CONSUME)
        s = link.source
        s.type = Terminus.SOURCE
        s.address = sub.topic
        s.durability = Terminus.DELIVERIES
        s.expiry_policy = Terminus.EXPIRE_NEVER
        set_capabilities(s.capabilities, list(sub.source.get("capabilities") or ["topic"]))
        set_filters(s, sub.selector_text, sub.no_local)
        st = OutgoingLink(self, link, sub.queue, presettled=False, subscription=sub)
        st.lookup = True
        self.links[addr(link)] = st
        link.open()

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
            if isinstance(st, OutgoingLink) and (
                st.queue.name == address or (st.subscription is not None and st.subscription.topic == address)
            ):
                self.links.pop(key, None)
                st.closed = True
                st.queue.remove_consumer(st)
                if link.state & _LOCAL_ACTIVE:
                    link.condition = Condition("amqp:resource-deleted", f"{address!r} was deleted")
                    link.close()
        self.dirty()


class AttributeRefused(AttachRefused):
    """Alias kept for readability at raise sites about node attributes."""


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
