"""Connection URL and options, parsed once into frozen value objects.

The option names are Qpid JMS's (``jms.*``, ``amqp.*``, ``transport.*``) so that a URL written
for a Java client works here unchanged where the option applies. Every default lives in this
module; nothing else reads the raw query string. An unknown option, or a value of the wrong
kind, raises ``JMSException`` naming the option: a typo must never be silently ignored.

Durations are milliseconds, as in Qpid JMS; ``-1`` (or any negative number) means "no limit".
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .._links import doc_url
from ..exceptions import JMSException

__all__ = [
    "ConnectionConfig",
    "PrefetchPolicy",
    "PresettlePolicy",
    "RedeliveryPolicy",
    "TransportConfig",
    "keyword_options",
    "parse_url",
    "unknown_option",
]

DEFAULT_PREFETCH = 1000
#: the URL schemes, and the port each means when the URL names none
DEFAULT_PORTS = {"amqp": 5672, "amqps": 5671, "amqpws": 80, "amqpwss": 443}
#: AMQP outcomes a redelivery policy may use for a message over its redelivery limit.
REDELIVERY_OUTCOMES = ("MODIFIED_FAILED_UNDELIVERABLE", "MODIFIED_FAILED", "REJECTED", "RELEASED", "ACCEPTED")


@dataclass(frozen=True, slots=True)
class PrefetchPolicy:
    """Link credit granted to consumers; 0 makes a consumer pull one message per receive."""

    queue_prefetch: int = DEFAULT_PREFETCH
    topic_prefetch: int = DEFAULT_PREFETCH
    queue_browser_prefetch: int = DEFAULT_PREFETCH
    durable_topic_prefetch: int = DEFAULT_PREFETCH

    def for_destination(self, is_topic: bool, durable: bool = False, browser: bool = False) -> int:
        if browser:
            return self.queue_browser_prefetch
        if is_topic:
            return self.durable_topic_prefetch if durable else self.topic_prefetch
        return self.queue_prefetch


@dataclass(frozen=True, slots=True)
class PresettlePolicy:
    """Which links send or receive presettled (at-most-once, no outcome awaited)."""

    presettle_all: bool = False
    presettle_producers: bool = False
    presettle_topic_producers: bool = False
    presettle_queue_producers: bool = False
    presettle_transacted_producers: bool = False
    presettle_consumers: bool = False
    presettle_topic_consumers: bool = False
    presettle_queue_consumers: bool = False

    def producer(self, is_topic: bool, transacted: bool) -> bool:
        if self.presettle_all or self.presettle_producers:
            return True
        if transacted and self.presettle_transacted_producers:
            return True
        return self.presettle_topic_producers if is_topic else self.presettle_queue_producers

    def consumer(self, is_topic: bool) -> bool:
        if self.presettle_all or self.presettle_consumers:
            return True
        return self.presettle_topic_consumers if is_topic else self.presettle_queue_consumers


@dataclass(frozen=True, slots=True)
class RedeliveryPolicy:
    """``max_redeliveries`` < 0 disables the check; over the limit a message gets ``outcome``."""

    max_redeliveries: int = -1
    outcome: str = "MODIFIED_FAILED_UNDELIVERABLE"


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """Socket and TLS settings. The ``*Location`` options name PEM files (not Java key stores)."""

    trust_store_location: str | None = None
    key_store_location: str | None = None
    key_store_password: str | None = None
    key_location: str | None = None
    verify_host: bool = True
    trust_all: bool = False
    tcp_no_delay: bool = True
    #: ``transport.ws.httpHeader.<NAME>=<VALUE>``: headers added to the WebSocket upgrade request
    ws_http_headers: tuple[tuple[str, str], ...] = ()
    #: ``transport.ws.maxFrameSize``: the largest WebSocket frame accepted from the peer
    ws_max_frame_size: int = 65535
    #: an HTTP proxy to tunnel through (``CONNECT``), for TCP and WebSocket alike; None = direct
    proxy_host: str | None = None
    proxy_port: int = 8080
    proxy_username: str | None = None
    proxy_password: str | None = None


@dataclass(frozen=True, slots=True)
class ConnectionConfig:
    """Everything a connection needs, from ``parse_url`` or ``ConnectionFactory`` keywords."""

    scheme: str = "amqp"
    host: str = "localhost"
    port: int = 5672
    #: the HTTP path of a WebSocket URL (``amqpws://host/path``); empty for TCP
    path: str = ""
    client_id: str | None = None
    username: str | None = None
    password: str | None = None
    #: a callable giving a bearer token (str) for XOAUTH2, asked again at every connect and
    #: reconnect (so an expiring OAuth token is fresh each time); the keyword ``token_provider``
    token_provider: Callable[[], str] | None = None
    #: claims-based security (Azure Service Bus): an object with ``get_token(audience)``
    #: (``amqp_jms.cbs``) whose tokens are put to ``$cbs`` before each link; keyword
    #: ``cbs_token_provider``
    cbs_token_provider: Any = None
    prefetch: PrefetchPolicy = field(default_factory=PrefetchPolicy)
    presettle: PresettlePolicy = field(default_factory=PresettlePolicy)
    redelivery: RedeliveryPolicy = field(default_factory=RedeliveryPolicy)
    transport: TransportConfig = field(default_factory=TransportConfig)
    force_async_send: bool = False
    force_sync_send: bool = False
    send_timeout_ms: int = -1
    request_timeout_ms: int = -1
    connect_timeout_ms: int = 15000
    close_timeout_ms: int = 60000
    validate_property_names: bool = True
    local_message_expiry: bool = True
    receive_local_only: bool = False
    receive_no_wait_local_only: bool = False
    #: failover: a producer or consumer the new peer refuses to re-create is closed and the
    #: reconnect goes on (else the reconnect fails and the next server is tried)
    close_links_that_fail_on_reconnect: bool = False
    populate_jmsx_user_id: bool = False
    idle_timeout_ms: int = 60000
    sasl_mechanisms: tuple[str, ...] = ()
    sasl_layer: bool = True
    max_frame_size: int = 1048576
    vhost: str | None = None
    #: follow a redirect from an amqps server to a non-secure amqp one (else it is refused)
    allow_non_secure_redirects: bool = False
    drain_timeout_ms: int = 60000
    anonymous_fallback_cache_size: int = 1
    anonymous_fallback_cache_timeout_ms: int = 30000
    #: address prefixes for queues/topics; ``None`` takes the peer's ``queue-prefix`` /
    #: ``topic-prefix`` Open property, ``""`` means no prefix whatever the peer offers
    queue_prefix: str | None = None
    topic_prefix: str | None = None
    #: log every AMQP frame in and out at DEBUG on ``amqp_jms.frames`` (Qpid JMS's option)
    trace_frames: bool = False
    #: ``"opentelemetry"`` (spans per send and delivery, context in ``x-opt-qpid-tracestate``)
    #: or ``""`` for none; see ``_tracing``
    tracing: str = ""
    #: ``"opentelemetry"`` to export the connection's counters as OpenTelemetry metrics
    metrics: str = ""
    #: how a caller that reads its own answer (a waiting send) waits for it, Qpid JMS's
    #: ``provider.futureType``: ``"conservative"`` sleeps in the kernel until the answer comes;
    #: ``"balanced"`` polls without sleeping for a moment first; ``"progressive"`` polls for up
    #: to a millisecond (a busy CPU for a quicker answer). ``""``: Qpid JMS's choice by the
    #: machine (``default_future_type``)
    future_type: str = ""

    @property
    def answer_spin_seconds(self) -> float:
        """How long a caller reading its own answer polls before it sleeps (``future_type``)."""
        return _SPIN_SECONDS[self.future_type or default_future_type()]

    @property
    def secure(self) -> bool:
        """TLS on the socket: ``amqps`` and ``amqpwss``."""
        return self.scheme in ("amqps", "amqpwss")

    @property
    def websocket(self) -> bool:
        """AMQP inside WebSocket messages: ``amqpws`` and ``amqpwss``."""
        return self.scheme in ("amqpws", "amqpwss")

    @property
    def address(self) -> str:
        """The peer as a URL without options: ``amqpwss://host:443/path``."""
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"

    @staticmethod
    def seconds(ms: int) -> float | None:
        """A millisecond option as a timeout in seconds (``None`` = wait forever)."""
        return None if ms < 0 else ms / 1000.0

    def replace(self, **changes: Any) -> ConnectionConfig:
        return dataclasses.replace(self, **changes)


#: polling before sleeping, by future type: Qpid JMS's balanced future spins and yields about a
#: hundred times before it blocks, its progressive one goes on with the shortest parks for a
#: thousand more; a reader of its own socket polls it that long instead
_SPIN_SECONDS = {"conservative": 0.0, "balanced": 0.00005, "progressive": 0.001}
FUTURE_TYPES = tuple(_SPIN_SECONDS)


def default_future_type() -> str:
    """Qpid JMS's default ``provider.futureType``: conservative with fewer than 4 CPUs for this
    process (polling would take the CPU the peer or the I/O thread needs), balanced on Windows,
    progressive otherwise."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on this platform)
        cpus = os.cpu_count() or 1
    if cpus < 4:
        return "conservative"
    return "balanced" if sys.platform == "win32" else "progressive"


# -- option table ------------------------------------------------------------------------------
def _bool(name: str, v: str) -> bool:
    low = v.strip().lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise JMSException(f"option {name}={v!r}: expected true or false")


def _int(name: str, v: str) -> int:
    try:
        return int(v.strip())
    except ValueError:
        raise JMSException(f"option {name}={v!r}: expected an integer") from None


def _nonneg(name: str, v: str) -> int:
    n = _int(name, v)
    if n < 0:
        raise JMSException(f"option {name}={v!r}: must not be negative")
    return n


def _positive(name: str, v: str) -> int:
    n = _int(name, v)
    if n <= 0:
        raise JMSException(f"option {name}={v!r}: must be greater than 0")
    return n


def _float(name: str, v: str) -> float:
    try:
        return float(v.strip())
    except ValueError:
        raise JMSException(f"option {name}={v!r}: expected a number") from None


def unknown_option(name: str, known: Iterable[str] | None = None) -> JMSException:
    """The one rule for an option nobody understands: refuse it by name (a typo is never ignored),
    with the nearest of the ``known`` names (the connection options by default) and the page
    that lists them all. A Java-only option is refused saying why and what to write instead."""
    why = _JAVA_ONLY.get(name)
    if why is not None:
        return JMSException(f"connection option {name!r} is Java-only: {why} "
                            f"({doc_url('client', 'transport-tls-with-amqps')})")
    names = list(OPTION_NAMES if known is None else known)
    leaf = name.rpartition(".")[2].lower()
    # the right name in the wrong case; the right leaf under a wrong prefix; else the nearest spellings
    near = ([n for n in names if n.lower() == name.lower()]
            or [n for n in names if n.rpartition(".")[2].lower() == leaf]
            or difflib.get_close_matches(name, names, n=3, cutoff=0.6))
    hint = ""
    if near:
        hint = f"; did you mean {near[0]!r}?" if len(near) == 1 else \
            f"; did you mean one of {', '.join(repr(n) for n in near)}?"
    return JMSException(f"unknown connection option {name!r}{hint} "
                        f"(every option: {doc_url('client', 'connection-url')})")


_PEM_TRUST = ("give transport.trustStoreLocation a PEM file of CA certificates (from a JKS or "
              "PKCS#12 trust store: keytool -exportcert -rfc -keystore trust.jks -alias ca -file ca.pem)")
_PEM_KEY = ("give transport.keyStoreLocation a PEM certificate (and transport.keyLocation its PEM key, "
            "transport.keyStorePassword the key's pass phrase); from a key store: "
            "keytool -importkeystore -srckeystore client.jks -destkeystore client.p12 -deststoretype PKCS12, "
            "then openssl pkcs12 -in client.p12 -out client.pem")
_NOT_JAVA = "Python's TLS (OpenSSL) reads PEM files, not Java"
#: Qpid JMS options that only mean something to Java's key store machinery, and what to write here
_JAVA_ONLY: dict[str, str] = {
    "transport.trustStoreType": f"{_NOT_JAVA} trust stores; {_PEM_TRUST}",
    "transport.keyStoreType": f"{_NOT_JAVA} key stores; {_PEM_KEY}",
    "transport.storeType": f"{_NOT_JAVA} stores; {_PEM_TRUST}; {_PEM_KEY}",
    "transport.trustStorePassword": f"a PEM file of CA certificates has no password; {_PEM_TRUST}",
    "transport.keyAlias": f"a PEM certificate file holds the one certificate to present; {_PEM_KEY}",
}
#: file name endings of Java and PKCS#12 stores, which OpenSSL's PEM loading cannot read
_STORE_SUFFIXES = (".jks", ".jceks", ".bks", ".p12", ".pfx", ".pkcs12", ".keystore", ".truststore")


def _pem(name: str, v: str) -> str:
    """A PEM file's path; a Java or PKCS#12 store is refused up front, naming the conversion
    (else OpenSSL fails later at connect with a bare 'PEM lib' error)."""
    if v.strip().lower().endswith(_STORE_SUFFIXES):
        how = _PEM_TRUST if name == "transport.trustStoreLocation" else _PEM_KEY
        raise JMSException(f"option {name}={v!r}: a Java or PKCS#12 key store, but Python's TLS "
                           f"(OpenSSL) reads PEM files: {how} "
                           f"({doc_url('client', 'transport-tls-with-amqps')})")
    return v


def _str(name: str, v: str) -> str:
    return v


def _mechs(name: str, v: str) -> tuple[str, ...]:
    mechs = tuple(m.strip().upper() for m in v.replace(" ", ",").split(",") if m.strip())
    if not mechs:
        raise JMSException(f"option {name}: expected a comma separated list of SASL mechanisms")
    return mechs


#: ``jms.tracing`` values: Qpid JMS's ``opentracing`` (OpenTracing is archived; OpenTelemetry
#: is its successor and the annotation is the same) and ``noop`` are accepted as written
_TRACING = {"": "", "none": "", "noop": "", "opentelemetry": "opentelemetry", "opentracing": "opentelemetry"}


def _tracing(name: str, v: str) -> str:
    kind = _TRACING.get(v.strip().lower())
    if kind is None:
        raise JMSException(f"option {name}={v!r}: expected opentelemetry (or opentracing, the same), "
                           "noop or none")
    return kind


def _future_type(name: str, v: str) -> str:
    low = v.strip().lower()
    if low not in _SPIN_SECONDS:
        raise JMSException(f"option {name}={v!r}: no ProviderFuture implementation with that name "
                           f"(expected {', '.join(FUTURE_TYPES)})")
    return low


def _metrics(name: str, v: str) -> str:
    low = v.strip().lower()
    if low not in ("", "none", "opentelemetry"):
        raise JMSException(f"option {name}={v!r}: expected opentelemetry or none")
    return "" if low == "none" else low


def _outcome(name: str, v: str) -> str:
    up = v.strip().upper()
    if up not in REDELIVERY_OUTCOMES:
        raise JMSException(f"option {name}={v!r}: expected one of {', '.join(REDELIVERY_OUTCOMES)}")
    return up


# option name -> (group or None, field, converter). Groups: prefetch, presettle, redelivery,
# transport; None = a ConnectionConfig field. "jms.prefetchPolicy.all" is special-cased.
_Conv = Callable[[str, str], Any]
_OPTIONS: dict[str, tuple[str | None, str, _Conv]] = {
    "jms.clientID": (None, "client_id", _str),
    "jms.username": (None, "username", _str),
    "jms.password": (None, "password", _str),
    "jms.forceAsyncSend": (None, "force_async_send", _bool),
    "jms.forceSyncSend": (None, "force_sync_send", _bool),
    "jms.sendTimeout": (None, "send_timeout_ms", _int),
    "jms.requestTimeout": (None, "request_timeout_ms", _int),
    "jms.connectTimeout": (None, "connect_timeout_ms", _int),
    "jms.closeTimeout": (None, "close_timeout_ms", _int),
    "jms.validatePropertyNames": (None, "validate_property_names", _bool),
    "jms.localMessageExpiry": (None, "local_message_expiry", _bool),
    "jms.receiveLocalOnly": (None, "receive_local_only", _bool),
    "jms.receiveNoWaitLocalOnly": (None, "receive_no_wait_local_only", _bool),
    "jms.closeLinksThatFailOnReconnect": (None, "close_links_that_fail_on_reconnect", _bool),
    "jms.populateJMSXUserID": (None, "populate_jmsx_user_id", _bool),
    "jms.queuePrefix": (None, "queue_prefix", _str),
    "jms.topicPrefix": (None, "topic_prefix", _str),
    "jms.tracing": (None, "tracing", _tracing),
    "jms.metrics": (None, "metrics", _metrics),
    "amqp.traceFrames": (None, "trace_frames", _bool),
    "provider.futureType": (None, "future_type", _future_type),
    "jms.prefetchPolicy.queuePrefetch": ("prefetch", "queue_prefetch", _nonneg),
    "jms.prefetchPolicy.topicPrefetch": ("prefetch", "topic_prefetch", _nonneg),
    "jms.prefetchPolicy.queueBrowserPrefetch": ("prefetch", "queue_browser_prefetch", _nonneg),
    "jms.prefetchPolicy.durableTopicPrefetch": ("prefetch", "durable_topic_prefetch", _nonneg),
    "jms.presettlePolicy.presettleAll": ("presettle", "presettle_all", _bool),
    "jms.presettlePolicy.presettleProducers": ("presettle", "presettle_producers", _bool),
    "jms.presettlePolicy.presettleTopicProducers": ("presettle", "presettle_topic_producers", _bool),
    "jms.presettlePolicy.presettleQueueProducers": ("presettle", "presettle_queue_producers", _bool),
    "jms.presettlePolicy.presettleTransactedProducers": (
        "presettle",
        "presettle_transacted_producers",
        _bool,
    ),
    "jms.presettlePolicy.presettleConsumers": ("presettle", "presettle_consumers", _bool),
    "jms.presettlePolicy.presettleTopicConsumers": ("presettle", "presettle_topic_consumers", _bool),
    "jms.presettlePolicy.presettleQueueConsumers": ("presettle", "presettle_queue_consumers", _bool),
    "jms.redeliveryPolicy.maxRedeliveries": ("redelivery", "max_redeliveries", _int),
    "jms.redeliveryPolicy.outcome": ("redelivery", "outcome", _outcome),
    "amqp.idleTimeout": (None, "idle_timeout_ms", _nonneg),
    "amqp.saslMechanisms": (None, "sasl_mechanisms", _mechs),
    "amqp.saslLayer": (None, "sasl_layer", _bool),
    "amqp.maxFrameSize": (None, "max_frame_size", _nonneg),
    "amqp.vhost": (None, "vhost", _str),
    "amqp.allowNonSecureRedirects": (None, "allow_non_secure_redirects", _bool),
    "amqp.drainTimeout": (None, "drain_timeout_ms", _int),
    "amqp.anonymousFallbackCacheSize": (None, "anonymous_fallback_cache_size", _nonneg),
    "amqp.anonymousFallbackCacheTimeout": (None, "anonymous_fallback_cache_timeout_ms", _int),
    "transport.trustStoreLocation": ("transport", "trust_store_location", _pem),
    "transport.keyStoreLocation": ("transport", "key_store_location", _pem),
    "transport.keyStorePassword": ("transport", "key_store_password", _str),
    "transport.keyLocation": ("transport", "key_location", _pem),
    "transport.verifyHost": ("transport", "verify_host", _bool),
    "transport.trustAll": ("transport", "trust_all", _bool),
    "transport.tcpNoDelay": ("transport", "tcp_no_delay", _bool),
    "transport.ws.maxFrameSize": ("transport", "ws_max_frame_size", _positive),
    "transport.proxyHost": ("transport", "proxy_host", _str),
    "transport.proxyPort": ("transport", "proxy_port", _positive),
    "transport.proxyUsername": ("transport", "proxy_username", _str),
    "transport.proxyPassword": ("transport", "proxy_password", _str),
}
#: ``transport.ws.httpHeader.<NAME>=<VALUE>``: one option per header (Qpid JMS's form)
_WS_HEADER = "transport.ws.httpHeader."
_PREFETCH_ALL = "jms.prefetchPolicy.all"
#: every option name understood, for docs and error messages
OPTION_NAMES: tuple[str, ...] = (_PREFETCH_ALL, *_OPTIONS)


def _apply(base: ConnectionConfig, options: Mapping[str, str]) -> ConnectionConfig:
    top: dict[str, Any] = {}
    groups: dict[str, dict[str, Any]] = {"prefetch": {}, "presettle": {}, "redelivery": {}, "transport": {}}
    for name, raw in options.items():
        if name == _PREFETCH_ALL:
            n = _nonneg(name, raw)
            groups["prefetch"].update(
                queue_prefetch=n, topic_prefetch=n, queue_browser_prefetch=n, durable_topic_prefetch=n
            )
            continue
        if name.startswith(_WS_HEADER) and len(name) > len(_WS_HEADER):
            header = (name[len(_WS_HEADER):], raw)
            groups["transport"]["ws_http_headers"] = (
                *groups["transport"].get("ws_http_headers", base.transport.ws_http_headers), header)
            continue
        spec = _OPTIONS.get(name)
        if spec is None:
            raise unknown_option(name)
        group, fname, conv = spec
        value = conv(name, raw)
        (top if group is None else groups[group])[fname] = value
    for g, changes in groups.items():
        if changes:
            top[g] = dataclasses.replace(getattr(base, g), **changes)
    return dataclasses.replace(base, **top) if top else base


def parse_url(url: str, **options: Any) -> ConnectionConfig:
    """``amqp[s]://[user:pass@]host[:port][?option=value&...]`` plus keyword overrides;
    ``amqpws[s]://host[:port][/path][?...]`` for AMQP over WebSocket (default ports 80 and 443,
    the HTTP ones a WebSocket URL means).

    Keyword ``options`` use the same names as the query (``**{"jms.clientID": "a"}``) or the
    short forms ``client_id``, ``username``, ``password``; they win over the URL.
    """
    if not isinstance(url, str):
        raise TypeError("connection URL must be a str")
    token_provider = callable_option(options, "token_provider")
    cbs_token_provider = token_source_option(options)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise JMSException(f"unsupported URL scheme {parts.scheme!r} in {url!r}: "
                           "use amqp://, amqps://, amqpws:// or amqpwss://")
    try:
        port = parts.port
    except ValueError:
        raise JMSException(f"invalid port in connection URL {url!r}") from None
    websocket = scheme in ("amqpws", "amqpwss")
    if parts.path not in ("", "/") and not websocket:
        raise JMSException(f"connection URL {url!r} must not have a path (only a WebSocket URL has one)")
    base = ConnectionConfig(
        scheme=scheme,
        host=parts.hostname or "localhost",
        port=port if port is not None else DEFAULT_PORTS[scheme],
        path=(parts.path or "/") if websocket else "",
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
        token_provider=token_provider,
        cbs_token_provider=cbs_token_provider,
    )
    query: dict[str, str] = {}
    for k, v in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        query[k] = v
    query.update(keyword_options(options))
    return _apply(base, query)


def callable_option(options: dict[str, Any], name: str) -> Any:
    """Take keyword ``name`` out of ``options``: a callable (or ``None``), never a URL option."""
    value = options.pop(name, None)
    if value is not None and not callable(value):
        raise JMSException(f"option {name}: expected a callable, got {type(value).__name__}")
    return value


def token_source_option(options: dict[str, Any]) -> Any:
    """Take keyword ``cbs_token_provider`` out of ``options``: an object with ``get_token``."""
    value = options.pop("cbs_token_provider", None)
    if value is not None and not callable(getattr(value, "get_token", None)):
        raise JMSException("option cbs_token_provider: expected an object with get_token(audience) "
                           f"(amqp_jms.cbs.SasTokenProvider, for one), got {type(value).__name__}")
    return value


_ALIASES = {"client_id": "jms.clientID", "username": "jms.username", "password": "jms.password"}


def keyword_options(options: Mapping[str, Any]) -> dict[str, str]:
    """Keyword options as URL options: short forms expanded, booleans as ``true``/``false``,
    ``None`` values dropped (so a caller can pass "not given" through)."""
    return {
        _ALIASES.get(k, k): str(v).lower() if isinstance(v, bool) else str(v)
        for k, v in options.items()
        if v is not None
    }
