"""The string forms of JMS message and correlation ids that stand for typed AMQP ids (OASIS AMQP
JMS Mapping 3.2.1.1): ``ID:AMQP_UUID:<uuid>``, ``ID:AMQP_ULONG:<n>``, ``ID:AMQP_BINARY:<hex>``,
``ID:AMQP_STRING:<s>``, ``ID:AMQP_NO_PREFIX:<s>``.

They live with the message model because a JMSCorrelationID set in one of these forms is checked
when it is set (as Qpid JMS's message facade does), and the mapping, which builds on messages,
reads them when it sends (``amqp_jms.mapping.ids``).
"""

from __future__ import annotations

import uuid
from typing import Any

from ..exceptions import MessageFormatException
from ..types import ULong

__all__ = ["AMQP_BINARY", "AMQP_NO_PREFIX", "AMQP_STRING", "AMQP_ULONG", "AMQP_UUID", "ID", "RESERVED",
           "to_amqp_id"]

ID = "ID:"
AMQP_UUID = "AMQP_UUID:"
AMQP_ULONG = "AMQP_ULONG:"
AMQP_BINARY = "AMQP_BINARY:"
AMQP_STRING = "AMQP_STRING:"
AMQP_NO_PREFIX = "AMQP_NO_PREFIX:"
RESERVED = (AMQP_UUID, AMQP_ULONG, AMQP_BINARY, AMQP_STRING, AMQP_NO_PREFIX)
_HEX = frozenset("0123456789abcdefABCDEF")


def to_amqp_id(value: str, what: str = "JMSMessageID") -> Any:
    """The AMQP id (str, ``ULong``, ``UUID`` or ``bytes``) for a JMSMessageID-form string."""
    if not value.startswith("ID:AMQP_"):
        return value
    rest = value[3:]
    if rest.startswith(AMQP_UUID):
        text = rest[len(AMQP_UUID) :]
        try:
            return uuid.UUID(text)
        except ValueError:
            raise MessageFormatException(f"{what} {value!r}: {text!r} is not a UUID") from None
    if rest.startswith(AMQP_ULONG):
        text = rest[len(AMQP_ULONG) :]
        if not text.isascii() or not text.isdigit() or int(text) >= 2**64:
            raise MessageFormatException(f"{what} {value!r}: {text!r} is not an unsigned 64-bit number")
        return ULong(int(text))
    if rest.startswith(AMQP_BINARY):
        text = rest[len(AMQP_BINARY) :]
        if len(text) % 2 or not _HEX.issuperset(text):
            raise MessageFormatException(f"{what} {value!r}: {text!r} is not an even-length hex string")
        return bytes.fromhex(text)
    if rest.startswith(AMQP_STRING):
        return rest[len(AMQP_STRING) :]
    if rest.startswith(AMQP_NO_PREFIX):
        return rest[len(AMQP_NO_PREFIX) :]
    return value
