"""The list of servers a failover connection tries, and how a peer may change it (pure functions).

Rules ported from Qpid JMS (FailoverUriPool, FailoverProvider.processAlternates, AmqpRedirect):

* Two entries are the same server when their host names are equal ignoring case and their ports
  are equal; the scheme and options do not count, and no name is resolved (``localhost`` and
  ``127.0.0.1`` are two servers). A duplicate is never added, and adding never moves an entry.
* A peer's Open may carry ``failover-server-list``: a list of maps with ``network-host``
  (required), ``port`` (required), ``scheme``, ``hostname`` (the vhost to open) and ``path``. An
  entry takes every other setting from the server it was learnt on; an invalid one is skipped.
  ``amqpOpenServerListAction`` then says what happens: REPLACE (the connected server, then the
  peer's list), ADD (append), IGNORE.
* The same map describes an ``amqp:connection:redirect`` or a redirecting link detach: the target
  goes first in the list (:func:`add_first`).

Servers are :class:`~amqp_jms.provider.config.ConnectionConfig` values; lists are tuples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...exceptions import JMSException
from ..config import ConnectionConfig
from .uri import ServerListAction

__all__ = [
    "FAILOVER_SERVER_LIST",
    "add_first",
    "add_servers",
    "alternates_from_open",
    "remove_server",
    "same_server",
    "server_from_redirect",
    "update_server_list",
]

#: the Open property carrying the peer's failover servers
FAILOVER_SERVER_LIST = "failover-server-list"
NETWORK_HOST = "network-host"
PORT = "port"
SCHEME = "scheme"
OPEN_HOSTNAME = "hostname"
OPEN_PATH = "path"
#: a redirect's scheme -> ours (Qpid JMS's AmqpRedirect also takes ``ws`` and ``wss``)
SUPPORTED_SCHEMES = {"amqp": "amqp", "amqps": "amqps", "amqpws": "amqpws", "amqpwss": "amqpwss",
                     "ws": "amqpws", "wss": "amqpwss"}
Servers = tuple[ConnectionConfig, ...]


def same_server(a: ConnectionConfig, b: ConnectionConfig) -> bool:
    return a.port == b.port and a.host.lower() == b.host.lower()


def _contains(servers: Iterable[ConnectionConfig], server: ConnectionConfig) -> bool:
    return any(same_server(s, server) for s in servers)


def add_servers(servers: Sequence[ConnectionConfig], additions: Iterable[ConnectionConfig]) -> Servers:
    """``servers`` then each addition not already listed (duplicates among additions too)."""
    out = list(servers)
    for s in additions:
        if not _contains(out, s):
            out.append(s)
    return tuple(out)


def add_first(servers: Sequence[ConnectionConfig], server: ConnectionConfig) -> Servers:
    """``server`` at the front, unless already listed (then the list is unchanged, as in Qpid JMS)."""
    return tuple(servers) if _contains(servers, server) else (server, *servers)


def remove_server(servers: Sequence[ConnectionConfig], server: ConnectionConfig) -> Servers:
    """The list without the first entry naming the same server."""
    for i, s in enumerate(servers):
        if same_server(s, server):
            return (*servers[:i], *servers[i + 1 :])
    return tuple(servers)


def update_server_list(
    servers: Sequence[ConnectionConfig],
    connected: ConnectionConfig,
    alternates: Sequence[ConnectionConfig],
    action: ServerListAction,
) -> Servers:
    """The server list after the peer at ``connected`` offered ``alternates`` in its Open.

    An empty offer changes nothing whatever the action (Qpid JMS keeps its list then)."""
    if not alternates or action is ServerListAction.IGNORE:
        return tuple(servers)
    if action is ServerListAction.ADD:
        return add_servers(servers, alternates)
    # REPLACE: the list is meant for the other nodes; the connected one stays, first
    return add_servers((connected,), alternates)


def _get(entry: Mapping[Any, Any], key: str) -> Any:
    for k, v in entry.items():  # keys are AMQP symbols (a str subclass) or plain str
        if str(k) == key:
            return v
    return None


def server_from_redirect(
    entry: Mapping[Any, Any], current: ConnectionConfig, allow_insecure: bool | None = None
) -> ConnectionConfig:
    """The server a redirect map (or one ``failover-server-list`` entry) names.

    A move from amqps to plain amqp is refused unless ``allow_insecure`` (by default the
    current server's ``amqp.allowNonSecureRedirects``, Qpid JMS's AmqpRedirect rule).

    Everything not in the map comes from ``current``, the server it was learnt on; ``hostname``
    becomes the vhost to open. Raises JMSException naming what is wrong with the map."""
    host = _get(entry, NETWORK_HOST)
    if not isinstance(host, str) or not host:
        raise JMSException(f"redirect {dict(entry)!r}: missing {NETWORK_HOST}")
    try:
        port = int(str(_get(entry, PORT)))
    except ValueError:
        raise JMSException(f"redirect {dict(entry)!r}: invalid {PORT}") from None
    if not 0 < port < 65536:
        raise JMSException(f"redirect {dict(entry)!r}: invalid {PORT}")
    scheme = _get(entry, SCHEME) or current.scheme
    if not isinstance(scheme, str) or scheme.lower() not in SUPPORTED_SCHEMES:
        raise JMSException(f"redirect {dict(entry)!r}: unsupported {SCHEME} {scheme!r}")
    scheme = SUPPORTED_SCHEMES[scheme.lower()]
    if allow_insecure is None:
        allow_insecure = current.allow_non_secure_redirects
    moved = current.replace(scheme=scheme)
    if current.secure and not moved.secure and not allow_insecure:
        raise JMSException(f"redirect {dict(entry)!r}: refusing to move from {current.scheme} to {scheme}")
    vhost = _get(entry, OPEN_HOSTNAME)
    path = _get(entry, OPEN_PATH)
    return moved.replace(
        host=host,
        port=port,
        vhost=vhost if isinstance(vhost, str) and vhost else current.vhost,
        path=(path if isinstance(path, str) and path else current.path or "/") if moved.websocket else "",
    )


def alternates_from_open(properties: Mapping[Any, Any] | None, current: ConnectionConfig) -> Servers:
    """The servers in an Open's ``failover-server-list`` property; invalid entries are skipped
    (Qpid JMS logs and skips them), a missing or malformed property gives ``()``."""
    if not properties:
        return ()
    value = _get(properties, FAILOVER_SERVER_LIST)
    if not isinstance(value, list | tuple):
        return ()
    out: list[ConnectionConfig] = []
    for entry in value:
        if not isinstance(entry, Mapping):
            continue
        try:
            out.append(server_from_redirect(entry, current))
        except JMSException:
            continue
    return tuple(out)
