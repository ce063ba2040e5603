"""The acknowledgement policy: which outcome a settlement carries, for which messages, when.

No I/O: the session (``client.session``) asks these rules and hands the answer to the provider
(``ProviderConsumer.acknowledge``). What each acknowledgement mode decides (JMS 2.0 6.2.7,
Qpid JMS for the two extra modes):

* AUTO / DUPS_OK: a message is settled as ``receive`` returns it, or when its listener returns;
  a listener that raises gets the message again at once (JMS 8.7), and a ``receive_body`` of
  the wrong type leaves it unacknowledged at the front of the queue (``hands_back_refused``).
* CLIENT: ``message.acknowledge()`` (or ``session.acknowledge()``) settles every message the
  session has delivered so far (``DeliveredLedger.take_all``), one provider call per consumer
  (``ProviderConsumer.acknowledge_many``: one hand-off to the I/O thread for the batch).
* INDIVIDUAL_ACKNOWLEDGE (101): ``acknowledge()`` settles that one message (``take_one``).
* NO_ACKNOWLEDGE (100): consumers' links are presettled; nothing to settle.
* SESSION_TRANSACTED: each delivered message is accepted inside the current transaction as it
  is delivered; ``commit``/``rollback`` discharge it.

``recover()`` (not transacted) gives every delivered, unacknowledged message again, in order,
marked redelivered (``DeliveredLedger.recover``); a consumer closed while it still had such
messages keeps its link until they are acknowledged (``pending``).

Before a message is delivered it is vetted (``settle_away_outcome``): one the client cannot
use is settled away instead, with an outcome that says why. And these outcomes:

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

import enum
import threading
from collections.abc import Callable
from typing import Any

from .._logs import CLIENT, with_ids
from ..exceptions import JMSException
from ..message._seam import set_redelivered
from ..provider.base import (
    ACCEPTED,
    MODIFIED_FAILED,
    MODIFIED_FAILED_UNDELIVERABLE,
    REJECTED,
    RELEASED,
    Inbound,
)

__all__ = [
    "ACK_TYPE",
    "AUTO_ACKNOWLEDGE",
    "CLIENT_ACKNOWLEDGE",
    "DUPS_OK_ACKNOWLEDGE",
    "INDIVIDUAL_ACKNOWLEDGE",
    "MODES",
    "NO_ACKNOWLEDGE",
    "OUTCOME_BY_NAME",
    "POISON",
    "SESSION_TRANSACTED",
    "UNSEEN",
    "AcknowledgeMode",
    "DeliveredLedger",
    "ack_type_of",
    "auto_outcome",
    "count_local_redelivery",
    "decode_or_poison",
    "delivered_before_listener",
    "hands_back_refused",
    "outcome_for_ack_type",
    "session_mode",
    "settle_away_outcome",
    "unseen_outcome",
]

class AcknowledgeMode(enum.IntEnum):
    """A session's mode (``Session.AUTO_ACKNOWLEDGE`` ...): the JMS constants, and Qpid JMS's
    two extensions. An ``IntEnum``, so the plain ints keep working (``create_session(1)``,
    ``Session.AUTO_ACKNOWLEDGE == 1``)."""

    SESSION_TRANSACTED = 0
    AUTO_ACKNOWLEDGE = 1
    CLIENT_ACKNOWLEDGE = 2
    DUPS_OK_ACKNOWLEDGE = 3
    #: Qpid JMS extensions: presettled consumers; acknowledge() settles one message
    NO_ACKNOWLEDGE = 100
    INDIVIDUAL_ACKNOWLEDGE = 101


SESSION_TRANSACTED = AcknowledgeMode.SESSION_TRANSACTED
AUTO_ACKNOWLEDGE = AcknowledgeMode.AUTO_ACKNOWLEDGE
CLIENT_ACKNOWLEDGE = AcknowledgeMode.CLIENT_ACKNOWLEDGE
DUPS_OK_ACKNOWLEDGE = AcknowledgeMode.DUPS_OK_ACKNOWLEDGE
NO_ACKNOWLEDGE = AcknowledgeMode.NO_ACKNOWLEDGE
INDIVIDUAL_ACKNOWLEDGE = AcknowledgeMode.INDIVIDUAL_ACKNOWLEDGE
MODES = tuple(AcknowledgeMode)


def session_mode(mode: object) -> AcknowledgeMode | None:
    """``mode`` (an int or a member) as an ``AcknowledgeMode``, or None if it is not one
    (a bool is not a mode: ``create_session(True)`` means transacted)."""
    if isinstance(mode, bool) or not isinstance(mode, int):
        return None
    try:
        return AcknowledgeMode(mode)
    except ValueError:
        return None
_SELF_ACKNOWLEDGING = frozenset({AUTO_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE})
_APPLICATION_ACKNOWLEDGES = frozenset({CLIENT_ACKNOWLEDGE, INDIVIDUAL_ACKNOWLEDGE})

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

_log = CLIENT


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


def unseen_outcome(inbound: Inbound) -> int:
    """The outcome of a message the client gives back unseen (close, stop, rollback):
    ``released`` if the application never had it; ``modified-failed`` if it had it once and
    ``recover()`` queued it again (Qpid JMS: that delivery attempt counts)."""
    return MODIFIED_FAILED if inbound.local_redeliveries else UNSEEN


def ack_type_of(msg: Any) -> int:
    """The outcome acknowledging ``msg`` sends (its ``JMS_AMQP_ACK_TYPE``, else accepted)."""
    return outcome_for_ack_type(msg.get_object_property(ACK_TYPE))


def decode_or_poison(inbound: Inbound, receiver: object, body: bool = True) -> Any:
    """The inbound's JMS message, or None when it cannot be decoded (a poison message).

    The caller settles a None with ``POISON`` and goes on to the next message; the reason is
    logged here, once per message, at WARNING, naming the ``receiver`` (its ``str``: "consumer
    on queue://q", formatted only then) and, by the inbound's ``log_ids``, its connection,
    session and link. ``body=False``: vetted from its headers and properties only
    (``receive_encoded``).
    """
    try:
        return inbound.decode() if body else inbound.decode(body=False)
    except Exception as e:  # whatever the bytes did, the message is unreadable
        ids = inbound.log_ids
        log = with_ids(_log, **ids) if ids else _log
        log.warning("%s: a message that cannot be read as a JMS message was settled "
                    "modified(delivery-failed, undeliverable-here) and skipped: %s", receiver, e)
        return None


def auto_outcome(msg: Any) -> int:
    """The outcome of a message the session acknowledges by itself (AUTO, DUPS_OK, transacted):
    its ``JMS_AMQP_ACK_TYPE`` if a listener chose a valid one, else accepted (nobody is there to
    refuse an invalid one to)."""
    if not msg.property_exists(ACK_TYPE):  # the common case, without the lookups below
        return ACCEPTED
    try:
        return ack_type_of(msg)
    except JMSException:
        return ACCEPTED


def hands_back_refused(mode: int) -> bool:
    """Whether a message the application refused as it was delivered (a listener that raised, a
    ``receive_body`` of another type) goes back to the front of the queue, unacknowledged: only
    in the modes where the session acknowledges by itself (AUTO, DUPS_OK; JMS 8.7). In the
    others it counts as delivered."""
    return mode in _SELF_ACKNOWLEDGING


def delivered_before_listener(mode: int) -> bool:
    """Whether a listener's message counts as delivered before the listener runs: in the modes
    where the application acknowledges (CLIENT, INDIVIDUAL), so that ``acknowledge()`` (and
    ``recover()``) inside ``on_message`` act on the very message being handled, as the Java idiom
    ``onMessage(m) { ...; m.acknowledge(); }`` expects. The other modes settle after the listener
    returns (a listener that raises under AUTO/DUPS_OK gets the message again)."""
    return mode in _APPLICATION_ACKNOWLEDGES


def count_local_redelivery(inbound: Inbound, msg: Any) -> None:
    """A message ``recover()`` (or a failed listener) gave again is redelivered: JMSRedelivered
    true and JMSXDeliveryCount one more (counted once, into the message)."""
    if not inbound.local_redeliveries:
        return
    base = msg.get_object_property("JMSXDeliveryCount")
    set_redelivered(msg, _int_like(base, (int(base) if base else 1) + 1))
    inbound.local_redeliveries = 0  # counted into the message now


def settle_away_outcome(
    msg: Any,
    clock: Callable[[], float],
    local_expiry: bool,
    redelivery_max: int,
    redelivery_outcome: int,
    local_selector: Any,
    receiver: Any,
) -> int | None:
    """The outcome a decoded message is settled with instead of being delivered, or None to
    deliver it (Qpid JMS's order of checks). ``clock`` is the wall clock in seconds
    (``time.time``; read only for a message that expires), ``receiver`` has the ``destination``
    it receives from (read only when the selector refuses the message):

    * expired (``jms.localMessageExpiry`` and JMSExpiration passed): modified-failed-undeliverable;
    * delivered more often than ``jms.redeliveryPolicy.maxRedeliveries`` (-1: no limit): the
      policy's outcome (``jms.redeliveryPolicy.outcome``);
    * not matching a selector the client evaluates (the peer does not filter; topics only):
      accepted on a topic (the copy was this subscriber's), else modified-failed-undeliverable.
    """
    if local_expiry and (expiration := msg.get_jms_expiration()) and expiration <= clock() * 1000:
        return MODIFIED_FAILED_UNDELIVERABLE
    if redelivery_max >= 0:
        count = msg.get_object_property("JMSXDeliveryCount")
        if count is not None and int(count) - 1 > redelivery_max:
            return redelivery_outcome
    if local_selector is not None and not local_selector.matches(msg):
        return ACCEPTED if receiver.destination.is_topic else MODIFIED_FAILED_UNDELIVERABLE
    return None


class DeliveredLedger:
    """The messages a session has delivered and not yet settled, in delivery order: what
    ``acknowledge()``, ``recover()`` and a transaction's end act on. Thread-safe (a listener's
    thread and the application's both deliver)."""

    def __init__(self, mode: int) -> None:
        self.mode = mode
        self._lock = threading.Lock()
        self._items: list[tuple[Any, Any]] = []

    def delivered(self, consumer: Any, inbound: Inbound, msg: Any) -> int | None:
        """``msg`` was handed to the application: the outcome to settle it with now (AUTO,
        DUPS_OK, transacted: inside the transaction), or None (settled later, or never: NO_ACK)."""
        mode = self.mode
        if mode in _SELF_ACKNOWLEDGING:
            return auto_outcome(msg)
        if mode == SESSION_TRANSACTED:
            with self._lock:
                self._items.append((consumer, inbound))
            return auto_outcome(msg)
        if mode in _APPLICATION_ACKNOWLEDGES:
            with self._lock:
                self._items.append((consumer, inbound))
        return None

    def acknowledge_callback(self, on_all: Callable[[int], None], on_one: Callable[[], None], msg: Any
                             ) -> Callable[[], None] | None:
        """What ``message.acknowledge()`` does in this mode: CLIENT settles everything delivered
        so far with the ``JMS_AMQP_ACK_TYPE`` of the message it is called on (Qpid JMS);
        INDIVIDUAL settles that one; the other modes ignore it (None)."""
        if self.mode == CLIENT_ACKNOWLEDGE:
            return lambda: on_all(ack_type_of(msg))
        if self.mode == INDIVIDUAL_ACKNOWLEDGE:
            return on_one
        return None

    def take_all(self) -> list[tuple[Any, Any]]:
        """Everything delivered so far, forgotten here (CLIENT ``acknowledge()``, recover, a
        transaction's end)."""
        with self._lock:
            items, self._items = self._items, []
        return items

    def take_one(self, inbound: Inbound) -> None:
        """Forget ``inbound`` (INDIVIDUAL ``acknowledge()`` settles it)."""
        with self._lock:
            self._items = [d for d in self._items if d[1] is not inbound]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def pending(self, consumer: Any) -> bool:
        """Whether ``consumer`` has delivered, unsettled messages (its link must stay)."""
        with self._lock:
            return any(c is consumer for c, _ in self._items)

    def pending_consumers(self) -> set[int]:
        with self._lock:
            return {id(c) for c, _ in self._items}

    @staticmethod
    def by_consumer(delivered: list[tuple[Any, Any]]) -> list[tuple[Any, list[Any]]]:
        """``delivered`` grouped per consumer, each group in delivery order (what an
        ``acknowledge()`` settles with one call per consumer, and ``recover()`` gives again)."""
        groups: dict[int, tuple[Any, list[Any]]] = {}
        for consumer, inbound in delivered:
            groups.setdefault(id(consumer), (consumer, []))[1].append(inbound)
        return list(groups.values())

    @staticmethod
    def recover(delivered: list[tuple[Any, Any]]) -> list[tuple[Any, list[Any]]]:
        """``recover()``: the delivered messages to give again, per consumer, in order; each
        counts one more local redelivery and is decoded again (a fresh, read-only copy)."""
        for _, inbound in delivered:
            inbound.local_redeliveries += 1
            inbound.reset()
        return DeliveredLedger.by_consumer(delivered)


def _int_like(template: Any, value: int) -> Any:
    """``value`` with the typed-int class of ``template`` (JMSXDeliveryCount is an Int)."""
    from ..types import Int

    return type(template)(value) if template is not None and type(template) is not bool else Int(value)
