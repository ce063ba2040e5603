"""Messages with data the JMS setters refuse, for tests and tools: built through the record.

A test of an encoder often needs a message carrying what only a decoder makes: an AMQP-typed
property (``UInt``, ``Symbol``, binary) or a JMSX / ``JMS_AMQP_*`` property, a binary
correlation id, a body of a form the setters do not write. These build it as a decoder does,
from a ``MessageData`` (``restore``: a new, writable message; ``received``: a read-only
delivered one), instead of reaching into ``Message``'s slots.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from ..message import Message
from ..message._data import received, restore, view

__all__ = ["delivered", "with_fields", "with_properties"]

M = TypeVar("M", bound=Message)


def with_fields(message: M, **fields: Any) -> M:
    """A new, writable copy of ``message`` with these ``MessageData`` fields replaced, as they
    are (unchecked): ``with_fields(m, correlation_id=b"\\x01", body=[...])``."""
    copy: M = restore(view(message)._replace(**fields))  # type: ignore[assignment]
    return copy


def with_properties(message: M, properties: Mapping[str, Any]) -> M:
    """A new, writable copy of ``message`` with ``properties`` added to its own, as they are
    (any AMQP-typed value, any name)."""
    return with_fields(message, properties={**view(message).properties, **properties})


def delivered(message: M, **fields: Any) -> M:
    """A read-only copy of ``message`` as a consumer receives it (properties and body
    read-only), with these ``MessageData`` fields replaced."""
    copy: M = received(view(message)._replace(**fields))  # type: ignore[assignment]
    return copy
