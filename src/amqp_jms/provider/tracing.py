"""OpenTelemetry tracing of sends and deliveries (``jms.tracing=opentelemetry``, extra ``otel``).

What Qpid JMS's ``OpenTracingTracer`` does, with OpenTelemetry (the successor of the archived
OpenTracing; Qpid JMS's ``jms.tracing=opentracing`` is accepted as the same thing):

* each send is a span of kind PRODUCER (``send <destination>``), a child of whatever span is
  current on the sending thread, with the messaging semantic-convention attributes
  (``messaging.system``, ``messaging.destination.name``, ``messaging.message.id``,
  ``messaging.operation.type``); it ends when the peer settles a send that waits for its
  outcome (an event ``delivery settled`` with the outcome, an error status for a refusal),
  else once handed over;
* its context travels in the ``x-opt-qpid-tracestate`` annotation (``mapping/tracestate.py``),
  a map of strings written by the global OpenTelemetry propagator (W3C ``traceparent`` by
  default) *plus* Jaeger's ``uber-trace-id`` (``<trace>:<span>:0:<flags>``), so that a Java
  service on Qpid JMS with a Jaeger OpenTracing tracer continues our traces;
* each delivery the application gets (``receive`` or a listener) is a span of kind CONSUMER
  (``receive <destination>``) whose parent is the context the message carried: read with the
  global propagator, else from ``uber-trace-id`` (what Qpid JMS with Jaeger sends). With none,
  it is a child of the current span, as Qpid JMS's receive span is.

Spans go to the global ``TracerProvider`` (Qpid JMS uses OpenTracing's ``GlobalTracer``). The
provider calls ``sending``/``sent`` and ``received``; with tracing off it holds ``None`` and
each hook costs one attribute test.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ..exceptions import JMSException
from ..mapping.tracestate import carrier_of, with_carrier

if TYPE_CHECKING:
    from ..destination import Destination
    from ..message import MessageData
    from .config import ConnectionConfig

__all__ = ["UBER_TRACE_ID", "Tracing", "context_of", "from_jaeger", "to_jaeger", "tracing_for"]

#: Jaeger's TEXT_MAP key, what Qpid JMS carries with a Jaeger OpenTracing tracer
UBER_TRACE_ID = "uber-trace-id"


def to_jaeger(trace_id: int, span_id: int, sampled: bool) -> str:
    """``uber-trace-id``'s value: ``{trace-id}:{span-id}:{parent-span-id}:{flags}`` in hex, the
    parent deprecated (``0``), flags bit 1 = sampled."""
    return f"{trace_id:032x}:{span_id:016x}:0:{1 if sampled else 0}"


def from_jaeger(value: str) -> tuple[int, int, bool] | None:
    """``(trace_id, span_id, sampled)`` from an ``uber-trace-id`` value (URL-encoded or not,
    64- or 128-bit trace id, leading zeros optional); None when it is not one."""
    parts = unquote(value).strip().split(":")
    if len(parts) != 4:
        return None
    try:
        trace_id, span_id, flags = int(parts[0], 16), int(parts[1], 16), int(parts[3], 16)
    except ValueError:
        return None
    if not (0 < trace_id < 2**128 and 0 < span_id < 2**64) or len(parts[0]) > 32 or len(parts[1]) > 16:
        return None
    return trace_id, span_id, bool(flags & 1)


def tracing_for(config: ConnectionConfig) -> Tracing | None:
    """The connection's tracing, or None when ``jms.tracing`` does not ask for it."""
    if not config.tracing:
        return None
    return Tracing()


def context_of(message: Any) -> Any:
    """The OpenTelemetry context a received ``message`` carries, or None: the parent for the
    application's own processing span, e.g. in a listener
    ``tracer.start_as_current_span("process", context=context_of(message))``."""
    return Tracing().extract(carrier_of(message))


class Tracing:
    """The hooks the provider calls; bound to the global OpenTelemetry tracer provider."""

    def __init__(self) -> None:
        try:
            from opentelemetry import context, propagate, trace
        except ImportError:
            raise JMSException(
                "jms.tracing=opentelemetry needs OpenTelemetry: pip install 'amqp-jms[otel]'"
            ) from None
        from .._version import __version__

        self._trace = trace
        self._propagate = propagate
        self._context = context
        self._tracer = trace.get_tracer("amqp_jms", __version__)

    @staticmethod
    def _attributes(message_id: str | None, destination: Any, operation: str) -> dict[str, Any]:
        attrs: dict[str, Any] = {
            "messaging.system": "jms",
            "messaging.operation.type": operation,
            "messaging.operation.name": operation,
            "network.protocol.name": "amqp",
            "network.protocol.version": "1.0",
        }
        if destination is not None:
            attrs["messaging.destination.name"] = destination.name
        if message_id is not None:
            attrs["messaging.message.id"] = message_id
        return attrs

    # -- a send made later, on another thread ------------------------------------------------
    def capture(self) -> Any:
        """The calling thread's context, kept with a send the failover provider may make later
        on its own thread (queued while offline, re-sent after a loss), so that the send's span
        is still a child of the application's span."""
        return self._context.get_current()

    @contextlib.contextmanager
    def restored(self, ctx: Any) -> Iterator[None]:
        """``ctx`` (from ``capture``) current on this thread for the ``with`` block."""
        token = self._context.attach(ctx)
        try:
            yield
        finally:
            self._context.detach(token)

    # -- send ----------------------------------------------------------------------------------
    def sending(self, message: MessageData, destination: Destination | None) -> tuple[Any, MessageData]:
        """Start the PRODUCER span of a send (on the sending thread); returns it with the send's
        data carrying its context in the annotation, to be encoded."""
        dest = destination if destination is not None else message.destination
        span = self._tracer.start_span(
            f"send {dest.name if dest is not None else '(anonymous)'}",
            kind=self._trace.SpanKind.PRODUCER,
            attributes=self._attributes(message.message_id, dest, "send"),
        )
        carrier: dict[str, str] = {}
        self._propagate.inject(carrier, context=self._trace.set_span_in_context(span))
        sc = span.get_span_context()
        if sc.is_valid:
            carrier[UBER_TRACE_ID] = to_jaeger(sc.trace_id, sc.span_id, sc.trace_flags.sampled)
        return span, with_carrier(message, carrier)

    def sent(self, span: Any, outcome: concurrent.futures.Future[None] | None) -> None:
        """End the send's span: when the peer settles it, or now if nothing waits for that."""
        if outcome is None:
            span.end()
            return

        def settled(f: concurrent.futures.Future[None]) -> None:
            exc = None if f.cancelled() else f.exception()
            state = "accepted" if exc is None and not f.cancelled() else "refused"
            span.add_event("delivery settled", {"state": state})
            if exc is not None:
                span.record_exception(exc)
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(exc)))
            span.end()

        outcome.add_done_callback(settled)

    # -- receive -------------------------------------------------------------------------------
    def received(self, message: Any, destination: Any) -> Any:
        """The CONSUMER span of a delivery handed to the application, child of the context the
        message carried (Qpid JMS's ``receive`` span, finished at once; a listener's
        ``on_message`` then runs with it ``current``). Returns the span."""
        dest = destination if destination is not None else message.get_jms_destination()
        span = self._tracer.start_span(
            f"receive {dest.name if dest is not None else ''}".rstrip(),
            context=self.extract(carrier_of(message)),
            kind=self._trace.SpanKind.CONSUMER,
            attributes=self._attributes(message.get_jms_message_id(), dest, "receive"),
        )
        span.end()
        return span

    def current(self, span: Any) -> Any:
        """A context manager making ``span`` (a delivery's) the current span on this thread:
        the spans a MessageListener starts are its children. It is not ended nor marked by
        what the listener raises (the session decides what a raising listener means)."""
        return self._trace.use_span(span, end_on_exit=False, record_exception=False,
                                    set_status_on_exception=False)

    def extract(self, carrier: dict[str, str] | None) -> Any:
        """The OpenTelemetry context a carrier holds (None: no context, the current one applies):
        the global propagator's keys first, then Jaeger's ``uber-trace-id``."""
        if not carrier:
            return None
        trace = self._trace
        ctx = self._propagate.extract(carrier)
        if trace.get_current_span(ctx).get_span_context().is_valid:
            return ctx
        jaeger = carrier.get(UBER_TRACE_ID)
        ids = from_jaeger(jaeger) if jaeger else None
        if ids is None:
            return None
        trace_id, span_id, sampled = ids
        sc = trace.SpanContext(
            trace_id=trace_id & (2**128 - 1), span_id=span_id, is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED if sampled else trace.TraceFlags.DEFAULT),
        )
        return trace.set_span_in_context(trace.NonRecordingSpan(sc))
