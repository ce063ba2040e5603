"""The one place the Spark connector touches the JMS client and the mapping.

Readers and writers run in executors and in the driver's long-lived Python process; they all
open connections through these helpers (never in ``__init__``: Spark pickles readers and
writers), so the calls into :mod:`amqp_jms.client` and :mod:`amqp_jms.mapping` live here only.
"""

from __future__ import annotations

from typing import Any

from ..destination import Destination, Topic
from .options import JmsOptions

__all__ = ["decode", "encode", "open_connection", "open_consumer", "raw_bytes", "receive_raw"]


def open_connection(options: JmsOptions) -> Any:
    """A started connection to ``options.url`` (with the client ID when one is set)."""
    from .. import client

    factory = client.ConnectionFactory(options.url)
    connection = factory.create_connection()
    try:
        if options.client_id:
            connection.set_client_id(options.client_id)
        connection.start()
    except BaseException:
        connection.close()
        raise
    return connection


def open_consumer(session: Any, options: JmsOptions) -> Any:
    """The consumer a read uses: durable when ``subscription`` is set, selector pushed down."""
    destination: Destination = options.require_destination()
    if options.subscription:
        if not isinstance(destination, Topic):
            raise ValueError("jms data source: 'subscription' needs a topic:// destination")
        return session.create_durable_consumer(destination, options.subscription, options.selector)
    return session.create_consumer(destination, options.selector)


def encode(message: Any) -> bytes:
    from .. import mapping

    return bytes(mapping.encode(message))


def decode(data: bytes) -> Any:
    from .. import mapping

    return mapping.decode(bytes(data))


def raw_bytes(message: Any) -> bytes:
    """The encoded form of a message (re-encoded: for messages not received by :func:`receive_raw`)."""
    return encode(message)


def receive_raw(consumer: Any, timeout_ms: int) -> tuple[Any, bytes] | None:
    """Receive one message and the exact bytes it arrived as (``None`` at the timeout).

    The write-ahead log stores what the broker sent (header and delivery count included, no
    re-encoding cost). The client's public ``receive`` hands back only the decoded message, so
    this goes one level down, through the same steps ``MessageConsumer.receive`` takes (vetting,
    acknowledgement bookkeeping); with a client that lacks them it falls back to
    ``receive`` + :func:`encode`.
    """
    import time

    session: Any = getattr(consumer, "_session", None)
    if not all(
        hasattr(x, y) for x, y in ((consumer, "_next"), (session, "_prepare"), (session, "_after_receive"))
    ):
        message = consumer.receive(timeout_ms) if timeout_ms > 0 else consumer.receive_no_wait()
        return None if message is None else (message, encode(message))
    consumer._check_open()
    deadline = time.monotonic() + timeout_ms / 1000.0
    while True:
        left = max(0.0, deadline - time.monotonic())
        inbound = consumer._next(left)
        if inbound is None:
            return None
        message = session._prepare(consumer, inbound)
        if message is not None:
            session._after_receive(consumer, inbound, message)
            data = getattr(inbound, "data", None)
            return message, (bytes(data) if data is not None else encode(message))
