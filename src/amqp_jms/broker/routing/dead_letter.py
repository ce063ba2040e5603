"""Why a message was dead-lettered: the cause, and the DLQ copy that carries it.

Every way a message reaches the dead-letter queue (:meth:`Router.dead_letter
<amqp_jms.broker.routing.nodes.Router.dead_letter>`) comes with a :class:`Cause`, made here and nowhere
else. :func:`dead_letter_bytes` writes it into the DLQ copy's encoded message, in the forms the
brokers our users migrate from write, so the tools they already have read it (the names:
``mapping/dead_letter.py``):

* message annotations as ActiveMQ Artemis puts them on a dead-lettered AMQP message:
  ``x-opt-ORIG-ADDRESS`` and ``x-opt-ORIG-QUEUE`` (its internal ``_AMQ_ORIG_ADDRESS`` /
  ``_AMQ_ORIG_QUEUE``);
* message annotations as RabbitMQ 4 puts them: ``x-opt-deaths`` (an array of maps with
  ``queue``, ``reason``, ``count``, ``first-time``, ``last-time``, ``exchange``; the most recent
  first, one entry per queue and reason) and ``x-first-death-queue/-reason/-exchange``,
  ``x-last-death-queue/-reason/-exchange``; ``reason`` is RabbitMQ's word (``rejected``,
  ``delivery_limit``);
* application properties, because a JMS client sees no annotation the OASIS JMS mapping does not
  name: ``dlqDeliveryFailureCause`` (ActiveMQ 5's property: a sentence saying why),
  ``_AMQ_ORIG_ADDRESS`` / ``_AMQ_ORIG_QUEUE`` (Artemis's names, which its users' DLQ selectors
  use), and ours, ``dlqDeliveryFailureReason`` (the RabbitMQ word, for selectors) and
  ``dlqDeliveryFailureTime`` (ms since the epoch).

Only the message annotations and application properties sections are re-encoded; every other
byte is reused, as redelivery reuses all but the header (``message_bytes.with_delivery_count``). A
large message (a mapped file) gets a new file the same way, copied in pieces, never whole on the
heap. What a peer controls (a consumer's error condition and description) is cut to a bound.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..._logs import BROKER as log
from ...exceptions import MessageFormatException
from ...mapping.codec import (
    APPLICATION_PROPERTIES,
    MESSAGE_ANNOTATIONS,
    Array,
    decode_sections,
    encode_annotations,
    encode_application_properties,
)
from ...mapping.dead_letter import (
    CAUSE_PROPERTY,
    DEATHS,
    ORIG_ADDRESS,
    ORIG_ADDRESS_PROPERTY,
    ORIG_QUEUE,
    ORIG_QUEUE_PROPERTY,
    REASON_PROPERTY,
    TIME_PROPERTY,
)
from ...types import Symbol, Timestamp, ULong
from ..storage import message_bytes
from ..storage.large import IncomingSpool

__all__ = [
    "MAX_CONDITION",
    "MAX_DEATHS",
    "MAX_DESCRIPTION",
    "Cause",
    "Failure",
    "Reason",
    "dead_letter_bytes",
]


MAX_CONDITION = 256  # chars of a consumer's error condition kept (a symbol; AMQP names are short)
MAX_DESCRIPTION = 1024  # chars of a consumer's error description kept
MAX_DEATHS = 16  # entries of x-opt-deaths kept (a message moved back and dead-lettered again)
_COPY_PIECE = 1 << 20

class Reason(StrEnum):
    """RabbitMQ's dead-letter reasons (its ``x-death``/``x-opt-deaths`` ``reason``) we produce."""

    REJECTED = "rejected"
    DELIVERY_LIMIT = "delivery_limit"


class Failure(StrEnum):
    """How the last failed delivery attempt failed: said when the attempt limit is reached."""

    MODIFIED = "the consumer gave it back as failed (modified delivery-failed: a recover or rollback)"
    UNDELIVERABLE = (
        "the consumer could not process it (modified undeliverable-here: a poison message)"
    )
    ROLLBACK = "the transaction that consumed it rolled back"
    LINK_CLOSED = "the consumer went away without settling it"


def _bounded(text: Any, limit: int) -> str | None:
    if text is None:
        return None
    s = str(text)
    return s if len(s) <= limit else s[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class Cause:
    """Why one message is dead-lettered: RabbitMQ's reason word plus the sentence an operator
    reads (ActiveMQ 5's ``dlqDeliveryFailureCause``)."""

    reason: Reason
    text: str

    @classmethod
    def rejected(
        cls, condition: Any = None, description: Any = None, *, transactional: bool = False
    ) -> Cause:
        """A consumer settled it ``rejected``, with the error it sent (if any), bounded."""
        where = "rejected by a consumer" + (" in a committed transaction" if transactional else "")
        cond = _bounded(condition, MAX_CONDITION)
        desc = _bounded(description, MAX_DESCRIPTION)
        if cond and desc:
            return cls(Reason.REJECTED, f"{where}: {cond}: {desc}")
        if cond or desc:
            return cls(Reason.REJECTED, f"{where}: {cond or desc}")
        return cls(Reason.REJECTED, f"{where} (no error given)")

    @classmethod
    def delivery_limit(cls, attempts: int, limit: int, last: Failure) -> Cause:
        """The delivery attempts reached ``max_delivery_attempts``; ``last`` says how the last
        one failed."""
        return cls(
            Reason.DELIVERY_LIMIT,
            f"delivery limit reached: {attempts} attempt{'s' if attempts != 1 else ''} "
            f"(max_delivery_attempts {limit}); "
            f"the last: {last.value}",
        )


def dead_letter_bytes(
    data: Any,
    cause: Cause,
    *,
    address: str,
    queue: str,
    now: float,
    spill_dir: str | None = None,
) -> Any:
    """``data`` (bytes or a large message's mapped file) as the DLQ copy: ``cause``, the
    original ``address`` and ``queue`` and the time (``now``, seconds since the epoch) added.

    A message whose annotations or application properties do not decode is returned unchanged
    (logged): the cause is lost, the message is not.
    """
    try:
        head = message_bytes.head(data)
        s = decode_sections(head, body=False)
        annotations = _annotations(s.message_annotations or {}, cause, address, queue, now)
        props = dict(s.application_properties or {})
        props[CAUSE_PROPERTY] = cause.text
        props[REASON_PROPERTY] = cause.reason.value
        props[TIME_PROPERTY] = int(now * 1000)
        props[ORIG_ADDRESS_PROPERTY] = address
        props[ORIG_QUEUE_PROPERTY] = queue
        codes = sorted(s.spans)
        front = b"".join(s.raw(c) for c in codes if c < MESSAGE_ANNOTATIONS)
        middle = b"".join(s.raw(c) for c in codes if MESSAGE_ANNOTATIONS < c < APPLICATION_PROPERTIES)
        new_head = (
            front
            + encode_annotations(MESSAGE_ANNOTATIONS, annotations)
            + middle
            + encode_application_properties(props)
        )
        rest_at = max((e for c, (_, e) in s.spans.items() if c <= APPLICATION_PROPERTIES), default=0)
    except (MessageFormatException, ValueError, TypeError) as exc:
        log.warning("dead-lettered message from %s kept without its cause (%s): %s", queue, cause.text, exc)
        return data
    if type(data) is not mmap.mmap:
        return new_head + bytes(data[rest_at:])
    spool = IncomingSpool(0, spill_dir)  # threshold 0: a file from the first byte, mapped
    spool.add(new_head)
    for at in range(rest_at, len(data), _COPY_PIECE):
        spool.add(data[at : at + _COPY_PIECE])
    return spool.finish()


def _annotations(
    old: dict[Any, Any], cause: Cause, address: str, queue: str, now: float
) -> dict[Any, Any]:
    ann = dict(old)
    ts = Timestamp(int(now * 1000))
    reason = Symbol(cause.reason.value)
    ann[ORIG_ADDRESS] = address
    ann[ORIG_QUEUE] = queue
    deaths = [d for d in (old.get(DEATHS) or []) if isinstance(d, dict)]
    key = (queue, reason)
    mine = next((d for d in deaths if (d.get(Symbol("queue")), d.get(Symbol("reason"))) == key), None)
    if mine is not None:
        deaths.remove(mine)
        count = mine.get(Symbol("count"))
        mine = {**mine, Symbol("count"): ULong(int(count) + 1 if isinstance(count, int) else 1),
                Symbol("last-time"): ts}
    else:
        mine = {Symbol("queue"): queue, Symbol("reason"): reason, Symbol("count"): ULong(1),
                Symbol("first-time"): ts, Symbol("last-time"): ts, Symbol("exchange"): address}
    ann[DEATHS] = Array(dict, [mine, *deaths][:MAX_DEATHS])
    for k in ("queue", "reason", "exchange"):
        value = {"queue": queue, "reason": reason, "exchange": address}[k]
        ann.setdefault(Symbol(f"x-first-death-{k}"), value)
        ann[Symbol(f"x-last-death-{k}")] = value
    return ann
