"""``Selector``: parse once, evaluate many times (per message, per lookup, or per Arrow batch)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..exceptions import InvalidSelectorException
from .ast import Node
from .codegen import compile_lookup, compile_message
from .parser import parse

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Selector"]


def _always(_: object) -> bool:
    return True


class _Lazy:
    """A selector's evaluator until its first call generates it (then the instance holds the
    generated function itself). It refers to its ``Selector`` weakly, so a selector and its
    generated code are freed as soon as the last user lets go, with no reference cycle waiting
    for the cyclic garbage collector (a broker frees a consumer's selector when it detaches)."""

    __slots__ = ("_attr", "_build", "_fn", "_owner")

    def __init__(self, owner: Selector, attr: str, build: Callable[[], Callable[[Any], bool]]) -> None:
        self._owner = weakref.ref(owner)
        self._attr = attr
        self._build: Callable[[], Callable[[Any], bool]] | None = build
        self._fn: Callable[[Any], bool] | None = None

    def force(self) -> Callable[[Any], bool]:
        fn = self._fn
        if fn is None:
            assert self._build is not None
            fn = self._fn = self._build()
            self._build = None
            owner = self._owner()
            if owner is not None:
                setattr(owner, self._attr, fn)
        return fn

    def __call__(self, arg: Any) -> bool:
        return self.force()(arg)


class Selector:
    """A parsed JMS message selector.

    ``Selector(text)`` raises ``InvalidSelectorException`` naming the position and what was
    expected. An empty or whitespace-only text (or ``None``) is "no selector": ``ast`` is None
    and everything matches. ``text`` is the text given; ``ast`` the tree (``selector.ast``),
    ``str(ast)`` its canonical text.

    - ``matches(message) -> bool``: for amqp_jms messages (typed properties from
      ``get_object_property``, headers from ``get_jms_*()``).
    - ``matches_lookup(get) -> bool``: for anything else, e.g. the broker filtering an AMQP
      message without building a JMS message. ``get(identifier)`` returns the value or ``None``
      for every identifier the selector uses, header names included: ``JMSDeliveryMode`` as
      ``'PERSISTENT'``/``'NON_PERSISTENT'`` or 1/2, ``JMSPriority`` an int, ``JMSTimestamp`` int
      milliseconds, ``JMSMessageID``/``JMSCorrelationID``/``JMSType`` str or None; property
      values typed as in ``amqp_jms.types`` (plain int = long, plain float = double, ``Int``,
      ``Float`` ...). It is called for the identifiers the selector uses (each at least once,
      in any order, sometimes more than once), must be cheap and must not raise.
    - ``evaluate_batch(batch) -> pyarrow.BooleanArray``: vectorized over a RecordBatch/Table
      (see ``amqp_jms.selector.arrow``), identical to ``matches`` row by row.

    ``matches`` and ``matches_lookup`` are plain functions generated for this selector (one
    Python call per message; see ``codegen.py``), stored on the instance.
    """

    __slots__ = ("__weakref__", "ast", "matches", "matches_lookup", "text")

    matches: Callable[[Any], bool]
    matches_lookup: Callable[[Callable[[str], object]], bool]

    def __init__(self, text: str | None) -> None:
        if text is not None and not isinstance(text, str):
            raise InvalidSelectorException(f"a selector must be a string, not {type(text).__name__}")
        self.text = text or ""
        self.ast: Node | None = parse(self.text)
        if self.ast is None:
            self.matches = self.matches_lookup = _always
            return
        ast = self.ast
        # Each evaluator is generated on first use (a client needs only ``matches``, the broker
        # only ``matches_lookup``) and then replaces its trampoline on the instance; a caller
        # that kept the trampoline still gets the generated function, compiled once.
        self.matches = _Lazy(self, "matches", lambda: compile_message(ast))
        self.matches_lookup = _Lazy(self, "matches_lookup", lambda: compile_lookup(ast))

    def compiled_lookup(self) -> Callable[[Callable[[str], object]], bool]:
        """``matches_lookup``, generated now rather than on its first call.

        Why: the broker compiles a consumer's selector when the consumer attaches, where the
        cost is paid once and bounded by its selector limits, not inside a dispatch scan, where
        thirty consumers' first messages would each compile before the scan could yield."""
        fn = self.matches_lookup
        return fn.force() if isinstance(fn, _Lazy) else fn

    def evaluate_batch(self, batch: pa.RecordBatch | pa.Table) -> pa.BooleanArray:
        """One bool per row, identical to ``matches`` on each row (unknown -> False)."""
        from .arrow import evaluate_batch

        return evaluate_batch(self.ast, batch)

    def __reduce__(self) -> tuple[type[Selector], tuple[str]]:
        # generated functions don't pickle; the text does (Spark ships selectors to executors)
        return (Selector, (self.text,))

    def __repr__(self) -> str:
        return f"Selector({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and other.ast == self.ast

    def __hash__(self) -> int:
        return hash(self.ast)
