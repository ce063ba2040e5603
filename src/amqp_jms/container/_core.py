"""What both faces of the listener container share that is not a decision: the connection it
opens, the consumer a worker creates, the figures it keeps, the lines it logs, the span and
metrics of each message. The decisions are ``policy.py``'s.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from ..client.acknowledgement import ACK_TYPE
from ..provider.config import RedeliveryPolicy
from .policy import ContainerPolicy, Failure, Step

__all__ = ["LOG", "Health", "Outcomes", "Stats", "StatsSnapshot", "Telemetry", "container_factory",
           "create_consumer", "delivery_count", "log_connect_failure", "log_failure", "log_late", "log_lost",
           "set_outcome"]

#: the container's logger (a layer of its own: ``logging.getLogger("amqp_jms.container")``)
LOG = logging.getLogger("amqp_jms.container")


def container_factory(factory: Any, policy: ContainerPolicy) -> Any:
    """A copy of ``factory`` (a ``ConnectionFactory``, or a URL) whose connections apply the
    container's delivery limit as the client's redelivery policy (the rule's one home,
    ``client/acknowledgement.settle_away_outcome``), unless the URL already sets one."""
    from ..client.factory import ConnectionFactory

    f = ConnectionFactory(factory) if isinstance(factory, str) else copy.copy(factory)
    cfg = f.config
    if cfg.redelivery.max_redeliveries < 0 and policy.redelivery.max_deliveries:
        f.config = cfg.replace(redelivery=RedeliveryPolicy(policy.redelivery.client_max_redeliveries,
                                                           policy.redelivery.outcome))
    return f


def create_consumer(session: Any, policy: ContainerPolicy) -> Any:
    """The worker's consumer on the policy's destination or subscription (blocking face)."""
    dest, sel, name = policy.destination, policy.selector, policy.subscription
    if name and policy.shared:
        if policy.durable:
            return session.create_shared_durable_consumer(dest, name, sel)
        return session.create_shared_consumer(dest, name, sel)
    if name and policy.durable:
        return session.create_durable_consumer(dest, name, sel)
    return session.create_consumer(dest, sel)


def delivery_count(msg: Any) -> int:
    try:
        return int(msg.get_int_property("JMSXDeliveryCount") or 1)
    except Exception:
        return 1


def set_outcome(msg: Any, outcome: int) -> None:
    """The outcome ``acknowledge()`` gives this message (``JMS_AMQP_ACK_TYPE``, writable on a
    received message: client/acknowledgement.py)."""
    msg.set_int_property(ACK_TYPE, outcome)


def log_failure(policy: ContainerPolicy, msg: Any, count: int, exc: BaseException, failure: Failure) -> None:
    mid = msg.get_jms_message_id()
    limit = policy.redelivery.max_deliveries
    of = f"{count}/{limit}" if limit else str(count)
    if failure.dead_letter:
        LOG.warning("%s: message %s failed delivery %s and goes to the dead-letter path "
                    "(modified, undeliverable-here): %s: %s", policy.describes, mid, of,
                    type(exc).__name__, exc)
    else:
        LOG.warning("%s: message %s failed delivery %s, given back after %.3gs: %s: %s",
                    policy.describes, mid, of, failure.delay_s, type(exc).__name__, exc)


def log_connect_failure(policy: ContainerPolicy, attempt: int, delay: float, exc: BaseException) -> str:
    """One WARNING per failed attempt to (re)open the connection; the health detail."""
    LOG.warning("%s: cannot connect (attempt %d), again in %.3gs: %s", policy.describes, attempt, delay, exc)
    return f"{type(exc).__name__}: {exc}"


def log_lost(policy: ContainerPolicy, exc: BaseException) -> str:
    LOG.warning("%s: connection lost, reconnecting: %s", policy.describes, exc)
    return f"{type(exc).__name__}: {exc}"


def log_late(policy: ContainerPolicy, late: int) -> None:
    LOG.warning("%s: %d handler(s) still running after %.3gs: closing anyway (their messages were "
                "not settled: the broker gives them again)", policy.describes, late,
                policy.shutdown_timeout_s)


@dataclass(frozen=True, slots=True)
class StatsSnapshot:
    received: int
    succeeded: int
    failed: int
    dead_lettered: int
    in_flight: int
    workers: int
    #: messages received but not yet handed to a handler (prefetched by the workers' consumers)
    backlog: int
    #: messages a second over the last few seconds
    rate: float
    #: seconds the handlers took on average
    mean_handler_s: float
    reconnects: int


class Stats:
    """Thread-safe counters; ``snapshot()`` for health checks and the worker's status line."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.received = self.succeeded = self.failed = self.dead_lettered = 0
        self.in_flight = 0
        self.reconnects = 0
        self._handler_s = 0.0
        self._window: list[tuple[float, int]] = [(time.monotonic(), 0)]

    def started(self) -> None:
        with self._lock:
            self.received += 1
            self.in_flight += 1

    def finished(self, ok: bool, dead: bool, seconds: float) -> None:
        with self._lock:
            self.in_flight -= 1
            self._handler_s += seconds
            if ok:
                self.succeeded += 1
            else:
                self.failed += 1
                self.dead_lettered += dead

    def snapshot(self, workers: int = 0, backlog: int = 0) -> StatsSnapshot:
        now = time.monotonic()
        with self._lock:
            done = self.succeeded + self.failed
            w = self._window
            w.append((now, done))
            while len(w) > 2 and now - w[1][0] >= 5.0:
                w.pop(0)
            span = now - w[0][0]
            rate = (done - w[0][1]) / span if span > 0 else 0.0
            mean = self._handler_s / done if done else 0.0
            return StatsSnapshot(self.received, self.succeeded, self.failed, self.dead_lettered,
                                 self.in_flight, workers, backlog, rate, mean, self.reconnects)


@dataclass(frozen=True, slots=True)
class Health:
    """``live``: the container runs (or reconnects); ``ready``: connected, workers consuming."""

    live: bool
    ready: bool
    state: str
    detail: str = ""


class Telemetry:
    """A CONSUMER-side ``process <destination>`` span per message, a child of the context the
    message carried (read as ``provider.tracing`` reads it: W3C, or Jaeger's ``uber-trace-id``),
    and two OpenTelemetry instruments: ``amqp_jms.container.messages`` (attribute ``outcome``:
    success, retry, dead_letter) and ``amqp_jms.container.handler.duration`` (seconds).

    ``enabled`` None: on when the connection traces (``jms.tracing=opentelemetry``), the one
    switch for both. Off, it costs one attribute test per message."""

    def __init__(self, policy: ContainerPolicy, enabled: bool | None, factory: Any) -> None:
        self._policy = policy
        self._tracer: Any = None
        #: spans and instruments are made (faces skip ``span``'s no-op context when not)
        self.on = False
        if enabled is None:
            enabled = bool(factory.config.tracing)
        if not enabled:
            return
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            return
        from .._version import __version__
        from ..mapping.tracestate import carrier_of
        from ..provider.tracing import Tracing

        tracing = Tracing()
        self._context_of = lambda msg: tracing.extract(carrier_of(msg))
        self._tracer = trace.get_tracer("amqp_jms.container", __version__)
        meter = metrics.get_meter("amqp_jms.container", __version__)
        self._messages = meter.create_counter("amqp_jms.container.messages", "{message}",
                                              "Messages the listener container handled")
        self._duration = meter.create_histogram("amqp_jms.container.handler.duration", "s",
                                                "How long the handler took")
        self._attrs = {"messaging.destination.name": policy.destination.name}
        self.on = True

    def span(self, msg: Any) -> AbstractContextManager[Any]:
        """The message's processing span (a shared no-op when telemetry is off: the hot path)."""
        if self._tracer is None:
            return _NO_SPAN
        return self._span(msg)

    @contextmanager
    def _span(self, msg: Any) -> Iterator[Any]:
        with self._tracer.start_as_current_span(
            f"process {self._policy.destination.name}", context=self._context_of(msg),
            kind=_consumer_kind(), attributes={**self._attrs, "messaging.operation.type": "process",
                                               "messaging.message.id": msg.get_jms_message_id() or "",
                                               "messaging.message.delivery_count": delivery_count(msg)},
            record_exception=True, set_status_on_exception=True,
        ) as span:
            yield span

    def record(self, outcome: str, seconds: float) -> None:
        if self._tracer is None:
            return
        self._messages.add(1, {**self._attrs, "outcome": outcome})
        self._duration.record(seconds, self._attrs)


_NO_SPAN: AbstractContextManager[Any] = nullcontext()


def _consumer_kind() -> Any:
    from opentelemetry.trace import SpanKind

    return SpanKind.CONSUMER


class Outcomes:
    """After a handler ran: the figures, the span's metrics, the log line, the error handler, and
    the settlement steps that need no waiting (both faces call this; they differ only in how
    they wait for a commit, a rollback or a back-off)."""

    def __init__(self, policy: ContainerPolicy, stats: Stats, telemetry: Telemetry,
                 error_handler: Any) -> None:
        self.policy = policy
        self.stats = stats
        self.telemetry = telemetry
        self.error_handler = error_handler

    def succeeded(self, seconds: float, pending: int) -> tuple[Step, ...]:
        self.stats.finished(True, False, seconds)
        if self.telemetry.on:
            self.telemetry.record("success", seconds)
        return self.policy.on_success(pending)

    def failed(self, msg: Any, exc: BaseException, seconds: float) -> Failure:
        count = delivery_count(msg)
        failure = self.policy.on_failure(count)
        log_failure(self.policy, msg, count, exc, failure)
        self.stats.finished(False, failure.dead_letter, seconds)
        self.telemetry.record("dead_letter" if failure.dead_letter else "retry", seconds)
        if self.error_handler is not None:
            try:
                self.error_handler(exc, msg)
            except Exception:
                LOG.exception("%s: the error handler raised", self.policy.describes)
        return failure

    @staticmethod
    def settle_now(msg: Any, step: Step, outcome: int) -> bool:
        """Carry out ``step`` if it is a settlement (no waiting: the provider's I/O thread sends
        it); False for COMMIT / ROLLBACK, which the face carries out."""
        if step is Step.ACKNOWLEDGE:
            msg.acknowledge()
            return True
        if step is Step.SETTLE:
            set_outcome(msg, outcome)
            msg.acknowledge()
            return True
        return False
