"""The one place the Spark connector touches the JMS client and the mapping.

Readers and writers run in executors and in the driver's long-lived Python process; they all
open connections through these helpers (never in ``__init__``: Spark pickles readers and
writers), so the calls into :mod:`amqp_jms.client` and :mod:`amqp_jms.mapping` live here only.
"""

from __future__ import annotations

from typing import Any

from ..destination import Destination, Topic
from .options import JmsOptions

__all__ = ["decode", "encode", "open_connection", "open_consumer", "raw_bytes"]


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
    """The encoded form of a received message, for the write-ahead log.

    Uses the bytes the message arrived as when the client kept them (no re-encoding, and the
    delivery count survives), else encodes the message again.
    """
    raw = getattr(message, "_amqp_bytes", None) or getattr(message, "amqp_bytes", None)
    if raw is not None:
        return bytes(raw)
    return encode(message)
