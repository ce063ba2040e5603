"""JMSMessageID / JMSCorrelationID <-> AMQP ``message-id`` / ``correlation-id`` (3.2.1.1).

We follow what Qpid JMS and ActiveMQ put on the wire (the draft's receivers accept it too); see
docs/mapping.md for how this differs from the draft's wording:

Sending (``to_amqp_id``):

* ``ID:AMQP_UUID:<uuid>`` / ``ID:AMQP_ULONG:<n>`` / ``ID:AMQP_BINARY:<hex>`` -> the typed
  value (hex in either case); a malformed one raises ``MessageFormatException``;
* ``ID:AMQP_STRING:<s>`` -> the string ``s``; ``ID:AMQP_NO_PREFIX:<s>`` -> the string ``s``;
* any other ``ID:...`` -> the whole string, ``ID:`` included (a message-id-string);
* a correlation id without ``ID:`` is application-specific: sent as is, with the message
  annotation ``x-opt-app-correlation-id = true``.

Receiving (``from_amqp_message_id`` / ``from_amqp_correlation_id``):

* uuid/ulong/binary -> ``ID:AMQP_UUID:…`` / ``ID:AMQP_ULONG:…`` / ``ID:AMQP_BINARY:<HEX>`` (a
  binary correlation id is kept as ``bytes``, which the message model reads in that form);
* a string with ``ID:`` reads as is, unless a reserved prefix follows ``ID:``, in which case it
  is escaped as ``ID:AMQP_STRING:<whole value>`` (so sending it back restores the same string);
* a message-id string without ``ID:`` -> ``ID:AMQP_NO_PREFIX:<value>``;
* a correlation-id string without ``ID:``, or any string with ``x-opt-app-correlation-id =
  true``, is application-specific and reads as is.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..exceptions import MessageFormatException
from ..types import ULong

__all__ = [
    "from_amqp_correlation_id",
    "from_amqp_message_id",
    "to_amqp_correlation_id",
    "to_amqp_id",
]

from ..message._ids import (
    AMQP_NO_PREFIX,
    AMQP_STRING,
    ID,
    RESERVED,
    to_amqp_id,
)


def to_amqp_correlation_id(value: str | bytes) -> tuple[Any, bool]:
    """``(AMQP correlation-id, application-specific?)`` for a JMSCorrelationID."""
    if type(value) is bytes:
        return value, False
    if isinstance(value, bytes):
        return bytes(value), False
    if value.startswith(ID):
        return to_amqp_id(value, "JMSCorrelationID"), False
    return value, True


def _from_string(value: str) -> str:
    if value.startswith(ID):
        if value.startswith("AMQP_", 3) and value[3:].startswith(RESERVED):
            return ID + AMQP_STRING + value
        return value
    return ID + AMQP_NO_PREFIX + value


def from_amqp_message_id(value: Any) -> str | None:
    """The JMSMessageID string for a received ``message-id``."""
    t = type(value)
    if t is str:
        if value.startswith(ID) and not value.startswith("AMQP_", 3):
            return value
        return _from_string(value)
    if value is None:
        return None
    if t is ULong:
        return f"ID:AMQP_ULONG:{int(value)}"
    if t is uuid.UUID:
        return f"ID:AMQP_UUID:{value}"
    if t is bytes:
        return "ID:AMQP_BINARY:" + value.hex().upper()
    raise MessageFormatException(f"message-id of type {t.__name__} is not a valid AMQP message id")


def from_amqp_correlation_id(value: Any, app_specific: bool) -> str | bytes | None:
    """The JMSCorrelationID for a received ``correlation-id`` (``bytes`` for a binary one)."""
    t = type(value)
    if t is str:
        if app_specific or not value.startswith(ID):
            return value
        return _from_string(value)
    if t is bytes:
        return value
    return from_amqp_message_id(value)
