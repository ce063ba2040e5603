"""JMS selectors on broker messages, through the shared :mod:`amqp_jms.selector` engine.

The broker never parses selectors itself: it compiles the text once per subscription with
``amqp_jms.selector.Selector`` and evaluates it with ``matches_lookup``, reading identifiers
from the message record (JMS header fields and application properties, decoded lazily and
once per message).
"""

from __future__ import annotations

from collections.abc import Callable

from ...selector import Selector
from ..storage.message import BrokerMessage

__all__ = ["compile_selector"]


def compile_selector(text: str) -> Callable[[BrokerMessage], bool] | None:
    """A predicate for ``text`` (``None`` for an empty selector); ``InvalidSelectorException``."""
    if not text or not text.strip():
        return None
    sel = Selector(text)
    match = sel.matches_lookup

    def predicate(msg: BrokerMessage) -> bool:
        return match(msg.lookup) is True

    return predicate

