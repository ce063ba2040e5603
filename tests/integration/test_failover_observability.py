"""Issue 21's client observability across a failover (issue 17): a trace followed producer ->
broker -> consumer while the connection moves, the connection's counters adding up across a
reconnect, one WARNING line per interruption, failed attempt and restoration, and the tracing
and frame-trace options on every connection the failover provider makes.

The faults are real: a FaultProxy between the client and the embedded broker drops (RST) the
connection and refuses new ones for a while."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, ConnectionListener, DeliveryMode, Queue
from amqp_jms.testing import FaultProxy

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=100"


@pytest.fixture
def proxy(broker: Any) -> Iterator[FaultProxy]:
    with FaultProxy(broker.port) as p:
        yield p


def _wait(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.02)
    return cond()


def _outage(proxy: FaultProxy, seconds: float) -> threading.Thread:
    """Drop the connection and refuse new ones for ``seconds`` (so the reconnect fails at least
    once, and what the application does meanwhile is queued), then let them in again."""
    proxy.refuse()
    assert proxy.drop() == 1

    def back() -> None:
        time.sleep(seconds)
        proxy.accept()

    t = threading.Thread(target=back, daemon=True)
    t.start()
    return t


class _Interrupted(ConnectionListener, threading.Event):
    def on_connection_interrupted(self, uri: str) -> None:
        self.set()


def test_counters_add_up_across_a_reconnect(proxy: FaultProxy) -> None:
    """One set of counters for the connection's life: messages counted once each, whichever
    wrapped connection carried them, the reconnect and the loss counted once. (The sends after
    the loss wait for the interruption to be known: a send handed to the dying connection
    first is re-sent, and its two transfers count twice in messages_sent, once accepted.)"""
    q = Queue("fo-metrics")
    interrupted = _Interrupted()
    with ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        conn.add_connection_listener(interrupted)
        s = conn.create_session()
        cid = conn.metrics().connection_id
        p = s.create_producer(q)
        c = s.create_consumer(q)
        conn.start()
        for i in range(3):
            p.send(s.create_text_message(f"a{i}"))
        assert [c.receive(5000).get_text() for _ in range(3)] == ["a0", "a1", "a2"]
        assert _wait(lambda: conn.metrics().acks_accepted == 3)
        before = conn.metrics()
        assert (before.messages_sent, before.messages_received, before.reconnects) == (3, 3, 0)
        _outage(proxy, 0.3)
        assert interrupted.wait(10)
        for i in range(3):
            p.send(s.create_text_message(f"b{i}"))  # queued, sent after the reconnect
        assert [c.receive(5000).get_text() for _ in range(3)] == ["b0", "b1", "b2"]
        assert _wait(lambda: conn.metrics().acks_accepted == 6)
        m = conn.metrics()
    assert m.connection_id == cid and cid.startswith("ID:")
    assert m.reconnects == 1 and m.failures == 1
    assert (m.messages_sent, m.sends_accepted, m.messages_received, m.redeliveries) == (6, 6, 6, 0)
    assert m.bytes_sent == 2 * before.bytes_sent and m.bytes_received == 2 * before.bytes_received
    assert conn.metrics() == m  # readable after close


def test_one_warning_line_per_interruption_failed_attempt_and_restoration(
    proxy: FaultProxy, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="amqp_jms")
    with ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        s = conn.create_session()
        cid = conn.metrics().connection_id
        p = s.create_producer(Queue("fo-logs"))
        p.send(s.create_text_message("x"))
        caplog.clear()
        _outage(proxy, 0.4).join()
        p.send(s.create_text_message("y"))
        assert _wait(lambda: conn.metrics().reconnects == 1)
    # the client's lines (the embedded broker may run in this process and log on its own)
    ours = [r for r in caplog.records
            if r.name.startswith("amqp_jms") and not r.name.startswith("amqp_jms.broker")]
    warnings = [r for r in ours if r.levelno >= logging.WARNING]
    texts = [r.getMessage() for r in warnings]
    assert all(r.levelno == logging.WARNING for r in warnings), texts
    # every line names the connection (in the text and in the record, for a handler's filter)
    assert all(getattr(r, "connection_id", None) == cid and f"[connection={cid}] " in r.getMessage()
               for r in warnings), texts
    lost = [t for t in texts if " lost, reconnecting: " in t]
    failed = [t for t in texts if re.search(r"reconnect attempt \d+ to amqp://\S+ failed: \S", t)]
    restored = [t for t in texts if re.search(r"connection restored to amqp://\S+ after \d+ ms", t)]
    assert len(lost) == 1 and proxy.url.split("?")[0].split("//")[1] in lost[0], texts
    assert lost[0].split("reconnecting: ", 1)[1].strip()  # the reason, as the provider words it
    assert len(failed) >= 1 and len(restored) == 1, texts
    # (failover.warnAfterReconnectAttempts' reminder every 10 failed passes, if the load slows
    # the outage down that much)
    reminders = [t for t in texts if "still failing to connect after" in t]
    # nothing else at WARNING (the wrapped connection's own loss line is DEBUG), none at INFO
    assert len(texts) == len(lost) + len(failed) + len(restored) + len(reminders), texts
    assert not [r.getMessage() for r in ours if r.levelno == logging.INFO]


def test_frame_trace_reaches_every_connection(proxy: FaultProxy, caplog: pytest.LogCaptureFixture) -> None:
    """``failover.nested.amqp.traceFrames`` applies to the connection made after the loss as to
    the first: its frames are traced, under the same connection id. (``jms.tracing`` on the next
    connection: the trace test below, whose second send goes out on it.)"""
    caplog.set_level(logging.DEBUG, logger="amqp_jms.frames")
    url = f"failover:({proxy.url})?{FAST}&failover.nested.amqp.traceFrames=true"
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        cid = conn.metrics().connection_id
        p = s.create_producer(Queue("fo-frames"))
        _outage(proxy, 0.1).join()
        p.send(s.create_text_message("after"))
    frames = [r for r in caplog.records if r.name == "amqp_jms.frames"]
    opens = [r for r in frames if re.search(r"-> @open\(16\)", r.getMessage())]
    assert len(opens) == 2 and all(r.connection_id == cid for r in opens)  # type: ignore[attr-defined]
    assert any("@transfer" in r.getMessage() for r in frames[frames.index(opens[1]):])


@pytest.fixture
def spans() -> Iterator[Any]:
    pytest.importorskip("opentelemetry.sdk")
    from otel_helpers import collected_spans

    yield from collected_spans()


def test_a_trace_crosses_the_broker_and_a_failover(proxy: FaultProxy, spans: Any) -> None:
    """Sent before the drop and received after it, or sent while the connection is away (queued,
    then sent by the failover provider on the new connection): each delivery's span is a child of
    its send's span, and each send's a child of the application's span, in one trace."""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind
    from otel_helpers import ours

    app = trace.get_tracer("the-application")
    q = Queue("fo-traced")
    url = f"failover:({proxy.url})?{FAST}&jms.tracing=opentelemetry"
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(q)
        p.set_delivery_mode(DeliveryMode.PERSISTENT)
        with app.start_as_current_span("before") as before:
            p.send(s.create_text_message("before"))
        _outage(proxy, 0.3)
        with app.start_as_current_span("during") as during:
            p.send(s.create_text_message("during"))  # queued until the reconnect
        c = s.create_consumer(q)
        conn.start()
        got = [c.receive(5000) for _ in range(2)]
        assert [m.get_text() for m in got if m is not None] == ["before", "during"]
    assert conn.metrics().reconnects == 1
    sends = {s.attributes["messaging.message.id"]: s for s in ours(spans, SpanKind.PRODUCER)
             if s.attributes}
    receives = [r for r in ours(spans, SpanKind.CONSUMER) if r.attributes]
    assert len(receives) == 2
    for outer, message, receive in zip((before, during), got, receives, strict=True):
        assert message is not None
        send = sends[message.get_jms_message_id()]
        assert receive.attributes is not None
        assert receive.attributes["messaging.message.id"] == message.get_jms_message_id()
        assert send.parent is not None and send.parent.span_id == outer.get_span_context().span_id
        assert receive.parent is not None and receive.parent.span_id == send.context.span_id
        assert receive.context.trace_id == send.context.trace_id == outer.get_span_context().trace_id


def test_a_send_resent_after_a_loss_stays_in_the_application_trace(spans: Any) -> None:
    """A persistent send the lost connection never answered is re-sent by the failover provider
    on its own thread: the transfer it sends carries a context in the application's trace, the
    child of the application's span (scripted peer: the first transfer gets no outcome)."""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind
    from otel_helpers import ours
    from proton import symbol

    from amqp_jms.testing.peer import TestPeer

    carried: list[str] = []

    def keep(t: Any) -> bool:
        carried.append(t.message.annotations[symbol("x-opt-qpid-tracestate")]["traceparent"])
        return True

    app = trace.get_tracer("the-application")
    outer: list[Any] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(offer=10)
        peer.expect_transfer(keep, outcome=None)
        url = f"failover:({peer.url})?{FAST}&jms.tracing=opentelemetry"
        with ConnectionFactory(url).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(Queue("q"))

            def send() -> None:
                with app.start_as_current_span("checkout") as span:
                    outer.append(span)
                    p.send(s.create_text_message("x"))

            t = threading.Thread(target=send)
            t.start()
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.expect_attach(offer=10)
            peer.expect_transfer(keep)
            peer.drop()
            t.join(5)
            assert not t.is_alive()
            peer.wait()
    app_ctx = outer[0].get_span_context()
    sends = ours(spans, SpanKind.PRODUCER)
    assert len(carried) == 2 and len(sends) == 2
    for span in sends:  # the one the loss ended and the re-send's, both the application's children
        assert span.parent is not None and span.parent.span_id == app_ctx.span_id
    resend = max(sends, key=lambda s: s.start_time or 0)
    # W3C traceparent: version-trace-span-flags
    assert carried[1].rsplit("-", 1)[0] == f"00-{app_ctx.trace_id:032x}-{resend.context.span_id:016x}"
