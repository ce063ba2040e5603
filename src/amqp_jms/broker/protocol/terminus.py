"""Reading and writing link termini: capabilities, filters, dynamic-node properties.

Attach handling needs the same few facts from every source/target (its address, node type
capability, selector and no-local filters, durability, subscription identity); this module turns
proton's ``Terminus``/``Data`` into plain Python and back, so the connection code stays about
routing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proton import UNDESCRIBED, Array, Data, Described, Terminus, symbol, ulong

from ..errors import MalformedFrame
from ..routing.nodes import NodeKind

__all__ = [
    "NO_LOCAL_CODE",
    "NO_LOCAL_NAME",
    "SELECTOR_CODE",
    "SELECTOR_NAME",
    "SubscriptionName",
    "data_object",
    "filters_of",
    "kind_from_caps",
    "parse_subscription_name",
    "set_capabilities",
    "set_filters",
    "symbol_set",
    "symbols",
]

SELECTOR_CODE = 0x0000468C00000004
SELECTOR_NAME = "apache.org:selector-filter:string"
NO_LOCAL_CODE = 0x0000468C00000003
NO_LOCAL_NAME = "apache.org:no-local-filter:list"


def data_object(data: Data) -> Any:
    """The single value held by a proton ``Data`` (``None`` if empty)."""
    data.rewind()
    if data.next() is None:
        return None
    return data.get_object()


def symbols(data: Data) -> set[str]:
    """A capabilities field (one symbol or an array of them) as a set of strings."""
    return symbol_set(data_object(data))


def symbol_set(obj: Any) -> set[str]:
    """A decoded capabilities value (``None``, a symbol, or an array/list of symbols) as strings;
    anything else is malformed (AMQP 1.0 part 2.7: capabilities are ``symbol``, multiple)."""
    if obj is None:
        return set()
    items = obj.elements if isinstance(obj, Array) else obj if isinstance(obj, list | tuple) else [obj]
    if not all(isinstance(e, symbol) for e in items):
        raise MalformedFrame(f"capabilities must be symbols, got {obj!r:.80}")
    return {str(e) for e in items}


def set_capabilities(data: Data, caps: list[str]) -> None:
    data.clear()
    if caps:
        data.put_object(Array(UNDESCRIBED, Data.SYMBOL, *[symbol(c) for c in caps]))  # type: ignore[arg-type]


@dataclass(slots=True)
class Filters:
    selector: str | None = None
    no_local: bool = False
    raw: dict[Any, Any] | None = None  # echoed back as received
    unsupported: list[str] | None = None


def filters_of(term: Terminus) -> Filters:
    """The jms-selector and no-local filters of a source (by descriptor code or symbol)."""
    obj = data_object(term.filter)
    out = Filters()
    if not isinstance(obj, dict):
        return out
    out.raw = obj
    for key, value in obj.items():
        desc = value.descriptor if isinstance(value, Described) else None
        val = value.value if isinstance(value, Described) else value
        if desc in (SELECTOR_CODE, SELECTOR_NAME) or (desc is None and str(key) == "jms-selector"):
            out.selector = str(val) if val is not None else None
        elif desc in (NO_LOCAL_CODE, NO_LOCAL_NAME):
            out.no_local = True
        else:
            out.unsupported = [*(out.unsupported or []), str(key)]
    return out


def set_filters(term: Terminus, selector: str | None, no_local: bool) -> None:
    """Write the accepted filters onto a (local) source."""
    f: dict[Any, Any] = {}
    if selector:
        f[symbol("jms-selector")] = Described(ulong(SELECTOR_CODE), selector)
    if no_local:
        f[symbol("no-local")] = Described(ulong(NO_LOCAL_CODE), [])
    term.filter.clear()
    if f:
        term.filter.put_object(f)


def kind_from_caps(caps: set[str], default: NodeKind = NodeKind.QUEUE) -> NodeKind:
    if "temporary-queue" in caps:
        return NodeKind.TEMP_QUEUE
    if "temporary-topic" in caps:
        return NodeKind.TEMP_TOPIC
    if "topic" in caps:
        return NodeKind.TOPIC
    if "queue" in caps:
        return NodeKind.QUEUE
    return default


@dataclass(frozen=True, slots=True)
class SubscriptionName:
    name: str
    shared: bool
    global_: bool
    volatile: bool


def parse_subscription_name(link_name: str, caps: set[str]) -> SubscriptionName:
    """Subscription identity from a Qpid JMS link name: ``sub``, ``sub|2``, ``sub|global``,
    ``sub|volatile1``, ``sub|global-volatile1``; ``shared``/``global`` capabilities agree."""
    base, _, suffix = link_name.partition("|")
    shared = "shared" in caps
    glob = "global" in caps or suffix.startswith("global")
    volatile = "volatile" in suffix
    if not shared and not suffix:
        return SubscriptionName(link_name, False, glob, False)
    return SubscriptionName(base, True, glob, volatile)


def is_durable(term: Terminus) -> bool:
    return bool(term.durability != Terminus.NONDURABLE or term.expiry_policy == Terminus.EXPIRE_NEVER)
