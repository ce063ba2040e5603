"""Helpers that fill proton termini and read remote attributes in the Qpid JMS conventions."""

from __future__ import annotations

from typing import Any

from proton import Array, Data, Terminus, symbol, ulong

from ...destination import Destination

__all__ = [
    "JMS_NO_LOCAL_CODE",
    "JMS_SELECTOR_CODE",
    "capability_for",
    "put_symbols",
    "set_filters",
    "symbol_array",
    "symbols_of",
]

JMS_SELECTOR_CODE = ulong(0x0000468C00000004)
JMS_NO_LOCAL_CODE = ulong(0x0000468C00000003)
OUTCOMES = ("amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list")


def capability_for(dest: Destination) -> str:
    """The terminus capability of mapping §5.2 for a destination kind."""
    return dest.kind  # queue / topic / temporary-queue / temporary-topic


def symbol_array(names: list[str] | tuple[str, ...]) -> Array:
    from proton import UNDESCRIBED

    return Array(UNDESCRIBED, Data.SYMBOL, *[symbol(n) for n in names])  # type: ignore[arg-type]


def put_symbols(data: Data, names: list[str] | tuple[str, ...]) -> None:
    """Write an array of symbols into a terminus Data field (capabilities, outcomes)."""
    data.put_array(False, Data.SYMBOL)
    data.enter()
    for n in names:
        data.put_symbol(symbol(n))
    data.exit()


def set_filters(term: Terminus, selector: str | None, no_local: bool) -> None:
    """The JMS selector and no-local filters of the Qpid JMS/ActiveMQ convention."""
    if not selector and not no_local:
        return
    f = term.filter
    f.put_map()
    f.enter()
    if selector:
        f.put_symbol(symbol("jms-selector"))
        f.put_described()
        f.enter()
        f.put_ulong(JMS_SELECTOR_CODE)
        f.put_string(selector)
        f.exit()
    if no_local:
        f.put_symbol(symbol("no-local"))
        f.put_described()
        f.enter()
        f.put_ulong(JMS_NO_LOCAL_CODE)
        f.put_string("NoLocalFilter{}")
        f.exit()
    f.exit()


def symbols_of(value: Any) -> frozenset[str]:
    """Capabilities as proton returns them (Array, list, single symbol or None) as str set."""
    if value is None:
        return frozenset()
    if isinstance(value, Array):
        return frozenset(str(e) for e in value.elements)
    if isinstance(value, list | tuple):
        return frozenset(str(e) for e in value)
    return frozenset((str(value),))


def data_symbols(data: Data) -> frozenset[str]:
    """Symbols from a terminus capabilities Data (array or single symbol)."""
    data.rewind()
    if not data.next():
        return frozenset()
    return symbols_of(data.get_object())


def has_filter(data: Data, key: str) -> bool:
    data.rewind()
    if not data.next():
        return False
    obj = data.get_object()
    return isinstance(obj, dict) and any(str(k) == key for k in obj)
