"""``to_amqp`` / ``from_amqp``: the mapping for code that works with ``proton.Message``.

Both go through the bytes: ``to_amqp`` decodes :func:`encode`'s output with proton, and
``from_amqp`` encodes the proton message and runs :func:`decode` on it. One mapping, no second
implementation of the rules over proton's object model (and none of proton's per-field quirks:
memoryviews into freed buffers, ``content_type`` reading ``symbol('None')``).
"""

from __future__ import annotations

from typing import Any

import proton

from ..exceptions import MessageFormatException
from ..message import Message
from .context import MappingContext
from .inbound import decode
from .outbound import encode

__all__ = ["from_amqp", "to_amqp"]


def to_amqp(message: Message, *, context: MappingContext | None = None) -> Any:
    """The ``proton.Message`` for a JMS message (as :func:`encode` would send it)."""
    pm = proton.Message()
    try:
        pm.decode(encode(message, context=context))
    except proton.MessageException as e:  # pragma: no cover - our encoding is proton-valid
        raise MessageFormatException(f"proton refused the encoded message: {e}") from None
    return pm


def from_amqp(message: Any, *, context: MappingContext | None = None) -> Message:
    """The JMS message a consumer receives for a ``proton.Message``."""
    if not isinstance(message, proton.Message):
        raise TypeError(f"from_amqp needs a proton.Message, not {type(message).__name__}")
    try:
        data = message.encode()
    except (proton.MessageException, proton.DataException, TypeError, KeyError, ValueError) as e:
        raise MessageFormatException(f"proton cannot encode the message: {e}") from None
    return decode(data, context=context)
