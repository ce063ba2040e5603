"""OpenTelemetry tracing (``jms.tracing=opentelemetry``): spans collected with the SDK's in-memory
exporter; a trace followed producer -> embedded broker -> consumer; the context carried in
``x-opt-qpid-tracestate`` as Qpid JMS carries it, both ways (a Java/Jaeger context continued,
ours readable by Qpid JMS's Jaeger tracer)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as PMessage
from proton import byte, symbol

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from otel_helpers import READER, collected_spans, install, ours

from amqp_jms import ConnectionFactory, DeliveryMode, JMSException, Queue
from amqp_jms.provider.config import parse_url
from amqp_jms.provider.tracing import context_of, from_jaeger
from amqp_jms.testing.peer import TestPeer, Transfer

TRACING = "jms.tracing=opentelemetry"
FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000&"
TRACESTATE = symbol("x-opt-qpid-tracestate")


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from collected_spans()


def test_a_trace_crosses_the_broker_from_producer_to_consumer(
    broker: Any, spans: InMemorySpanExporter
) -> None:
    q = Queue("traced")
    app = trace.get_tracer("the-application")
    with ConnectionFactory(f"{broker.url}?{TRACING}").create_connection() as conn:
        session = conn.create_session()
        producer = session.create_producer(q)
        producer.set_delivery_mode(DeliveryMode.PERSISTENT)
        with app.start_as_current_span("checkout") as outer:
            m = session.create_text_message("order 1")
            producer.send(m)
        consumer = session.create_consumer(q)
        conn.start()
        got = consumer.receive(5000)
        assert got is not None and got.get_text() == "order 1"
    (send,) = ours(spans, SpanKind.PRODUCER)
    (receive,) = ours(spans, SpanKind.CONSUMER)
    # the send is a child of the application's span; the delivery a child of the send
    assert send.parent is not None and send.parent.span_id == outer.get_span_context().span_id
    assert send.context.trace_id == outer.get_span_context().trace_id
    assert receive.parent is not None and receive.parent.span_id == send.context.span_id
    assert receive.context.trace_id == send.context.trace_id and receive.parent.is_remote
    for span, operation in ((send, "send"), (receive, "receive")):
        assert span.attributes is not None
        assert span.attributes["messaging.system"] == "jms"
        assert span.attributes["messaging.destination.name"] == "traced"
        assert span.attributes["messaging.message.id"] == m.get_jms_message_id()
        assert span.attributes["messaging.operation.type"] == operation
    assert send.name == "send traced" and receive.name == "receive traced"
    assert [e.name for e in send.events] == ["delivery settled"]  # ended at the peer's outcome


def test_a_listener_runs_inside_the_delivery_span(broker: Any, spans: InMemorySpanExporter) -> None:
    """As Qpid JMS keeps its delivery span active around onMessage: the spans a MessageListener
    starts are children of the delivery's span, in the producer's trace."""
    q = Queue("traced-listener")
    app = trace.get_tracer("the-application")
    handled: list[tuple[int, int]] = []
    done = threading.Event()

    def on_message(message: Any) -> None:
        with app.start_as_current_span("handle order") as span:
            handled.append((span.get_span_context().trace_id, span.get_span_context().span_id))
        done.set()

    with ConnectionFactory(f"{broker.url}?{TRACING}").create_connection() as conn:
        session = conn.create_session()
        session.create_producer(q).send(session.create_text_message("order 2"))
        session.create_consumer(q).set_message_listener(on_message)
        conn.start()
        assert done.wait(5)
    (send,) = ours(spans, SpanKind.PRODUCER)
    (receive,) = ours(spans, SpanKind.CONSUMER)
    (handle,) = [s for s in spans.get_finished_spans() if s.name == "handle order"]
    assert handled == [(handle.context.trace_id, handle.context.span_id)]
    assert handle.parent is not None and handle.parent.span_id == receive.context.span_id
    assert handle.context.trace_id == receive.context.trace_id == send.context.trace_id
    assert receive.parent is not None and receive.parent.span_id == send.context.span_id


def _send_to_peer(options: str) -> Transfer:
    """One persistent send to the scripted peer; the transfer as the peer read it."""
    seen: list[Transfer] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(seen.append)
        with ConnectionFactory(peer.url + FAST + options).create_connection() as conn:
            session = conn.create_session()
            producer = session.create_producer(Queue("q"))
            producer.set_delivery_mode(DeliveryMode.PERSISTENT)
            producer.send(session.create_text_message("x"))
            assert (conn._provider.tracing is None) == (not options)
            peer.wait()
    return seen[0]


def test_the_context_travels_as_qpid_jms_carries_it(spans: InMemorySpanExporter) -> None:
    """A map of *string* keys and values under the symbol x-opt-qpid-tracestate, with Jaeger's
    uber-trace-id (what Qpid JMS's OpenTracing tracer reads with Jaeger) and W3C traceparent."""
    seen = [_send_to_peer(TRACING)]
    (send,) = ours(spans, SpanKind.PRODUCER)
    state = seen[0].message.annotations[TRACESTATE]
    assert isinstance(state, dict) and all(type(k) is str and type(v) is str for k, v in state.items())
    assert from_jaeger(state["uber-trace-id"]) == (send.context.trace_id, send.context.span_id, True)
    ctx = send.context
    assert state["traceparent"] == f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
    # the annotation's key is a symbol, as Qpid JMS writes it (Symbol.valueOf)
    assert b"\xa3\x15x-opt-qpid-tracestate" in seen[0].payload


@pytest.mark.parametrize("uber", [
    "463ac35c9f6413ad48485a3953bb6124:a2fb4a1d1a96d312:0:1",
    "463ac35c9f6413ad48485a3953bb6124%3Aa2fb4a1d1a96d312%3A0%3A1",  # URL-encoded (HTTP_HEADERS)
])
def test_a_java_jaeger_context_is_continued(spans: InMemorySpanExporter, uber: str) -> None:
    java = PMessage(body="from java", annotations={
        symbol("x-opt-jms-msg-type"): byte(5),
        TRACESTATE: {"uber-trace-id": uber},  # Map<String, String>, as Qpid JMS sends it
    })
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach()
        peer.expect_flow(send=[java])
        peer.expect_disposition()
        with ConnectionFactory(peer.url + FAST + TRACING).create_connection() as conn:
            consumer = conn.create_session().create_consumer(Queue("q"))
            conn.start()
            got = consumer.receive(2000)
            assert got is not None and got.get_body(str) == "from java"
            peer.wait()
    # the application's own span continues the same trace
    app = trace.get_tracer("the-application")
    with app.start_as_current_span("process", context=context_of(got)) as mine:
        assert mine.get_span_context().trace_id == 0x463AC35C9F6413AD48485A3953BB6124
    (receive,) = ours(spans, SpanKind.CONSUMER)
    assert receive.context.trace_id == 0x463AC35C9F6413AD48485A3953BB6124
    assert receive.parent is not None and receive.parent.span_id == 0xA2FB4A1D1A96D312
    assert receive.parent.is_remote


def test_off_by_default_nothing_traced_nothing_carried(spans: InMemorySpanExporter) -> None:
    seen = [_send_to_peer("")]
    assert TRACESTATE not in (seen[0].message.annotations or {})
    assert not ours(spans, SpanKind.PRODUCER)


def test_the_tracing_option() -> None:
    assert parse_url("amqp://h?jms.tracing=opentracing").tracing == "opentelemetry"
    assert parse_url("amqp://h?jms.tracing=noop").tracing == ""
    assert parse_url("amqp://h").tracing == ""
    with pytest.raises(JMSException, match=r"jms\.tracing"):
        parse_url("amqp://h?jms.tracing=zipkin")


def test_counters_are_exported_as_opentelemetry_metrics(broker: Any) -> None:
    install()
    with ConnectionFactory(f"{broker.url}?jms.metrics=opentelemetry").create_connection() as conn:
        session = conn.create_session()
        producer = session.create_producer(Queue("metered"))
        producer.set_delivery_mode(DeliveryMode.PERSISTENT)
        for _ in range(3):
            producer.send(session.create_text_message("m"))
        cid = conn.connection_id()
    data = READER.get_metrics_data()
    assert data is not None
    points: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for p in metric.data.data_points:  # type: ignore[union-attr]
                    attrs = dict(p.attributes or {})
                    if attrs.get("amqp_jms.connection.id") == cid:
                        points[(metric.name, tuple(sorted(attrs.items())))] = p.value
    assert points[("messaging.client.sent.messages", (("amqp_jms.connection.id", cid),))] == 3
    accepted = (("amqp.outcome", "accepted"), ("amqp_jms.connection.id", cid),
                ("messaging.operation.type", "send"))
    assert points[("amqp_jms.client.outcomes", accepted)] == 3
    assert points[("amqp_jms.client.sent.bytes", (("amqp_jms.connection.id", cid),))] > 0


@pytest.mark.parametrize("option", ["jms.tracing=opentelemetry", "jms.metrics=opentelemetry"])
def test_without_the_extra_the_option_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    import amqp_jms.provider.otel_metrics as otel_metrics

    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if not installed
    monkeypatch.setattr(otel_metrics, "_registered", False)
    with pytest.raises(JMSException, match=r"amqp-jms\[otel\]"):
        ConnectionFactory(f"amqp://127.0.0.1:1?{option}").create_connection().create_session()
