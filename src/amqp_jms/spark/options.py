"""Options of the ``jms`` data source, parsed once into a frozen value object.

Spark hands a data source its options as a case-insensitive dict of strings (keys arrive
lower-cased). Everything the source, the readers and the writers need is parsed here, with
defaults in one place, so that a typo fails the query at planning time with a message naming
the option instead of being silently ignored:

=========================  ==========  ==============================================================
option                     default     meaning
=========================  ==========  ==============================================================
``url``                    (required)  the broker, ``amqp://host:port`` or ``amqps://…``, or
                                       ``failover:(amqp://a,amqp://b)?failover.*`` (see ``failover.py``)
``jms.*`` ``amqp.*``       —           any client URL option (``jms.prefetchPolicy.all`` …), appended
``transport.*``                        to the URL's query string exactly as the client documents them
``failover.*``                         (with a failover url: ``amqp.*``/``transport.*`` for every server)
``destination``            (required)  ``queue://name`` or ``topic://name`` (a bare name is a queue)
``selector``               none        JMS message selector, pushed to the broker as the consumer's
``subscription``           none        durable subscription name (topics; needs ``clientId``)
``clientId``               none        JMS client ID of the connection
``mode``                   ``browse``  batch reads: ``browse`` (QueueBrowser, consumes nothing);
                                       ``consume`` is refused when planned (no commit hook: stream it)
``maxMessages``            unlimited   batch reads: stop after this many messages
``partitionColumn``        none        browse reads: split into ``numPartitions`` disjoint selector
``lowerBound``                         ranges of this numeric column (``priority``, ``timestamp``,
``upperBound``                         ``delivery_count``) or message property, as Spark's JDBC
``numPartitions``                      source does (all four together; see ``partitioning.py``)
``timeoutMs``              ``1000``    accepted for compatibility; only consuming batch reads used it
``maxMessagesPerTrigger``  unlimited   streaming reads: the default ``ReadMaxRows`` limit
                                       (``maxOffsetsPerTrigger``, Kafka's name, is an alias)
``pollMs``                 ``200``     streaming reads: how long one trigger waits for a message
``walPath``                see below   streaming reads: the write-ahead log, an absolute path or a
                                       URI (``s3://``, ``gs://``, ``hdfs://``, ``abfs://``, ``file://``)
``reconnectTimeoutMs``     ``300000``  streaming reads: how long the receiver keeps reconnecting to a
                                       lost broker before the query fails (not with a failover url)
``minOffsetsPerTrigger``   none        streaming reads: fewer messages make no batch until
                                       ``maxTriggerDelay`` (default ``15m``) passed since the last one
``failOnDataLoss``         ``true``    streaming reads: a planned segment that vanished fails the
                                       query (``false``: skipped with a warning)
``segmentMessages``        ``5000``    streaming reads: messages per write-ahead segment (one task each);
                                       a full segment holds exactly this many
``maxBufferedMessages``    see below   streaming reads: received-ahead messages not yet in a batch, at most
``reportBacklog``          ``false``   streaming reads: ask the broker's management node for the queue's
                                       depth each trigger (a progress figure; ``backlog.py``)
``numReceivers``           ``1``       streaming reads: competing consumers, each its own process on the
                                       driver with its own connection and log segments (see docs/spark.md)
``bodyAs``                 ``binary``  ``binary`` or ``string``: the type of the ``body`` column
``includeAmqp``            ``false``   add the ``amqp`` column (the raw encoded message)
``typedPropertiesAs``      ``json``    reads: ``typed_properties`` as typed JSON (STRING) or as a
                                       ``variant`` (Spark 4 VARIANT, JMS types kept; ``variant.py``)
``deliveryMode``           ``2``       writes: default delivery mode (1, 2, ``PERSISTENT``,
                                       ``NON_PERSISTENT``) where a row has no ``delivery_mode``
``priority``               ``4``       writes: default priority (0–9)
``timeToLive``             ``0``       writes: time to live in ms (0 = never expires)
``messageType``            inferred    writes: force ``Text``, ``Bytes``, ``Map`` or ``Message``
=========================  ==========  ==============================================================

``maxBufferedMessages`` (default 100 000, or twice ``maxMessagesPerTrigger`` if that is more)
bounds what the background receiver takes from the broker ahead of Spark: received messages not
yet in a planned batch (on disk in the write-ahead log; at most one segment of them in memory).

``walPath`` defaults to ``<root>/jms-wal/<digest of url, destination, selector, subscription>``
when ``spark.sql.streaming.checkpointLocation`` names a checkpoint root in the session that
called ``register(spark)``; otherwise a streaming read must name it. (The query's own
``checkpointLocation`` would be the better home, but PySpark hands a Python source only its
``readStream`` options: the reader never sees it.)

Spark itself adds ``path`` (from ``load(path)``/``save(path)``), which is accepted as an alias of
``destination``, and ``checkpointLocation``/``queryName`` for streaming sinks, which are ignored.
Any other key raises ``ValueError`` naming the option and the allowed names (Java's
``IllegalArgumentException``), which Spark reports as the query's error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..destination import Destination, Queue, Topic, parse_destination
from ..exceptions import InvalidDestinationException
from ..provider.failover.uri import parse_failover_url, with_client_options
from .partitioning import BrowsePartitioning

__all__ = [
    "BODY_AS",
    "CLIENT_OPTION_NAMES",
    "MESSAGE_TYPES",
    "MODES",
    "TYPED_AS",
    "JmsOptions",
    "parse_options",
]

MODES = ("browse", "consume")
BODY_AS = ("binary", "string")
TYPED_AS = ("json", "variant")
MESSAGE_TYPES = ("Text", "Bytes", "Map", "Stream", "Message")

#: Client URL options in their documented spelling: Spark lower-cases option keys, the client's
#: URL parser is case-sensitive, so the spelling is restored from this table.
CLIENT_OPTION_NAMES = (
    "jms.clientID",
    "jms.username",
    "jms.password",
    "jms.prefetchPolicy.all",
    "jms.prefetchPolicy.queuePrefetch",
    "jms.prefetchPolicy.topicPrefetch",
    "jms.prefetchPolicy.queueBrowserPrefetch",
    "jms.prefetchPolicy.durableTopicPrefetch",
    "jms.presettlePolicy.presettleAll",
    "jms.presettlePolicy.presettleProducers",
    "jms.presettlePolicy.presettleConsumers",
    "jms.presettlePolicy.presettleTransactedProducers",
    "jms.redeliveryPolicy.maxRedeliveries",
    "jms.forceAsyncSend",
    "jms.forceSyncSend",
    "jms.sendTimeout",
    "jms.requestTimeout",
    "jms.connectTimeout",
    "jms.closeTimeout",
    "jms.validatePropertyNames",
    "jms.localMessageExpiry",
    "amqp.idleTimeout",
    "amqp.saslMechanisms",
    "amqp.maxFrameSize",
    "amqp.vhost",
    "amqp.drainTimeout",
    "amqp.anonymousFallbackCacheSize",
    "amqp.anonymousFallbackCacheTimeout",
    "transport.trustStoreLocation",
    "transport.keyStoreLocation",
    "transport.verifyHost",
    "provider.futureType",
)
_CLIENT_BY_LOWER = {name.lower(): name for name in CLIENT_OPTION_NAMES}
_CLIENT_PREFIXES = ("jms.", "amqp.", "transport.", "failover.", "provider.")

_KNOWN = (
    "url",
    "destination",
    "path",
    "selector",
    "subscription",
    "clientId",
    "mode",
    "maxMessages",
    "partitionColumn",
    "lowerBound",
    "upperBound",
    "numPartitions",
    "timeoutMs",
    "maxMessagesPerTrigger",
    "maxOffsetsPerTrigger",
    "pollMs",
    "walPath",
    "failOnDataLoss",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "reconnectTimeoutMs",
    "segmentMessages",
    "maxBufferedMessages",
    "numReceivers",
    "reportBacklog",
    "bodyAs",
    "includeAmqp",
    "typedPropertiesAs",
    "deliveryMode",
    "priority",
    "timeToLive",
    "messageType",
)
_KNOWN_BY_LOWER = {name.lower(): name for name in _KNOWN}
#: Options Spark itself puts in a sink's option map (``writeStream`` passes the checkpoint).
_SPARK_OWN = frozenset({"checkpointlocation", "queryname"})


@dataclass(frozen=True)
class JmsOptions:
    """The parsed options; picklable, so readers and writers carry it to executors."""

    url: str
    destination: Destination | None = None
    selector: str | None = None
    subscription: str | None = None
    client_id: str | None = None
    mode: str = "browse"
    max_messages: int | None = None
    partitioning: BrowsePartitioning | None = None
    timeout_ms: int = 1000
    max_messages_per_trigger: int | None = None
    poll_ms: int = 200
    wal_path: str | None = None
    fail_on_data_loss: bool = True
    min_messages_per_trigger: int | None = None
    max_trigger_delay_ms: int = 900_000
    reconnect_timeout_ms: int = 300_000
    #: 5000: what a full chunk of the former 10000 made when it was always written as two halves
    segment_messages: int = 5000
    max_buffered_messages: int | None = None
    num_receivers: int = 1
    report_backlog: bool = False
    body_as: str = "binary"
    include_amqp: bool = False
    typed_properties_as: str = "json"
    delivery_mode: int = 2
    priority: int = 4
    time_to_live: int = 0
    message_type: str | None = None

    def require_destination(self) -> Destination:
        """The destination, or a clear error if the option was not given."""
        if self.destination is None:
            raise ValueError("jms data source: option 'destination' is required (queue://… or topic://…)")
        return self.destination

    def require_wal_path(self) -> str:
        if not self.wal_path:
            raise ValueError(
                "jms data source: streaming reads need option 'walPath', the write-ahead log every "
                "executor can read (an absolute path on a shared filesystem, or s3://…, gs://…, "
                "hdfs://…, abfs://…); or set spark.sql.streaming.checkpointLocation before "
                "register(spark) for a default under it"
            )
        return self.wal_path

    def with_default_wal_path(self, checkpoint_root: str | None) -> JmsOptions:
        """These options with ``walPath`` defaulted under ``checkpoint_root`` (when given and no
        ``walPath`` was): one directory per source, named by a digest of what it reads."""
        if self.wal_path or not checkpoint_root:
            return self
        import hashlib

        key = "\0".join(
            str(part or "")
            for part in (
                urlsplit(self.url)._replace(query="").geturl(),
                self.destination,
                self.selector,
                self.subscription,
            )
        )
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        return self.with_(wal_path=checkpoint_root.rstrip("/") + "/jms-wal/" + digest)

    def with_(self, **changes: object) -> JmsOptions:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def _int(name: str, text: str, lo: int, hi: int | None = None) -> int:
    try:
        value = int(text.strip())
    except (TypeError, ValueError):
        raise ValueError(f"jms data source: option {name!r} must be an integer, got {text!r}") from None
    if value < lo or (hi is not None and value > hi):
        bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"jms data source: option {name!r} must be {bound}, got {value}")
    return value


def _bool(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ValueError(f"jms data source: option {name!r} must be true or false, got {text!r}")


def _choice(name: str, text: str, choices: tuple[str, ...]) -> str:
    for choice in choices:
        if text.strip().lower() == choice.lower():
            return choice
    raise ValueError(f"jms data source: option {name!r} must be one of {', '.join(choices)}; got {text!r}")


def _delivery_mode(text: str) -> int:
    lowered = text.strip().upper()
    if lowered in ("PERSISTENT", "2"):
        return 2
    if lowered in ("NON_PERSISTENT", "1"):
        return 1
    raise ValueError(
        f"jms data source: option 'deliveryMode' must be PERSISTENT (2) or NON_PERSISTENT (1), got {text!r}"
    )


def _destination(text: str) -> Destination:
    try:
        dest = parse_destination(text.strip())
    except InvalidDestinationException as exc:
        raise ValueError(f"jms data source: option 'destination': {exc}") from None
    if not isinstance(dest, Queue | Topic) or dest.is_temporary:
        raise ValueError(
            f"jms data source: option 'destination' must be queue://… or topic://…, got {text!r}"
        )
    return dest


_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}


def _duration_ms(name: str, text: str) -> int:
    """Kafka's ``maxTriggerDelay`` spelling: ``15m``, ``30s``, ``500ms`` (a bare number is ms)."""
    import re

    match = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|min|h)?\s*", text)
    if not match:
        raise ValueError(
            f"jms data source: option {name!r} must be a duration like 30s, 15m, 500ms; got {text!r}"
        )
    return int(match.group(1)) * _UNITS_MS[match.group(2) or "ms"]


def _selector(text: str) -> str:
    """The selector, checked here (planning time) rather than at the broker inside a task."""
    from ..exceptions import InvalidSelectorException
    from ..selector import Selector

    try:
        Selector(text)
    except InvalidSelectorException as exc:
        raise ValueError(f"jms data source: option 'selector' is not a valid JMS selector: {exc}") from None
    return text


def _client_option_name(lower: str, key: str) -> str:
    """A client option's documented spelling (``failover.nested.<client option>`` too)."""
    from .failover import FAILOVER_OPTION_NAMES

    nested = "failover.nested."
    if lower.startswith(nested):
        return nested + _CLIENT_BY_LOWER.get(lower[len(nested) :], key[len(nested) :])
    by_lower = {name.lower(): name for name in FAILOVER_OPTION_NAMES}
    return _CLIENT_BY_LOWER.get(lower) or by_lower.get(lower, key)


def _failover_url(url: str, client: list[tuple[str, str]], values: Mapping[str, str]) -> str:
    """A ``failover:`` url with the client options appended, checked now (planning time). The
    failover provider owns reconnecting, so the receiver's own ``reconnectTimeoutMs`` is refused
    (``failover.maxReconnectAttempts`` and the ``failover.*`` delays bound it instead)."""
    from ..exceptions import JMSException

    if "reconnectTimeoutMs" in values:
        raise ValueError(
            "jms data source: option 'reconnectTimeoutMs' does not apply to a failover: url (the "
            "failover provider reconnects): bound it with failover.maxReconnectAttempts and "
            "failover.maxReconnectDelay instead"
        )
    if client:
        url = with_client_options(url, client)
    try:
        parse_failover_url(url)
    except JMSException as exc:
        raise ValueError(f"jms data source: option 'url': {exc}") from None
    return url


_PARTITION_OPTIONS = ("partitionColumn", "lowerBound", "upperBound", "numPartitions")


def _partitioning(values: Mapping[str, str]) -> BrowsePartitioning | None:
    """``partitionColumn``/``lowerBound``/``upperBound``/``numPartitions``: all four or none,
    as Spark's JDBC source has them."""
    from .partitioning import identifier_for, parse_bound

    given = [name for name in _PARTITION_OPTIONS if values.get(name, "").strip()]
    if not given:
        return None
    if len(given) != len(_PARTITION_OPTIONS):
        missing = [name for name in _PARTITION_OPTIONS if name not in given]
        raise ValueError(
            "jms data source: options partitionColumn, lowerBound, upperBound and numPartitions go "
            f"together (as in Spark's JDBC source); missing {', '.join(missing)}"
        )
    if "maxMessages" in values:
        raise ValueError(
            "jms data source: option 'maxMessages' limits one browse, and numPartitions makes "
            "several: use .limit(n) on the DataFrame instead"
        )
    column = values["partitionColumn"].strip()
    lower = parse_bound(column, "lowerBound", values["lowerBound"])
    upper = parse_bound(column, "upperBound", values["upperBound"])
    count = _int("numPartitions", values["numPartitions"], 1, 1024)
    if count > 1 and lower >= upper:
        raise ValueError(
            f"jms data source: option 'lowerBound' ({lower}) must be less than 'upperBound' ({upper})"
        )
    return BrowsePartitioning(column, identifier_for(column), lower, upper, count)


def parse_options(options: Mapping[str, str]) -> JmsOptions:
    """Parse Spark's option dict; raise ``ValueError`` naming any unknown or malformed option."""
    values: dict[str, str] = {}
    client: list[tuple[str, str]] = []
    for key, raw in options.items():
        value = "" if raw is None else str(raw)
        lower = key.lower()
        if lower in _SPARK_OWN:
            continue
        if lower in _KNOWN_BY_LOWER:
            values[_KNOWN_BY_LOWER[lower]] = value
        elif lower.startswith(_CLIENT_PREFIXES):
            client.append((_client_option_name(lower, key), value))
        else:
            raise ValueError(
                f"jms data source: unknown option {key!r}; known options are "
                + ", ".join(_KNOWN)
                + " and client URL options (jms.*, amqp.*, transport.*, provider.*)"
            )
    url = values.get("url", "").strip()
    if not url:
        raise ValueError("jms data source: option 'url' is required (amqp://host:port)")
    parts = urlsplit(url)
    if parts.scheme == "failover":
        url = _failover_url(url, client, values)
    elif parts.scheme not in ("amqp", "amqps"):
        raise ValueError(
            f"jms data source: option 'url' must start with amqp://, amqps:// or failover:, got {url!r}"
        )
    elif any(name.startswith("failover.") for name, _ in client):
        raise ValueError("jms data source: failover.* options need a failover:(amqp://…,amqp://…) url")
    elif client:
        url = with_client_options(url, client)
    dest_text = values.get("destination") or values.get("path")
    kwargs: dict[str, object] = {"url": url}
    if dest_text:
        kwargs["destination"] = _destination(dest_text)
    if values.get("selector", "").strip():
        kwargs["selector"] = _selector(values["selector"])
    if values.get("subscription", "").strip():
        kwargs["subscription"] = values["subscription"].strip()
    if values.get("clientId", "").strip():
        kwargs["client_id"] = values["clientId"].strip()
    if "mode" in values:
        kwargs["mode"] = _choice("mode", values["mode"], MODES)
    if "maxMessages" in values:
        kwargs["max_messages"] = _int("maxMessages", values["maxMessages"], 1)
    partitioning = _partitioning(values)
    if partitioning is not None:
        kwargs["partitioning"] = partitioning
    if "timeoutMs" in values:
        kwargs["timeout_ms"] = _int("timeoutMs", values["timeoutMs"], 0)
    if "maxMessagesPerTrigger" in values and "maxOffsetsPerTrigger" in values:
        raise ValueError(
            "jms data source: options 'maxMessagesPerTrigger' and 'maxOffsetsPerTrigger' are "
            "aliases; give one"
        )
    for name in ("maxMessagesPerTrigger", "maxOffsetsPerTrigger"):
        if name in values:
            kwargs["max_messages_per_trigger"] = _int(name, values[name], 1)
    if "reconnectTimeoutMs" in values:
        kwargs["reconnect_timeout_ms"] = _int("reconnectTimeoutMs", values["reconnectTimeoutMs"], 0)
    if "minOffsetsPerTrigger" in values:
        kwargs["min_messages_per_trigger"] = _int("minOffsetsPerTrigger", values["minOffsetsPerTrigger"], 1)
    if "maxTriggerDelay" in values:
        kwargs["max_trigger_delay_ms"] = _duration_ms("maxTriggerDelay", values["maxTriggerDelay"])
    if "failOnDataLoss" in values:
        kwargs["fail_on_data_loss"] = _bool("failOnDataLoss", values["failOnDataLoss"])
    if "pollMs" in values:
        kwargs["poll_ms"] = _int("pollMs", values["pollMs"], 0)
    if values.get("walPath", "").strip():
        from .wal import check_wal_path

        kwargs["wal_path"] = check_wal_path(values["walPath"])
    if "segmentMessages" in values:
        kwargs["segment_messages"] = _int("segmentMessages", values["segmentMessages"], 1)
    if "maxBufferedMessages" in values:
        kwargs["max_buffered_messages"] = _int("maxBufferedMessages", values["maxBufferedMessages"], 1)
    if "numReceivers" in values:
        kwargs["num_receivers"] = _int("numReceivers", values["numReceivers"], 1, 64)
    if "reportBacklog" in values:
        kwargs["report_backlog"] = _bool("reportBacklog", values["reportBacklog"])
    if "bodyAs" in values:
        kwargs["body_as"] = _choice("bodyAs", values["bodyAs"], BODY_AS)
    if "includeAmqp" in values:
        kwargs["include_amqp"] = _bool("includeAmqp", values["includeAmqp"])
    if "typedPropertiesAs" in values:
        kwargs["typed_properties_as"] = _choice("typedPropertiesAs", values["typedPropertiesAs"], TYPED_AS)
    if "deliveryMode" in values:
        kwargs["delivery_mode"] = _delivery_mode(values["deliveryMode"])
    if "priority" in values:
        kwargs["priority"] = _int("priority", values["priority"], 0, 9)
    if "timeToLive" in values:
        kwargs["time_to_live"] = _int("timeToLive", values["timeToLive"], 0)
    if values.get("messageType", "").strip():
        kwargs["message_type"] = _choice("messageType", values["messageType"], MESSAGE_TYPES)
    opts = JmsOptions(**kwargs)  # type: ignore[arg-type]
    if opts.subscription and isinstance(opts.destination, Queue):
        raise ValueError("jms data source: option 'subscription' only applies to topic:// destinations")
    if opts.num_receivers > 1 and opts.client_id:
        raise ValueError(
            "jms data source: numReceivers > 1 opens one connection per receiver, and a clientId "
            "can be used by one connection only: leave clientId out (a topic's subscription is "
            "then a shared one)"
        )
    if (
        opts.num_receivers > 1
        and opts.destination is not None
        and opts.destination.is_topic
        and not opts.subscription
    ):
        raise ValueError(
            "jms data source: numReceivers > 1 on a topic needs a 'subscription' (the receivers "
            "share it, each taking part of the messages); without one each would get every message"
        )
    return opts
