"""The listener container's one policy: what it consumes, how many workers, how each message is
settled, what a failure does. Pure: no I/O, no threads, no clock; both faces (``sync.py``,
``aio.py``) ask it and carry out the steps it returns.

A worker handles one message at a time on a session of its own (Spring's
DefaultMessageListenerContainer shape: a receive loop per consumer). Settlement never happens
before the handler returned (the bug every hand-written loop has):

============  ===============================  ============================================
mode          session underneath               a message is settled
============  ===============================  ============================================
auto          INDIVIDUAL_ACKNOWLEDGE           accepted after the handler returns
client        INDIVIDUAL_ACKNOWLEDGE           by the handler (``message.acknowledge()``)
transacted    SESSION_TRANSACTED               committed after the handler returns, every
                                               ``batch_size`` messages (or when idle)
============  ===============================  ============================================

A handler that raises: the message is held for the back-off, then given back
``modified{delivery-failed}`` (``JMS_AMQP_ACK_TYPE`` 4, or a rollback when transacted), so the
broker counts the delivery and offers it again. On its ``max_deliveries``-th failed delivery it
goes to the broker's dead-letter path instead: ``modified{delivery-failed, undeliverable-here}``
(``JMS_AMQP_ACK_TYPE`` 5), the reason logged. A transacted session accepted it inside the
transaction already, so there the transaction is rolled back and the client's own redelivery
policy (``jms.redeliveryPolicy.maxRedeliveries``, set by the container to ``max_deliveries - 1``:
``client/acknowledgement.settle_away_outcome``) settles it undeliverable at its next delivery;
that policy also catches a message whose count a crash pushed past the limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..client import acknowledgement as ack
from ..destination import Destination, Queue, Topic
from ..provider.base import MODIFIED_FAILED

__all__ = [
    "ACKNOWLEDGE",
    "ACKNOWLEDGE_ONLY",
    "COMMIT",
    "ROLLBACK",
    "Backoff",
    "Concurrency",
    "ContainerPolicy",
    "Failure",
    "Mode",
    "Redelivery",
    "Step",
    "parse_destination",
]


class Mode(Enum):
    AUTO = "auto"
    CLIENT = "client"
    TRANSACTED = "transacted"


class Step(Enum):
    """What a face does to the worker's session or message."""

    ACKNOWLEDGE = "acknowledge"  # message.acknowledge() (INDIVIDUAL: this one message)
    COMMIT = "commit"
    ROLLBACK = "rollback"
    SETTLE = "settle"  # JMS_AMQP_ACK_TYPE = Failure.outcome, then message.acknowledge()


ACKNOWLEDGE, COMMIT, ROLLBACK, SETTLE = Step.ACKNOWLEDGE, Step.COMMIT, Step.ROLLBACK, Step.SETTLE
#: ``on_success``'s answer in AUTO mode, one object: a face may test it by identity and
#: acknowledge straight away (the per-message path of the common mode)
ACKNOWLEDGE_ONLY: tuple[Step, ...] = (ACKNOWLEDGE,)


@dataclass(frozen=True, slots=True)
class Backoff:
    """``initial_s * multiplier ** (attempt - 1)``, at most ``max_s`` (attempt counts from 1)."""

    initial_s: float = 1.0
    multiplier: float = 2.0
    max_s: float = 30.0

    def __post_init__(self) -> None:
        if self.initial_s < 0 or self.max_s < 0 or self.multiplier < 1:
            raise ValueError(f"invalid back-off {self}: delays >= 0 and multiplier >= 1")

    def delay(self, attempt: int) -> float:
        if attempt <= 0:
            return 0.0
        return float(min(self.max_s, self.initial_s * self.multiplier ** min(attempt - 1, 64)))


@dataclass(frozen=True, slots=True)
class Redelivery:
    """A failed message waits ``backoff.delay(delivery count)`` before it is given back; after
    ``max_deliveries`` failed deliveries (0: never) it goes to the dead-letter path."""

    max_deliveries: int = 5
    backoff: Backoff = field(default_factory=lambda: Backoff(0.5, 2.0, 10.0))
    #: how a dead letter is settled (``jms.redeliveryPolicy.outcome``'s names): Qpid JMS's
    #: modified-failed-undeliverable by default; REJECTED for a broker that, like the embedded
    #: one without ``max_delivery_attempts``, keeps an undeliverable-here message for others
    outcome: str = "MODIFIED_FAILED_UNDELIVERABLE"

    def __post_init__(self) -> None:
        if self.max_deliveries < 0:
            raise ValueError(f"max_deliveries must be >= 0 (0: no limit), got {self.max_deliveries}")
        if self.outcome not in ack.OUTCOME_BY_NAME:
            raise ValueError(f"dead-letter outcome {self.outcome!r}: one of {', '.join(ack.OUTCOME_BY_NAME)}")

    @property
    def dead_letter_outcome(self) -> int:
        return ack.OUTCOME_BY_NAME[self.outcome]

    @property
    def client_max_redeliveries(self) -> int:
        """``jms.redeliveryPolicy.maxRedeliveries`` for the container's connection (-1: none)."""
        return self.max_deliveries - 1 if self.max_deliveries else -1


@dataclass(frozen=True, slots=True)
class Failure:
    """What a failed delivery gets: ``delay_s`` held, then these ``steps``."""

    dead_letter: bool
    delay_s: float
    steps: tuple[Step, ...]
    #: the outcome SETTLE gives (a ``JMS_AMQP_ACK_TYPE`` value)
    outcome: int


@dataclass(frozen=True, slots=True)
class Concurrency:
    """``Concurrency(4)`` fixed, ``Concurrency(1, 8)`` scaling with the backlog, or the Spring
    string ``"1-8"`` (``Concurrency.parse``)."""

    minimum: int = 1
    maximum: int | None = None

    def __post_init__(self) -> None:
        top = self.top
        if self.minimum < 1 or top < self.minimum:
            raise ValueError(f"invalid concurrency {self.minimum}..{top}: 1 <= min <= max")

    @property
    def top(self) -> int:
        return self.minimum if self.maximum is None else self.maximum

    @property
    def scales(self) -> bool:
        return self.top > self.minimum

    @classmethod
    def parse(cls, value: int | str | Concurrency | tuple[int, int]) -> Concurrency:
        if isinstance(value, Concurrency):
            return value
        if isinstance(value, tuple):
            return cls(value[0], value[1])
        if isinstance(value, int):
            return cls(value)
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", str(value))
        if not m:
            raise ValueError(f"concurrency {value!r}: expected N or MIN-MAX, e.g. 4 or 1-8")
        return cls(int(m.group(1)), int(m.group(2)) if m.group(2) else None)


def parse_destination(value: Destination | str) -> Destination:
    """``queue://orders``, ``topic://prices`` or a plain name (a queue)."""
    if isinstance(value, Destination):
        return value
    text = str(value)
    if text.startswith("topic://"):
        return Topic(text[len("topic://"):])
    if text.startswith("queue://"):
        return Queue(text[len("queue://"):])
    if not text:
        raise ValueError("a destination needs a name")
    return Queue(text)


@dataclass(frozen=True, slots=True)
class ContainerPolicy:
    """What the container consumes and how (every setting has Spring DMLC's meaning where it has
    one; docs/migrating-from-java.md maps them)."""

    destination: Destination
    selector: str | None = None
    #: a subscription name: a shared (and/or durable) subscription on a topic
    subscription: str | None = None
    durable: bool = False
    shared: bool = False
    concurrency: Concurrency = field(default_factory=Concurrency)
    mode: Mode = Mode.AUTO
    #: transacted: messages per transaction (commit when this many succeeded, or when idle)
    batch_size: int = 1
    redelivery: Redelivery = field(default_factory=Redelivery)
    #: reconnecting after the connection is lost (failover: URLs reconnect by themselves first)
    reconnect: Backoff = field(default_factory=lambda: Backoff(0.5, 2.0, 30.0))
    #: how long one receive waits before the worker looks at stop / idle / scaling
    receive_timeout_s: float = 1.0
    #: a worker idle this many receives in a row retires (scaling down, never below minimum)
    idle_receives_to_retire: int = 5
    #: graceful stop: how long in-flight handlers may take before the connection is closed anyway
    shutdown_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.batch_size > 1 and self.mode is not Mode.TRANSACTED:
            raise ValueError("batch_size > 1 needs mode='transacted' (a batch is one transaction)")
        if (self.durable or self.shared) and not self.subscription:
            raise ValueError("a durable or shared subscription needs a subscription name")
        if self.subscription and not self.destination.is_topic:
            raise ValueError(f"a subscription is on a topic, not {self.destination}")
        if self.durable and not self.shared and self.concurrency.top > 1:
            raise ValueError("an unshared durable subscription has one consumer: concurrency 1, "
                             "or shared=True for several")
        if self.destination.is_topic and not self.shared and self.concurrency.top > 1:
            raise ValueError("every consumer of a topic without a shared subscription gets every "
                             "message: concurrency 1, or a shared subscription for several")
        if self.receive_timeout_s <= 0:
            raise ValueError("receive_timeout_s must be > 0")
        if self.selector is not None and self.selector.strip():
            from ..selector import Selector

            Selector(self.selector)  # InvalidSelectorException now, not a reconnect loop later

    @classmethod
    def of(cls, destination: Destination | str, **options: Any) -> ContainerPolicy:
        """The policy from friendly values: ``"queue://orders"``, ``concurrency="1-8"`` or
        ``(1, 8)`` or ``4``, ``mode="transacted"``, ``max_deliveries=5``, ``backoff=Backoff(...)``."""
        if "concurrency" in options:
            options["concurrency"] = Concurrency.parse(options["concurrency"])
        if "mode" in options:
            options["mode"] = Mode(options["mode"]) if isinstance(options["mode"], str) else options["mode"]
        if {"max_deliveries", "backoff", "dead_letter_outcome"} & options.keys():
            base = options.get("redelivery", Redelivery())
            options["redelivery"] = Redelivery(options.pop("max_deliveries", base.max_deliveries),
                                               options.pop("backoff", base.backoff),
                                               options.pop("dead_letter_outcome", base.outcome))
        return cls(parse_destination(destination), **options)

    @property
    def session_mode(self) -> int:
        return ack.SESSION_TRANSACTED if self.mode is Mode.TRANSACTED else ack.INDIVIDUAL_ACKNOWLEDGE

    @property
    def describes(self) -> str:
        what = str(self.destination)
        if self.subscription:
            kind = ("shared durable" if self.shared else "durable") if self.durable else "shared"
            what += f" ({kind} subscription {self.subscription})"
        if self.selector:
            what += f" [{self.selector}]"
        return what

    # -- the decisions ---------------------------------------------------------------------
    def on_success(self, pending: int) -> tuple[Step, ...]:
        """The handler returned; ``pending`` succeeded messages (this one included) wait in the
        open transaction."""
        if self.mode is Mode.AUTO:
            return ACKNOWLEDGE_ONLY
        if self.mode is Mode.TRANSACTED and pending >= self.batch_size:
            return (COMMIT,)
        return ()

    def on_failure(self, delivery_count: int) -> Failure:
        """The handler raised on a message delivered ``delivery_count`` times (JMSXDeliveryCount)."""
        limit = self.redelivery.max_deliveries
        dead = bool(limit) and delivery_count >= limit
        delay = 0.0 if dead else self.redelivery.backoff.delay(delivery_count)
        if self.mode is Mode.TRANSACTED:
            return Failure(dead, delay, (ROLLBACK,), MODIFIED_FAILED)
        outcome = self.redelivery.dead_letter_outcome if dead else MODIFIED_FAILED
        return Failure(dead, delay, (SETTLE,), outcome)

    def on_idle(self, pending: int, dirty: bool) -> tuple[Step, ...]:
        """A receive came back empty: a batch commits what it has; after a rollback an empty
        commit ends the transaction a dead letter was settled in (``dirty``)."""
        if self.mode is Mode.TRANSACTED and (pending or dirty):
            return (COMMIT,)
        return ()

    def on_stop(self, pending: int) -> tuple[Step, ...]:
        """Graceful stop: what succeeded is committed before the session closes."""
        return (COMMIT,) if self.mode is Mode.TRANSACTED and pending else ()
