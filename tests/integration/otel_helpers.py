"""The OpenTelemetry SDK set up once per test process for the tracing tests: the in-memory span
exporter and metric reader on the global providers (OpenTelemetry refuses to replace them, so
every test module shares these), a ``spans`` fixture's body and a filter for our own spans."""

from __future__ import annotations

from collections.abc import Iterator

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

EXPORTER = InMemorySpanExporter()
READER = InMemoryMetricReader()


def install() -> None:
    """The process's global providers, once (OpenTelemetry refuses to replace them)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    if not getattr(provider, "_amqp_jms_test", False):
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        provider._amqp_jms_test = True  # type: ignore[attr-defined]
    if not isinstance(metrics.get_meter_provider(), MeterProvider):
        metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))


def collected_spans() -> Iterator[InMemorySpanExporter]:
    """The body of a test module's ``spans`` fixture: the exporter, emptied before and after."""
    install()
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()


def ours(exporter: InMemorySpanExporter, kind: SpanKind) -> list[ReadableSpan]:
    """The spans amqp-jms made, of one kind."""
    return [s for s in exporter.get_finished_spans() if s.kind == kind and s.instrumentation_scope
            and s.instrumentation_scope.name == "amqp_jms"]
