"""The acknowledgement policy: which outcome a settlement carries, and for which messages.

No I/O, no threads: the session (``client.session``) and the asyncio face call these rules and
hand the answer to the provider. Qpid JMS is the reference for every rule here:

* a message the application acknowledges is settled with the ``JMS_AMQP_ACK_TYPE`` chosen on it
  (1 accepted, 2 rejected, 3 released, 4 modified-failed, 5 modified-failed-undeliverable); in
  CLIENT_ACKNOWLEDGE the type set on the message passed to ``acknowledge()`` applies to every
  message the session acknowledges with it. A value outside 1..5 is refused, naming it.
* a message the client cannot turn into a JMS message (a *poison* message: an unknown
  ``x-opt-jms-msg-type``, text that does not decode...) is settled
  ``modified{delivery-failed, undeliverable-here}`` and skipped, with one WARNING: the peer then
  dead-letters it or offers it to another consumer, instead of the client failing on it forever.
* a message that was prefetched but never handed to the application (consumer, session or
  connection close, a stopped pull consumer, rollback of messages never delivered) is
  ``released``: back to the queue, not counted as a delivery attempt. One that ``recover()``
  queued again and was not delivered again before the close is ``modified-failed`` (it was
  delivered once).
"""

from __future__ import annotations

import logging
from typing import Any

from ..exceptions import JMSException
from ..provider.base import ACCEPTED, MODIFIED_FAILED, MODIFIED_FAILED_UNDELIVERABLE, REJECTED, RELEASED

__all__ = [
    "ACK_TYPE",
    "OUTCOME_BY_NAME",
    "POISON",
    "UNSEEN",
    "ack_type_of",
    "decode_or_poison",
    "outcome_for_ack_type",
    "unseen_outcome",
]

ACK_TYPE = "JMS_AMQP_ACK_TYPE"

OUTCOME_BY_NAME = {
    "ACCEPTED": ACCEPTED,
    "REJECTED": REJECTED,
    "RELEASED": RELEASED,
    "MODIFIED_FAILED": MODIFIED_FAILED,
    "MODIFIED_FAILED_UNDELIVERABLE": MODIFIED_FAILED_UNDELIVERABLE,
}
_KNOWN = frozenset(OUTCOME_BY_NAME.values())

#: the outcome of a message the client cannot read
POISON = MODIFIED_FAILED_UNDELIVERABLE
#: the outcome of a message prefetched but never handed to the application
UNSEEN = RELEASED

_log = logging.getLogger("amqp_jms.client.consumer")


def outcome_for_ack_type(value: Any) -> int:
    """The outcome a ``JMS_AMQP_ACK_TYPE`` value asks for; unset (None, 0 or less) is accepted.

    Raises ``JMSException`` naming the value when it is not one of 1..5 (Qpid JMS:
    "Unable to determine ack type").
    """
    if value is None:
        return ACCEPTED
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise JMSException(f"{ACK_TYPE} {value!r} is not an acknowledgement type (1 to 5)") from None
    if n <= 0:
        return ACCEPTED
    if n not in _KNOWN:
        raise JMSException(f"{ACK_TYPE} {value!r} is not an acknowledgement type: expected 1 accepted, "
                           "2 rejected, 3 released, 4 modified-failed or 5 modified-failed-undeliverable")
    return n


def unseen_outcome(inbound: Any) -> int:
    """The outcome of a message the client gives back unseen (close, stop, rollback):
    ``released`` if the application never had it; ``modified-failed`` if it had it once and
    ``recover()`` queued it again (Qpid JMS: that delivery attempt counts)."""
    return MODIFIED_FAILED if getattr(inbound, "local_redeliveries", 0) else UNSEEN


def ack_type_of(msg: Any) -> int:
    """The outcome acknowledging ``msg`` sends (its ``JMS_AMQP_ACK_TYPE``, else accepted)."""
    props = msg._props
    return outcome_for_ack_type(props.get(ACK_TYPE) if props else None)


def decode_or_poison(inbound: Any, where: str, body: bool = True) -> Any:
    """The inbound's JMS message, or None when it cannot be decoded (a poison message).

    The caller settles a None with ``POISON`` and goes on to the next message; the reason is
    logged here, once per message, at WARNING. ``where`` names the consumer for the log.
    ``body=False``: vetted from its headers and properties only (``receive_encoded``).
    """
    try:
        return inbound.decode() if body else inbound.decode(body=False)
    except Exception as e:  # whatever the bytes did, the message is unreadable
        _log.warning("%s: a message that cannot be read as a JMS message was settled "
                     "modified(delivery-failed, undeliverable-here) and skipped: %s", where, e)
        return None
