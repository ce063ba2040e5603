"""What the layers under the JMS face do to a ``Message`` that JMS does not let an application do.

A producer stamps the headers ``send`` owns (JMS 2.0 §3.4: destination, delivery mode, priority,
timestamp, expiration, message id, delivery time; ``JMSXUserID``); a session makes a delivered
message read-only, hangs its acknowledgement on it and counts a local redelivery into its
read-only properties. Each is one named, typed function here, so the client and provider never
touch ``Message``'s slots: reading a message's data goes through the record (``view`` /
``snapshot`` in ``_data``), building a received one through ``received``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..destination import Destination
from ._base import Message

__all__ = [
    "mark_received",
    "set_ack_callback",
    "set_redelivered",
    "stamp_delivery_time",
    "stamp_send",
    "trust_property_names",
]

#: the property ``send`` sets from the connection's authenticated user (``jms.populateJMSXUserID``)
_USER_ID = "JMSXUserID"


def stamp_send(
    message: Message,
    destination: Destination,
    delivery_mode: int,
    priority: int,
    timestamp: int,
    expiration: int,
    message_id: str | None,
    delivery_time: int,
    user_id: str | None,
) -> None:
    """Set the headers ``send`` owns (already checked by the producer), and ``JMSXUserID`` to
    ``user_id`` (removed when None: a re-sent message must not carry a stale one)."""
    message._destination = destination
    message._delivery_mode = delivery_mode
    message._priority = priority
    message._timestamp = timestamp
    message._expiration = expiration
    message._message_id = message_id
    message._delivery_time = delivery_time
    props = message._props
    if user_id is not None:
        props[_USER_ID] = user_id
    elif _USER_ID in props:
        del props[_USER_ID]


def stamp_delivery_time(message: Message, delivery_time: int) -> None:
    """Set JMSDeliveryTime after the send (send time + delay, JMS 2.0 §3.4.13), unchecked."""
    message._delivery_time = delivery_time


def mark_received(message: Message) -> None:
    """Make the properties and body read-only, as for a message handed to a consumer."""
    message._mark_received()


def trust_property_names(message: Message) -> None:
    """Check property names set on ``message`` only for None/empty
    (``jms.validatePropertyNames=false``, Qpid JMS)."""
    message._validate_names = False


def set_ack_callback(message: Message, callback: Callable[[], None] | None) -> None:
    """What ``message.acknowledge()`` calls (CLIENT / INDIVIDUAL acknowledgement)."""
    message._ack_callback = callback


def set_redelivered(message: Message, delivery_count: Any) -> None:
    """Mark a message given again by the client itself (``recover()``, a failed listener)
    redelivered, with ``JMSXDeliveryCount`` ``delivery_count``: its properties stay read-only
    to the application."""
    message._redelivered = True
    message._props["JMSXDeliveryCount"] = delivery_count
