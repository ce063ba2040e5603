"""The one place the Spark connector touches the JMS client and the mapping.

Readers and writers run in executors and in the driver's long-lived Python process; they all
open connections through these helpers (never in ``__init__``: Spark pickles readers and
writers), so the calls into :mod:`amqp_jms.client` and :mod:`amqp_jms.mapping` live here only.
"""

from __future__ import annotations

from typing import Any

from ..destination import Destination, Topic
from .options import JmsOptions

__all__ = [
    "decode",
    "decoder",
    "drain",
    "encode",
    "is_connection_loss",
    "open_ack_session",
    "open_connection",
    "open_consumer",
    "raw_bytes",
    "receive_raw",
    "set_message_id_prefix",
    "unreadable_errors",
]


_CONSUMER_PRESETTLE = tuple(
    f"jms.presettlePolicy.{name}"
    for name in ("presettleConsumers", "presettleTopicConsumers", "presettleQueueConsumers")
)
_PRESETTLE_ALL = "jms.presettlePolicy.presettleAll"
_PRESETTLE_PRODUCERS = "jms.presettlePolicy.presettleProducers"


def open_connection(options: JmsOptions, probe: bool = False) -> Any:
    """A started connection to ``options.url`` (with the client ID when one is set); ``probe``:
    the planning-time check (a failover url makes one pass over its servers, see ``failover.py``)."""
    from .. import client
    from .failover import PROBE_OPTIONS, is_failover_url

    # The source drains explicitly when it needs "everything the broker has"; its polls must not
    # each cost a drain round trip (Qpid JMS's default for an empty receive), so: local only.
    extra = {"jms.receiveLocalOnly": "true", "jms.receiveNoWaitLocalOnly": "true"}
    # at least once: no consumer of the connector's is presettled, whatever the url asks
    # (presettleAll keeps its meaning for producers only)
    extra.update(dict.fromkeys(_CONSUMER_PRESETTLE, "false"))
    if probe and is_failover_url(options.url):
        extra.update(PROBE_OPTIONS)
    factory = client.ConnectionFactory(options.url, **extra)
    if factory.config.presettle.presettle_all:
        extra.update({_PRESETTLE_ALL: "false", _PRESETTLE_PRODUCERS: "true"})
        factory = client.ConnectionFactory(options.url, **extra)
    connection = factory.create_connection()
    try:
        if options.client_id:
            connection.set_client_id(options.client_id)
        connection.start()
    except BaseException:
        connection.close()
        raise
    return connection


def open_ack_session(connection: Any) -> Any:
    """The streaming receiver's session: CLIENT_ACKNOWLEDGE, so that ``session.acknowledge()``
    accepts a durable chunk at once (plain dispositions, merged into ranges; no transaction to
    discharge). Its consumers are never presettled: :func:`open_connection` keeps every
    ``jms.presettlePolicy`` off for consumers, since a presettled message is gone from the
    broker before it is in the write-ahead log."""
    from ..client.acknowledgement import CLIENT_ACKNOWLEDGE

    return connection.create_session(False, CLIENT_ACKNOWLEDGE)


def open_consumer(session: Any, options: JmsOptions) -> Any:
    """The consumer a read uses: durable when ``subscription`` is set, selector pushed down."""
    destination: Destination = options.require_destination()
    if options.subscription:
        if not isinstance(destination, Topic):
            raise ValueError("jms data source: 'subscription' needs a topic:// destination")
        if options.num_receivers > 1:  # competing receivers share one durable subscription
            return session.create_shared_durable_consumer(destination, options.subscription, options.selector)
        return session.create_durable_consumer(destination, options.subscription, options.selector)
    return session.create_consumer(destination, options.selector)


def encode(message: Any) -> bytes:
    from .. import mapping

    return bytes(mapping.encode(message))


def decode(data: bytes) -> Any:
    from .. import mapping

    return mapping.decode(bytes(data))


def decoder() -> Any:
    """``decode`` as one function to call per message (``bytes`` in; ``body=False`` for the
    headers and properties only): the executors' hot loop binds it once instead of importing
    per message."""
    from ..mapping import decode as map_decode

    return map_decode


def unreadable_errors() -> tuple[type[BaseException], ...]:
    """What ``decode`` raises for bytes that are not a readable JMS message."""
    from ..exceptions import MessageFormatException

    return (MessageFormatException,)


def raw_bytes(message: Any) -> bytes:
    """The encoded form of a message (re-encoded: for messages not received by :func:`receive_raw`)."""
    return encode(message)


def receive_raw(consumer: Any, timeout_ms: int) -> tuple[Any, bytes] | None:
    """Receive one message and the exact bytes it arrived as (``None`` at the timeout; ``0``: no wait).

    The write-ahead log stores what the broker sent (header and delivery count included, no
    re-encoding cost): the client's ``MessageConsumer.receive_encoded``, vetting each message
    from its headers and properties only (``decode_body=False``: the executors decode the body,
    the driver does not decode it too). A message whose headers the client cannot read as JMS
    (a poison message) never comes out of it: the client settles it ``modified(delivery-failed,
    undeliverable-here)`` with one WARNING and goes on, so it never fails the stream nor reaches
    a segment. A body that does not decode is the executors' to report (:mod:`.columns`).
    """
    if timeout_ms > 0:
        got = consumer.receive_encoded(timeout_ms, decode_body=False)
    else:
        got = consumer.receive_encoded_no_wait(decode_body=False)
    return None if got is None else (got.message, got.data)


def drain(consumer: Any) -> bool:
    """Have the peer send what it holds for the consumer now (``MessageConsumer.drain``); False
    when the peer cannot be asked (old RabbitMQ)."""
    return bool(consumer.drain())


def set_message_id_prefix(producer: Any, prefix: str) -> None:
    """Replay-stable ids ``<prefix>:1``, ``:2`` … (``MessageProducer.set_message_id_prefix``)."""
    producer.set_message_id_prefix(prefix)


def is_connection_loss(exc: BaseException) -> bool:
    """Whether ``exc`` may be a lost connection or an unreachable broker (worth reconnecting),
    rather than something a retry cannot fix (bad credentials, selector, destination, client ID)."""
    from ..exceptions import (
        InvalidClientIDException,
        InvalidDestinationException,
        InvalidSelectorException,
        JMSException,
        JMSSecurityException,
    )

    if isinstance(exc, InvalidClientIDException | InvalidDestinationException | InvalidSelectorException):
        return False
    if isinstance(exc, JMSSecurityException):
        return False
    return isinstance(exc, JMSException | OSError)


def connection_epoch(connection: Any) -> int | None:
    """Which server connection is under ``connection`` now: a number that changes when a
    failover moves it, ``None`` while it has none (between a loss and the reconnect). A plain
    url's connection is one epoch (a loss raises instead). What ``availableNow`` asks before it
    trusts a drain: offline, the client answers a drain at once, with nothing."""
    epoch: int | None = connection.internal.opened_provider().server_epoch()
    return epoch
