"""The names a dead-lettered message's cause travels under: what the broker writes
(``broker/routing/dead_letter.py``) and what readers (``amqp-jms browse``) look for.

Each name is the one a peer our users migrate from uses, so their tools and selectors read ours:
ActiveMQ 5's ``dlqDeliveryFailureCause`` property, ActiveMQ Artemis's ``x-opt-ORIG-ADDRESS`` /
``x-opt-ORIG-QUEUE`` annotations (its internal ``_AMQ_ORIG_ADDRESS`` / ``_AMQ_ORIG_QUEUE``
properties), RabbitMQ 4's ``x-opt-deaths`` and ``x-first-death-*`` / ``x-last-death-*``
annotations. ``dlqDeliveryFailureReason`` and ``dlqDeliveryFailureTime`` are ours (no peer gives
a JMS reader the reason word or the time).
"""

from __future__ import annotations

from ..types import Symbol

__all__ = [
    "CAUSE_PROPERTY",
    "DEAD_LETTER_PROPERTIES",
    "DEATHS",
    "ORIG_ADDRESS",
    "ORIG_ADDRESS_PROPERTY",
    "ORIG_QUEUE",
    "ORIG_QUEUE_PROPERTY",
    "REASON_PROPERTY",
    "TIME_PROPERTY",
]

# message annotations
ORIG_ADDRESS = Symbol("x-opt-ORIG-ADDRESS")  # Artemis
ORIG_QUEUE = Symbol("x-opt-ORIG-QUEUE")  # Artemis
DEATHS = Symbol("x-opt-deaths")  # RabbitMQ 4 (AMQP 1.0 form of x-death)

# application properties: what a JMS client reads (it sees no other annotation)
CAUSE_PROPERTY = "dlqDeliveryFailureCause"  # ActiveMQ 5: a sentence saying why
REASON_PROPERTY = "dlqDeliveryFailureReason"  # ours: RabbitMQ's reason word, for selectors
TIME_PROPERTY = "dlqDeliveryFailureTime"  # ours: ms since the epoch
ORIG_ADDRESS_PROPERTY = "_AMQ_ORIG_ADDRESS"  # Artemis
ORIG_QUEUE_PROPERTY = "_AMQ_ORIG_QUEUE"  # Artemis

DEAD_LETTER_PROPERTIES = (
    CAUSE_PROPERTY, REASON_PROPERTY, TIME_PROPERTY, ORIG_ADDRESS_PROPERTY, ORIG_QUEUE_PROPERTY,
)
