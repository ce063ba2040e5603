"""Where a message carries its trace context: the ``x-opt-qpid-tracestate`` message annotation.

Qpid JMS's tracing (``jms.tracing=opentracing``) injects the sending span's context with the
tracer's ``TEXT_MAP`` format into a ``Map<String, String>`` and stores it as the message
annotation ``x-opt-qpid-tracestate`` (a symbol key): on the wire an AMQP *map* of *string*
keys to *string* values, e.g. ``{"uber-trace-id": "<trace>:<span>:0:1"}`` with a Jaeger tracer,
or ``{"traceparent": "00-<trace>-<span>-01"}`` with a W3C one. A receiver extracts the context
from it and continues the trace. This module is only that annotation's home: which keys mean
what is the tracer's business (``provider/tracing.py``).

The annotation lives in ``MessageData.extra["message_annotations"]``, where the mapping keeps
the annotations it does not interpret (received ones are sent again when a message is forwarded);
pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..message import Message, MessageData
from ..message._data import view
from ..types import Symbol
from .outbound import EXTRA_ANNOTATIONS

__all__ = ["TRACESTATE", "carrier_of", "with_carrier"]

TRACESTATE = Symbol("x-opt-qpid-tracestate")


def carrier_of(message: Message | MessageData) -> dict[str, str] | None:
    """The trace context ``message`` arrived with (its string entries), or None."""
    extra = (message if isinstance(message, MessageData) else view(message)).extra
    if not extra:
        return None
    annotations = extra.get(EXTRA_ANNOTATIONS)
    if not annotations:
        return None
    value = annotations.get(TRACESTATE)
    if not isinstance(value, Mapping):
        return None
    carrier = {str(k): v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
    return carrier or None


def with_carrier(data: MessageData, carrier: Mapping[str, str] | None) -> MessageData:
    """``data`` carrying ``carrier`` as its trace context (None or empty: carrying none): a new
    record with a new ``extra``; the annotations of ``data`` are not changed."""
    extra = dict(data.extra) if data.extra else {}
    annotations = dict(extra.get(EXTRA_ANNOTATIONS) or {})
    if carrier:
        annotations[TRACESTATE] = dict(carrier)
    else:
        annotations.pop(TRACESTATE, None)
    if annotations:
        extra[EXTRA_ANNOTATIONS] = annotations
    else:
        extra.pop(EXTRA_ANNOTATIONS, None)
    return data._replace(extra=extra or None)
