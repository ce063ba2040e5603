"""What the management node reports: the broker's entities as rows of named attributes.

Five manageable entity types (AMQP Management's term), each a type name, its attribute names and
a reader over the broker's own structures (router queues, topics, subscriptions, connections and
their consumer links), read directly and locally: a QUERY answers from the same objects the
broker runs on. The ``org.amqp.management`` standard attributes ``name``, ``identity`` and
``type`` come first.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.connection import registered
from ..protocol.links import OutgoingLink
from ..protocol.terminus import filters_of
from ..routing.authorization import Permission
from ..routing.core import MANAGEMENT_ADDRESS
from ..routing.nodes import NodeKind, Subscription
from ..routing.queue import MessageQueue

if TYPE_CHECKING:
    from ..routing.core import BrokerCore

__all__ = [
    "CONNECTION",
    "CONSUMER",
    "ENTITY_TYPES",
    "QUEUE",
    "SUBSCRIPTION",
    "TOPIC",
    "EntityType",
    "entity_type",
    "subscription_identity",
]

QUEUE = "org.amqpjms.queue"
TOPIC = "org.amqpjms.topic"
SUBSCRIPTION = "org.amqpjms.subscription"
CONNECTION = "org.amqpjms.connection"
CONSUMER = "org.amqpjms.consumer"

Row = dict[str, Any]


@dataclass(frozen=True)
class EntityType:
    """One manageable entity type: its attributes, its entities, who may read them."""

    name: str
    attributes: tuple[str, ...]
    operations: tuple[str, ...]
    rows: Callable[[BrokerCore], Iterator[tuple[str, Row]]]  # (address authorization is about, row)
    read_permissions: tuple[Permission, ...]  # any one of them on that address lets a user read


def _queue_row(name: str, kind: NodeKind, q: MessageQueue) -> Row:
    return {
        "name": name,
        "identity": name,
        "type": QUEUE,
        "kind": kind.value,
        "durable": q.durable,
        "messageCount": len(q),
        "scheduledCount": q.delayed,
        "deliveringCount": sum(len(getattr(c, "unacked", ())) for c in q.consumers),
        "consumerCount": len(q.consumers),
        "pagedCount": q.paged,
        "bytes": q.byte_size + q.paged_bytes,
    }


def _queues(core: BrokerCore) -> Iterator[tuple[str, Row]]:
    router = core.router
    for name, q in router.queues.items():
        kind = router.kinds.get(name, NodeKind.QUEUE)
        yield name, _queue_row(name, kind, q)


def _topics(core: BrokerCore) -> Iterator[tuple[str, Row]]:
    for name, topic in core.router.topics.items():
        yield name, {
            "name": name,
            "identity": name,
            "type": TOPIC,
            "kind": topic.kind.value,
            "subscriptionCount": len(topic.subscriptions),
            "messageCount": sum(len(s.queue) for s in topic.subscriptions),
        }


def subscription_identity(sub: Subscription) -> str:
    """``<client-id>:<name>`` (client id empty for a global shared subscription)."""
    key = sub.key
    assert key is not None
    return f"{key[1] or ''}:{key[2]}"


def _subscriptions(core: BrokerCore) -> Iterator[tuple[str, Row]]:
    for key, sub in core.router.subscriptions.items():
        q = sub.queue
        yield sub.topic, {
            "name": key[2],
            "identity": subscription_identity(sub),
            "type": SUBSCRIPTION,
            "clientId": key[1],
            "topic": sub.topic,
            "selector": sub.selector_text,
            "durable": sub.durable,
            "shared": sub.shared,
            "noLocal": sub.no_local,
            "messageCount": len(q),
            "deliveringCount": sum(len(getattr(c, "unacked", ())) for c in q.consumers),
            "consumerCount": sub.links,
        }


def _connections(core: BrokerCore) -> Iterator[tuple[str, Row]]:
    for conn_id, conn in registered(core).items():
        if conn.closed:
            continue
        yield MANAGEMENT_ADDRESS, {
            "name": str(conn_id),
            "identity": str(conn_id),
            "type": CONNECTION,
            "remoteAddress": _address(conn.peer),
            "containerId": conn.container,
            "user": conn.user,
            "sessionCount": conn.sessions,
            "linkCount": len(conn.links),
        }


def _consumers(core: BrokerCore) -> Iterator[tuple[str, Row]]:
    """Every link the broker delivers on (consumers, and browsers marked as such): who reads
    which queue, from where, with what selector, and how far behind it is. Authorized on the
    address it reads (the queue, or the subscription's topic)."""
    for conn_id, conn in registered(core).items():
        if conn.closed:
            continue
        for st in list(conn.links.values()):
            if not isinstance(st, OutgoingLink) or st.lookup or st.closed:
                continue
            sub = st.subscription
            address = sub.topic if sub is not None else st.queue.name
            link = st.link
            yield address, {
                "name": link.name,
                "identity": f"{conn_id}/{link.name}",
                "type": CONSUMER,
                "address": address,
                "queue": st.queue.name,
                "subscription": None if sub is None or sub.key is None else subscription_identity(sub),
                "connectionId": str(conn_id),
                "containerId": conn.container,
                "user": conn.user,
                "remoteAddress": _address(conn.peer),
                "selector": filters_of(link.source).selector,
                "browser": st.browse,
                "presettled": st.presettled,
                "credit": link.credit,
                "deliveringCount": len(st.unacked),
            }


def _address(peer: Any) -> str:
    """``host:port`` from the listener's peer (a socket address, or its ``str()`` as kept)."""
    if isinstance(peer, str) and peer.startswith("("):
        try:
            peer = ast.literal_eval(peer)
        except (ValueError, SyntaxError):
            return peer
    if isinstance(peer, tuple) and len(peer) >= 2:
        host = str(peer[0])
        return f"[{host}]:{peer[1]}" if ":" in host else f"{host}:{peer[1]}"
    return str(peer)


ENTITY_TYPES: dict[str, EntityType] = {
    t.name: t
    for t in (
        EntityType(QUEUE, ("name", "identity", "type", "kind", "durable", "messageCount", "scheduledCount",
                           "deliveringCount", "consumerCount", "pagedCount", "bytes"),
                   ("READ", "DELETE", "PURGE", "MOVE", "BROWSE"), _queues,
                   (Permission.BROWSE, Permission.MANAGE)),
        EntityType(TOPIC, ("name", "identity", "type", "kind", "subscriptionCount", "messageCount"),
                   ("READ",), _topics, (Permission.CONSUME, Permission.MANAGE)),
        EntityType(SUBSCRIPTION, ("name", "identity", "type", "clientId", "topic", "selector", "durable",
                                  "shared", "noLocal", "messageCount", "deliveringCount", "consumerCount"),
                   ("READ", "DELETE", "PURGE"), _subscriptions, (Permission.CONSUME, Permission.MANAGE)),
        EntityType(CONNECTION, ("name", "identity", "type", "remoteAddress", "containerId", "user",
                                "sessionCount", "linkCount"),
                   ("READ",), _connections, (Permission.MANAGE,)),
        EntityType(CONSUMER, ("name", "identity", "type", "address", "queue", "subscription", "connectionId",
                              "containerId", "user", "remoteAddress", "selector", "browser", "presettled",
                              "credit", "deliveringCount"),
                   ("READ",), _consumers, (Permission.MANAGE,)),
    )
}


def entity_type(name: str) -> EntityType | None:
    """The entity type called ``name``: its full name, or the short one (``queue``)."""
    found = ENTITY_TYPES.get(name)
    if found is None and "." not in name:
        found = ENTITY_TYPES.get(f"org.amqpjms.{name}")
    return found
