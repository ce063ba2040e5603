"""The connections' counters as OpenTelemetry metrics (``jms.metrics=opentelemetry``).

Asynchronous (observable) counters, read from each live connection's ``Counters`` when the
application's metric reader collects: the I/O thread counts exactly as it does without
OpenTelemetry, so exporting adds nothing per message. Registered once per process on the global
``MeterProvider`` (OpenTelemetry's proxy forwards to one the application sets later); a
connection is observed from its open until it is garbage (a weak set), its last values staying
readable after close.

Instruments (monotonic counters, attribute ``amqp_jms.connection.id``; the outcome ones also
``messaging.operation.type`` = ``send`` for the peer's outcomes of our sends, ``settle`` for the
outcomes we gave, and ``amqp.outcome``):

=====================================  ==========  ===========================================
``messaging.client.sent.messages``     {message}   messages sent (semantic conventions' name)
``messaging.client.consumed.messages`` {message}   messages received (semantic conventions' name)
``amqp_jms.client.sent.bytes``         By          encoded bytes sent
``amqp_jms.client.received.bytes``     By          encoded bytes received
``amqp_jms.client.outcomes``           {outcome}   accepted / rejected / released / modified
``amqp_jms.client.redeliveries``       {message}   messages that arrived redelivered
``amqp_jms.client.failures``           {failure}   connections failed
``amqp_jms.client.reconnects``         {reconnect} reconnections (failover)
=====================================  ==========  ===========================================
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from ..exceptions import JMSException
from .metrics import Counters

__all__ = ["export"]

_live: weakref.WeakSet[Counters] = weakref.WeakSet()
_lock = threading.Lock()
_registered = False

# instrument name, unit, description, counter attribute
_SIMPLE = (
    ("messaging.client.sent.messages", "{message}", "Messages sent", "messages_sent"),
    ("messaging.client.consumed.messages", "{message}", "Messages received", "messages_received"),
    ("amqp_jms.client.sent.bytes", "By", "Encoded message bytes sent", "bytes_sent"),
    ("amqp_jms.client.received.bytes", "By", "Encoded message bytes received", "bytes_received"),
    ("amqp_jms.client.redeliveries", "{message}", "Messages that arrived redelivered", "redeliveries"),
    ("amqp_jms.client.failures", "{failure}", "Connection failures", "failures"),
    ("amqp_jms.client.reconnects", "{reconnect}", "Reconnections", "reconnects"),
)
_OUTCOMES = ("accepted", "rejected", "released", "modified")


def export(counters: Counters) -> None:
    """Observe ``counters`` through OpenTelemetry metrics from now on."""
    global _registered
    with _lock:
        if not _registered:
            _register()
            _registered = True
        _live.add(counters)


def _register() -> None:
    try:
        from opentelemetry import metrics
    except ImportError:
        raise JMSException("jms.metrics=opentelemetry needs OpenTelemetry: "
                           "pip install 'amqp-jms[otel]'") from None
    from .._version import __version__

    meter = metrics.get_meter("amqp_jms", __version__)
    Observation = metrics.Observation

    def simple(attr: str) -> Callable[[Any], Iterable[Any]]:
        def observe(_options: Any) -> Iterable[Any]:
            return [Observation(getattr(c, attr), {"amqp_jms.connection.id": c.connection_id})
                    for c in list(_live)]
        return observe

    for name, unit, description, attr in _SIMPLE:
        meter.create_observable_counter(name, [simple(attr)], unit=unit, description=description)

    def outcomes(_options: Any) -> Iterable[Any]:
        out = []
        for c in list(_live):
            for operation, prefix in (("send", "sends_"), ("settle", "acks_")):
                for outcome in _OUTCOMES:
                    out.append(Observation(getattr(c, prefix + outcome), {
                        "amqp_jms.connection.id": c.connection_id,
                        "messaging.operation.type": operation,
                        "amqp.outcome": outcome,
                    }))
        return out

    meter.create_observable_counter("amqp_jms.client.outcomes", [outcomes], unit="{outcome}",
                                    description="Delivery outcomes, of our sends and of our settlements")
