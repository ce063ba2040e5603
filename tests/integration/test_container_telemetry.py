"""The listener container's OpenTelemetry: a ``process`` span per message, child of the context
the message carried (the producer's span, across the broker), the handler's exception recorded,
and the per-outcome counter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from otel_helpers import READER, collected_spans
from waiting import wait_for

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.container import Backoff, ListenerContainer


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from collected_spans()


def _counts() -> dict[str, int]:
    out: dict[str, int] = {}
    data = READER.get_metrics_data()
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == "amqp_jms.container.messages":
                    for p in metric.data.data_points:
                        out[str(p.attributes["outcome"])] = int(p.value)
    return out


def test_a_process_span_per_message_continues_the_producers_trace(broker: Any, spans: InMemorySpanExporter
                                                                   ) -> None:
    url = f"{broker.url}?jms.tracing=opentelemetry"
    before = _counts()
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("traced"))
        with trace.get_tracer("app").start_as_current_span("checkout"):
            p.send(s.create_text_message("ok"))
            p.send(s.create_text_message("bad"))

    def handle(m: Any) -> None:
        if m.get_text() == "bad" and m.get_int_property("JMSXDeliveryCount") == 1:
            raise ValueError("bad order")

    with ListenerContainer(url, handle, "queue://traced", backoff=Backoff(0.01, 1, 0.01),
                           receive_timeout_s=0.2) as c:
        assert wait_for(lambda: c.stats().succeeded == 2)
    sends = {s.context.span_id: s for s in spans.get_finished_spans() if s.kind == SpanKind.PRODUCER}
    process = [s for s in spans.get_finished_spans() if s.name == "process traced"]
    assert len(process) == 3 and all(s.kind == SpanKind.CONSUMER for s in process)
    for span in process:
        scope = span.instrumentation_scope
        assert scope is not None and scope.name == "amqp_jms.container"
        assert span.parent is not None and span.parent.span_id in sends  # the message's context
    failed = [s for s in process if s.status.status_code == StatusCode.ERROR]
    assert len(failed) == 1 and failed[0].events[0].name == "exception"
    assert failed[0].attributes is not None and failed[0].attributes["messaging.message.delivery_count"] == 1
    after = _counts()
    assert after.get("success", 0) - before.get("success", 0) == 2
    assert after.get("retry", 0) - before.get("retry", 0) == 1


def test_no_spans_when_the_connection_does_not_trace(broker: Any, spans: InMemorySpanExporter) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session()
        s.create_producer(Queue("plain")).send(s.create_text_message("x"))
    with ListenerContainer(broker.url, lambda m: None, "queue://plain", receive_timeout_s=0.2) as c:
        assert wait_for(lambda: c.stats().succeeded == 1)
    assert [s for s in spans.get_finished_spans() if s.name.startswith("process")] == []
