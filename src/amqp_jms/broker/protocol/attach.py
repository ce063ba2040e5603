"""Attach vetting and link creation for one broker connection: who may attach where, which node
an address names (queue, topic, temporary, management, the anonymous relay, the transaction
coordinator), termini echo, durable and shared subscriptions and their lookups.

A mixin of :class:`amqp_jms.broker.protocol.connection.BrokerConnection`, split out so that module keeps
the connection's life (open, sessions, detach, back-pressure) and this one the attach rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from proton import Condition, Endpoint, Link, Terminus

from ..errors import AttachRefused
from ..routing.authorization import Permission
from ..routing.cbs import NODE as CBS_NODE
from ..routing.core import MANAGEMENT_ADDRESS
from ..routing.nodes import NodeKind, Subscription
from ..routing.temporary import lifetime_policy, set_lifetime_policy
from ..routing.txn_outcomes import TXN_OUTCOMES_CAPABILITY
from ..storage.message import BrokerMessage
from ._fast import addr
from .links import IncomingLink, OutgoingLink
from .terminus import (
    filters_of,
    is_durable,
    kind_from_caps,
    parse_subscription_name,
    set_capabilities,
    set_filters,
    symbols,
)

if TYPE_CHECKING:
    from ..routing.core import BrokerCore
    from ..routing.nodes import Router
    from .cbs_link import CbsLink
    from .connection import BrokerConnection

__all__ = ["AttachHandling"]

_LOCAL_ACTIVE = Endpoint.LOCAL_ACTIVE


class AttachHandling:
    """Mixin: needs the connection's id, user, container, links, router, core and flush hook."""

    id: int
    core: BrokerCore
    router: Router
    user: str | None
    container: str | None
    links: dict[int, OutgoingLink | IncomingLink]
    dirty: Callable[[], None]
    cbs_link: CbsLink

    @property
    def _connection(self) -> BrokerConnection:
        """This mixin as the connection it is part of (the links keep a reference to it)."""
        return cast("BrokerConnection", self)

    # -- authorization -------------------------------------------------------------------------
    def refusal(self, address: str, permission: Permission) -> str | None:
        """``None`` if this connection's user may, else why not (see ``authorization``). In prefix
        mode the rules name destinations, not addresses: ``queue://orders.eu`` is ``orders.eu``.

        The connection that created a temporary destination may send to it, consume from it and
        browse it whatever the rules say (a request/reply client sends to its own reply queue
        too); managing it still takes ``manage``."""
        if permission is not Permission.MANAGE and self.core.temp_owner.get(address) == self.id:
            return None
        return self.core.refusal(self.user, address, permission)

    def _authorize(self, address: str, permission: Permission) -> None:
        denied = self.refusal(address, permission)
        if denied is not None:
            raise AttachRefused("amqp:unauthorized-access", denied)
        cbs = self.core.cbs
        if cbs is not None and not cbs.allows(self.id, address):
            raise AttachRefused("amqp:unauthorized-access",
                                f"no token put on $cbs covers {address!r} (put-token first)")

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
            outcomes = self.core.txns.outcomes
            if outcomes is not None and outcomes.offered:  # a client may ask after an unanswered discharge
                set_capabilities(link.target.capabilities,
                                 sorted(symbols(target.capabilities) | {TXN_OUTCOMES_CAPABILITY}))
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
        elif str(target.address) == CBS_NODE and self.core.cbs is not None:  # anyone may put a token
            link.target.copy(target)
            st = IncomingLink(link, CBS_NODE, cbs=True, window=100)
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
                raise AttachRefused("amqp:not-found", f"temporary destination {address!r} does not exist")
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
        if source.address == CBS_NODE and self.core.cbs is not None:  # the answers to put-token
            self.cbs_link.attach_reply(link)
            return
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
                st = OutgoingLink(self._connection, link, sub.queue, presettled=presettled, subscription=sub)
            else:
                st = OutgoingLink(self._connection, link, self.router.queues[address], presettled=presettled,
                                  matcher=matcher)
                st.queue.add_consumer(st)
            st.temp_node = address
        else:
            address = str(source.address or "")
            if not address:
                raise AttachRefused("amqp:invalid-field", "source address is required")
            is_topic = (self.router.node_kind(address) or kind_from_caps(caps)).is_topic
            browsing = source.distribution_mode == Terminus.DIST_MODE_COPY and not is_topic
            self._authorize(address, Permission.BROWSE if browsing else Permission.CONSUME)
            kind = self._resolve(address, caps)
            if kind.is_topic:
                st = self._attach_subscriber(link, address, caps, filters.selector, matcher, filters.no_local,
                                             presettled)
            else:
                browse = source.distribution_mode == Terminus.DIST_MODE_COPY
                st = OutgoingLink(self._connection, link, self.router.queues[address], presettled=presettled,
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
        st = OutgoingLink(self._connection, link, sub.queue, presettled=presettled, subscription=sub)
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
            # AMQP 1.0 2.6.3: a null source, then the Detach that says why (what ActiveMQ sends
            # and Qpid JMS waits for: without it, its unsubscribe of an unknown name hangs)
            link.source.type = Terminus.UNSPECIFIED
            link.open()
            name = parse_subscription_name(str(link.name), set()).name
            link.condition = Condition("amqp:not-found", f"no subscription named {name!r}")
            link.close()
            return
        self._authorize(sub.topic, Permission.CONSUME)
        s = link.source
        s.type = Terminus.SOURCE
        s.address = sub.topic
        s.durability = Terminus.DELIVERIES
        s.expiry_policy = Terminus.EXPIRE_NEVER
        set_capabilities(s.capabilities, list(sub.source.get("capabilities") or ["topic"]))
        set_filters(s, sub.selector_text, sub.no_local)
        st = OutgoingLink(self._connection, link, sub.queue, presettled=False, subscription=sub)
        st.lookup = True
        self.links[addr(link)] = st
        link.open()
