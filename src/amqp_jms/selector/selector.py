"""``Selector``: parse once, evaluate many times (per message, per lookup, or per Arrow batch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..exceptions import InvalidSelectorException
from .ast import Node
from .compiler import compile_selector, lookup_headers, message_headers
from .parser import parse

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Selector"]


class _Lookup:
    """Adapts ``get(name)`` to the ``props.get(name)`` shape the compiled closures call."""

    __slots__ = ("get",)

    def __init__(self, get: Callable[[str], object]) -> None:
        self.get = get


def _always(p: Any, m: Any) -> bool:
    return True


class Selector:
    """A parsed JMS message selector.

    ``Selector(text)`` raises ``InvalidSelectorException`` naming the position and what was
    expected. An empty or whitespace-only text (or ``None``) is "no selector": ``ast`` is None
    and everything matches.

    - ``matches(message)``: for amqp_jms messages (typed properties in ``message._props``,
      headers from ``get_jms_*()``).
    - ``matches_lookup(get)``: for anything else, e.g. the broker filtering an AMQP message
      without building a JMS message. ``get(identifier)`` returns the value or ``None`` for every
      identifier the selector uses, header names included: ``JMSDeliveryMode`` as
      ``'PERSISTENT'``/``'NON_PERSISTENT'`` or 1/2, ``JMSPriority`` an int, ``JMSTimestamp`` int
      milliseconds, ``JMSMessageID``/``JMSCorrelationID``/``JMSType`` str; property values typed
      as in ``amqp_jms.types`` (plain int = long, plain float = double, ``Int``, ``Float`` ...).
    - ``evaluate_batch(batch)``: vectorized over a pyarrow RecordBatch/Table (see ``arrow.py``).
    """

    __slots__ = ("_lookup_fn", "_message_fn", "ast", "text")

    def __init__(self, text: str | None) -> None:
        if text is not None and not isinstance(text, str):
            raise InvalidSelectorException(f"a selector must be a string, not {type(text).__name__}")
        self.text = text or ""
        self.ast: Node | None = parse(self.text)
        self._message_fn: Callable[[Any, Any], bool] = _always
        self._lookup_fn: Callable[[Any, Any], bool] = _always
        if self.ast is not None:
            self._message_fn = compile_selector(self.ast, message_headers())
            self._lookup_fn = compile_selector(self.ast, lookup_headers())

    def matches(self, message: Any) -> bool:
        """Whether the selector evaluates to TRUE for an amqp_jms message."""
        return self._message_fn(message._props, message)

    def matches_lookup(self, get: Callable[[str], object]) -> bool:
        """Whether the selector evaluates to TRUE where ``get(identifier)`` gives the values."""
        w = _Lookup(get)
        return self._lookup_fn(w, w)

    def evaluate_batch(self, batch: pa.RecordBatch | pa.Table) -> pa.BooleanArray:
        """One bool per row, identical to ``matches`` on each row (unknown -> False)."""
        from .arrow import evaluate_batch

        return evaluate_batch(self.ast, batch)

    def __repr__(self) -> str:
        return f"Selector({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and other.ast == self.ast

    def __hash__(self) -> int:
        return hash(self.ast)
