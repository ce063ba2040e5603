"""JMS selectors on broker messages, through the shared :mod:`amqp_jms.selector` engine.

The broker never parses selectors itself: it compiles the text with ``amqp_jms.selector`` and
evaluates it with a lookup that reads identifiers from the message record (JMS header fields and
application properties, decoded lazily and only once per message).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..exceptions import InvalidSelectorException
from .message import BrokerMessage

__all__ = ["compile_selector"]


def compile_selector(text: str) -> Callable[[BrokerMessage], bool] | None:
    """A predicate for ``text`` (``None`` for an empty selector); ``InvalidSelectorException``."""
    if not text or not text.strip():
        return None
    try:
        from .. import selector as _sel

        factory: Any = getattr(_sel, "Selector")  # noqa: B009
    except (ImportError, AttributeError) as exc:
        raise InvalidSelectorException("selectors are not available in this build") from exc
    sel = factory(text)
    evaluate = getattr(sel, "matches", None) or sel.evaluate

    def predicate(msg: BrokerMessage) -> bool:
        return evaluate(msg.lookup) is True

    return predicate
