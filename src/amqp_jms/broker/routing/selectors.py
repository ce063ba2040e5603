"""JMS selectors on broker messages, through the shared :mod:`amqp_jms.selector` engine.

The broker never parses selectors itself: it compiles the text once per subscription with
``amqp_jms.selector.Selector`` and evaluates it with ``matches_lookup``, reading identifiers
from the message record (JMS header fields and application properties, decoded lazily and
once per message, read through one ``dict.get``). A consumer's selector is bounded by
``BrokerLimits.max_selector_length`` / ``max_selector_terms`` and compiled when it attaches.
"""

from __future__ import annotations

from collections.abc import Callable

from ...selector import Selector, term_count
from ..storage.message import BrokerMessage

__all__ = ["SelectorTooCostly", "compile_selector"]


class SelectorTooCostly(Exception):
    """A selector beyond the broker's ``max_selector_length`` / ``max_selector_terms``; the
    message names the limit."""


def compile_selector(
    text: str, *, max_length: int = 0, max_terms: int = 0
) -> Callable[[BrokerMessage], bool] | None:
    """A predicate for ``text`` (``None`` for an empty selector); ``InvalidSelectorException``,
    or ``SelectorTooCostly`` past a limit (0 = none). The length is checked before parsing, the
    term count after; the evaluator is generated now (the caller is attaching a consumer), so
    no dispatch scan ever pays a compile."""
    if not text or not text.strip():
        return None
    if max_length and len(text) > max_length:
        raise SelectorTooCostly(
            f"the selector is {len(text)} characters long, more than the broker allows "
            f"(limit max_selector_length = {max_length})"
        )
    sel = Selector(text)
    if max_terms and sel.ast is not None:
        terms = term_count(sel.ast)
        if terms > max_terms:
            raise SelectorTooCostly(
                f"the selector combines {terms} conditions, more than the broker allows "
                f"(limit max_selector_terms = {max_terms})"
            )
    match = sel.compiled_lookup()

    def predicate(msg: BrokerMessage) -> bool:
        return match(msg.selector_get()) is True

    return predicate

