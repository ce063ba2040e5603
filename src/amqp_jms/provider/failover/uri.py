"""``failover:(uri,uri,...)?options`` parsed once into a frozen value object (Qpid JMS's syntax).

A failover URL names the servers to try and how to try them::

    failover:(amqp://a:5672,amqps://b:5671?transport.verifyHost=false)
        ?failover.maxReconnectAttempts=20&failover.nested.amqp.idleTimeout=30000&jms.clientID=app

Where each option goes (as in Qpid JMS's ``JmsConnectionFactory`` and ``FailoverProviderFactory``):

* ``failover.<name>``: how to reconnect (:class:`ReconnectPolicy`; Qpid JMS's names and defaults);
* ``failover.nested.<option>``: applied to every server URI, over that URI's own value;
* ``jms.<option>``: the connection's options, the same for every server;
* ``provider.futureType``: how a waiting call waits, the same for every server;
* a server URI's own query: ``amqp.*`` and ``transport.*`` for that server only.

Every server becomes a full :class:`~amqp_jms.provider.config.ConnectionConfig` through
:func:`~amqp_jms.provider.config.parse_url`, so each option has one parser and one default. An
option nobody understands is refused by the same rule as a plain URL's
(:func:`~amqp_jms.provider.config.unknown_option`). Qpid JMS silently ignores an unknown
top-level option on a failover URI; we refuse it, as we do everywhere.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...exceptions import JMSException
from ..config import OPTION_NAMES as CONNECTION_OPTION_NAMES
from ..config import (
    ConnectionConfig,
    _bool,
    _float,
    _int,
    _nonneg,
    callable_option,
    keyword_options,
    parse_url,
    token_source_option,
    unknown_option,
)

__all__ = [
    "FailoverConfig",
    "ReconnectPolicy",
    "ServerListAction",
    "is_failover_url",
    "parse_failover_url",
    "with_client_options",
]

SCHEME = "failover"
FAILOVER_PREFIX = "failover."
NESTED_PREFIX = "failover.nested."
CONNECTION_PREFIX = "jms."
#: how the client waits (``provider.futureType``): Qpid JMS's failover factory takes it from the
#: failover URL itself, for the connection as a whole
PROVIDER_PREFIX = "provider."

#: ``maxReconnectAttempts`` value meaning "never give up"; ``startupMaxReconnectAttempts``
#: value meaning "use maxReconnectAttempts" (Qpid JMS's UNLIMITED and UNDEFINED, both -1)
UNLIMITED = -1
UNDEFINED = -1


class ServerListAction(enum.Enum):
    """What a peer's Open ``failover-server-list`` does to the list of servers to try."""

    REPLACE = "REPLACE"  # the connected server, then the peer's list (the default)
    ADD = "ADD"  # the peer's servers appended to ours
    IGNORE = "IGNORE"  # the list is not used


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    """The ``failover.*`` options: Qpid JMS's FailoverProvider defaults. Durations in ms."""

    initial_reconnect_delay_ms: int = 0
    reconnect_delay_ms: int = 10
    max_reconnect_delay_ms: int = 30000
    use_reconnect_back_off: bool = True
    reconnect_back_off_multiplier: float = 2.0
    #: passes over the server list before giving up; -1 = never
    max_reconnect_attempts: int = UNLIMITED
    #: the limit before the first successful connect; -1 = ``max_reconnect_attempts``
    startup_max_reconnect_attempts: int = UNDEFINED
    #: log a warning every this many failed passes; 0 or less = never
    warn_after_reconnect_attempts: int = 10
    #: shuffle the server list at start and after every successful connect
    randomize: bool = False
    amqp_open_server_list_action: ServerListAction = ServerListAction.REPLACE


@dataclass(frozen=True, slots=True)
class FailoverConfig:
    """A parsed failover URL: the servers (each a complete config) and the reconnect policy."""

    servers: tuple[ConnectionConfig, ...]
    reconnect: ReconnectPolicy = field(default_factory=ReconnectPolicy)
    #: the ``failover.nested.*`` options, prefix removed, in URL order
    nested_options: tuple[tuple[str, str], ...] = ()
    #: the ``jms.*`` options, in URL order
    connection_options: tuple[tuple[str, str], ...] = ()


# -- option table ------------------------------------------------------------------------------
def _attempts(name: str, v: str) -> int:
    n = _int(name, v)
    if n < -1:
        raise JMSException(f"option {name}={v!r}: expected -1 (no limit) or a count")
    return n


def _multiplier(name: str, v: str) -> float:
    x = _float(name, v)
    if not x > 0:
        raise JMSException(f"option {name}={v!r}: must be greater than 0")
    return x


def _action(name: str, v: str) -> ServerListAction:
    try:
        return ServerListAction[v.strip().upper()]
    except KeyError:
        choices = ", ".join(a.value for a in ServerListAction)
        raise JMSException(f"option {name}={v!r}: expected one of {choices}") from None


_FAILOVER_OPTIONS: dict[str, tuple[str, Callable[[str, str], Any]]] = {
    "failover.initialReconnectDelay": ("initial_reconnect_delay_ms", _nonneg),
    "failover.reconnectDelay": ("reconnect_delay_ms", _nonneg),
    "failover.maxReconnectDelay": ("max_reconnect_delay_ms", _nonneg),
    "failover.useReconnectBackOff": ("use_reconnect_back_off", _bool),
    "failover.reconnectBackOffMultiplier": ("reconnect_back_off_multiplier", _multiplier),
    "failover.maxReconnectAttempts": ("max_reconnect_attempts", _attempts),
    "failover.startupMaxReconnectAttempts": ("startup_max_reconnect_attempts", _attempts),
    "failover.warnAfterReconnectAttempts": ("warn_after_reconnect_attempts", _int),
    "failover.randomize": ("randomize", _bool),
    "failover.amqpOpenServerListAction": ("amqp_open_server_list_action", _action),
}
#: every ``failover.*`` option name understood, for docs and error messages
OPTION_NAMES: tuple[str, ...] = tuple(_FAILOVER_OPTIONS)


def is_failover_url(url: str) -> bool:
    return isinstance(url, str) and url.strip().lower().startswith(SCHEME + ":")


def _split_components(text: str, url: str) -> list[str]:
    """Split at top-level commas (a comma inside parentheses belongs to its component)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    servers = [p.strip() for p in parts]
    if not any(servers):
        raise JMSException(f"failover URL {url!r} names no server")
    if not all(servers):
        raise JMSException(f"failover URL {url!r} has an empty server URI in its list")
    return servers


def _split(url: str) -> tuple[list[str], str]:
    """``failover:(a,b)?q`` -> (["a", "b"], "q"); ``failover:a`` -> (["a"], "") as in Qpid JMS."""
    rest = url.strip()[len(SCHEME) + 1 :].strip()
    if rest.startswith("//"):
        rest = rest[2:].strip()
    if rest.count("(") != rest.count(")"):
        raise JMSException(f"failover URL {url!r}: parentheses do not match")
    if not rest.startswith("("):
        return _split_components(rest, url), ""
    depth, close = 0, 0
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            close = i
            break
    components, tail = rest[1:close], rest[close + 1 :].strip()
    if tail and not tail.startswith("?"):
        raise JMSException(f"failover URL {url!r}: expected '?options' after the server list, not {tail!r}")
    return _split_components(components, url), tail[1:]


def _server(component: str, nested: dict[str, str], connection: dict[str, str], url: str) -> ConnectionConfig:
    parts = urlsplit(component)
    if "@" in parts.netloc:
        raise JMSException(
            f"server URI {component!r} in failover URL {url!r} must not carry credentials:"
            " use jms.username and jms.password on the failover URL"
        )
    own = dict(parse_qsl(parts.query, keep_blank_values=True))
    for name in own:
        if name.startswith(CONNECTION_PREFIX) or name.startswith(FAILOVER_PREFIX):
            raise JMSException(
                f"option {name!r} on server URI {component!r} belongs on the failover URL itself"
            )
    bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment))
    return parse_url(bare, **{**own, **nested, **connection})


def parse_failover_url(url: str, **options: Any) -> FailoverConfig:
    """Parse ``failover:(uri[,uri...])[?option=value&...]``; keyword ``options`` (``jms.*`` or
    ``failover.*`` names, or ``parse_url``'s short forms) win over the URL's own."""
    if not isinstance(url, str):
        raise TypeError("connection URL must be a str")
    if not is_failover_url(url):
        raise JMSException(f"not a failover URL: {url!r}")
    components, query = _split(url)
    token_provider = callable_option(options, "token_provider")
    cbs_token_provider = token_source_option(options)
    raw: dict[str, str] = dict(parse_qsl(query, keep_blank_values=True))
    raw.update(keyword_options(options))

    policy: dict[str, Any] = {}
    nested: dict[str, str] = {}
    connection: dict[str, str] = {}
    for name, value in raw.items():
        if name.startswith(NESTED_PREFIX):
            nested[name[len(NESTED_PREFIX) :]] = value
        elif name.startswith(FAILOVER_PREFIX):
            spec = _FAILOVER_OPTIONS.get(name)
            if spec is None:
                raise unknown_option(name, OPTION_NAMES)
            policy[spec[0]] = spec[1](name, value)
        elif name.startswith((CONNECTION_PREFIX, PROVIDER_PREFIX)):
            connection[name] = value
        else:  # an amqp.*/transport.* option belongs on a server's URI or under failover.nested.
            raise unknown_option(name, [*OPTION_NAMES, *(NESTED_PREFIX + n for n in CONNECTION_OPTION_NAMES)])
    for name in nested:
        if name.startswith(CONNECTION_PREFIX) or name.startswith(FAILOVER_PREFIX):
            raise JMSException(f"option {NESTED_PREFIX}{name!s} cannot be nested: give {name!r} directly")
    servers = tuple(_server(c, nested, connection, url).replace(token_provider=token_provider,
                                                                cbs_token_provider=cbs_token_provider)
                    for c in components)
    return FailoverConfig(
        servers=servers,
        reconnect=dataclasses.replace(ReconnectPolicy(), **policy),
        nested_options=tuple(nested.items()),
        connection_options=tuple(connection.items()),
    )


def with_client_options(url: str, options: Iterable[tuple[str, str]], *, keep_existing: bool = False) -> str:
    """``url`` with client ``options`` (``jms.*``, ``amqp.*``, ``transport.*``, ``failover.*``,
    ``provider.*``) added where each belongs, for a tool that adds its own settings to a URL the
    user gave (the CLI's ``--url``, the Spark source's options): string handling breaks a
    failover URL.

    A plain ``amqp[s]://`` URL gets them on its query. A failover URL gets them on its own query,
    after the server list (written in parentheses if it was not): ``jms.*``, ``provider.*`` and
    ``failover.*`` as they are, ``amqp.*``/``transport.*`` as ``failover.nested.*`` (every
    server; the top level refuses them, a server URI refuses ``jms.*``). With ``keep_existing``
    an option the URL already sets (for a nested one, on any of its servers too) is left as the
    URL has it.
    """
    options = list(options)
    if not is_failover_url(url):
        parts = urlsplit(url)
        if keep_existing:
            have = {name for name, _ in parse_qsl(parts.query, keep_blank_values=True)}
            options = [(n, v) for n, v in options if n not in have]
        if not options:
            return url
        query = "&".join(q for q in (parts.query, urlencode(options, safe=".:/")) if q)
        return urlunsplit(parts._replace(query=query))
    components, query = _split(url)
    moved = [(NESTED_PREFIX + n if n.startswith(("amqp.", "transport.")) else n, v) for n, v in options]
    if keep_existing:
        have = {name for name, _ in parse_qsl(query, keep_blank_values=True)}
        for component in components:
            own = parse_qsl(urlsplit(component).query, keep_blank_values=True)
            have |= {NESTED_PREFIX + n for n, _ in own}
        moved = [(n, v) for n, v in moved if n not in have]
    query = "&".join(q for q in (query, urlencode(moved, safe=".:/")) if q)
    return f"{SCHEME}:({','.join(components)})" + (f"?{query}" if query else "")
