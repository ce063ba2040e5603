"""What an AMQP peer supports, judged from its Open: offered capabilities and measured quirks.

Every rule that knows a capability symbol or a broker product lives here, so the JMS layer only
asks ``Capabilities`` (``provider/base.py``) and the AMQP provider's links ask ``PeerQuirks``.
The RabbitMQ rules were measured against its AMQP 1.0 plugin (3.10; see
``/work/shared/notes/field-notes.md`` and
``tests/integration/test_client_rabbitmq_subscriptions_and_temporaries.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import (
    BROWSERS,
    DELAYED_DELIVERY,
    DURABLE_SUBSCRIPTIONS,
    SHARED_SUBSCRIPTIONS,
    UNSUBSCRIBE,
    Capabilities,
)

__all__ = ["PeerQuirks", "capabilities_of", "quirks_of", "txn_outcomes_of"]

#: a coordinator offering it keeps the outcomes of committed transactions: a Discharge of a
#: transaction it no longer holds is answered from them (amqp-jms's broker; docs/broker.md)
TXN_OUTCOMES = "amqp-jms:txn-outcomes"
#: the peer's Open property naming the store those outcomes are kept in
STORE_ID = "amqp-jms:store-id"

_RABBITMQ_REFUSALS = {
    # a browser must drain to know it has seen everything, and a drain request crashes the
    # session (amqp:internal-error)
    BROWSERS: "a drain request ends its session",
    DURABLE_SUBSCRIPTIONS: "it echoes the durable source but drops the subscription on detach",
    UNSUBSCRIBE: "a null-source attach makes it drop the connection",
}


@dataclass(frozen=True, slots=True)
class PeerQuirks:
    """Behaviours of the peer the AMQP links work around (never seen by the JMS layer)."""

    #: echoes a selector filter on attach but never applies it (RabbitMQ)
    ignores_selectors: bool = False
    #: ends the session when a classic queue answers a drain that leaves credit unused
    #: (RabbitMQ before 3.12, rabbitmq-server#7119): never drain just to check an empty queue
    drain_unsafe: bool = False


def _version(text: object) -> tuple[int, ...]:
    """``"3.10.8"`` -> ``(3, 10, 8)``; what cannot be read counts as very old: ``()``."""
    parts = []
    for piece in str(text or "").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _product(properties: Mapping[str, Any]) -> str:
    return str(properties.get("product") or "")


def capabilities_of(offered: frozenset[str], properties: Mapping[str, Any]) -> Capabilities:
    """The JMS-level capabilities of a peer that offered ``offered`` with Open ``properties``."""
    refusals: dict[str, str] = {}
    if "DELAYED_DELIVERY" not in offered:
        refusals[DELAYED_DELIVERY] = (
            "the peer does not offer DELAYED_DELIVERY: delivery delay is not supported")
    if "SHARED-SUBS" not in offered:
        refusals[SHARED_SUBSCRIPTIONS] = (
            "the peer does not offer SHARED-SUBS: shared subscriptions are not supported")
    if _product(properties) == "RabbitMQ":
        for feature, why in _RABBITMQ_REFUSALS.items():
            refusals[feature] = f"RabbitMQ's AMQP 1.0 plugin does not support {feature}: {why}"
    return Capabilities(anonymous_relay="ANONYMOUS-RELAY" in offered, refusals=refusals)


def quirks_of(properties: Mapping[str, Any]) -> PeerQuirks:
    rabbit = _product(properties) == "RabbitMQ"
    return PeerQuirks(ignores_selectors=rabbit,
                      drain_unsafe=rabbit and _version(properties.get("version")) < (3, 12))


def txn_outcomes_of(coordinator_caps: frozenset[str], properties: Mapping[Any, Any] | None) -> str | None:
    """The store a coordinator keeps commit outcomes in, if it offers to answer for them
    (``amqp-jms:txn-outcomes`` in its capabilities, ``amqp-jms:store-id`` in the peer's Open
    ``properties``); None for every other peer,
    whose in-doubt commits are then reported as Qpid JMS does (rolled back)."""
    if TXN_OUTCOMES not in coordinator_caps or not properties:
        return None
    store = {str(k): v for k, v in properties.items()}.get(STORE_ID)
    return str(store) if store else None
