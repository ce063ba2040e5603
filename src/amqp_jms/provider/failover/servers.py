"""The list of servers a failover connection tries, and how a peer may change it (pure functions).

Rules ported from Qpid JMS (FailoverUriPool, FailoverProvider.processAlternates, AmqpRedirect):

* Two entries are the same server when their host names are equal ignoring case and their ports
  are equal; the scheme and options do not count, and no name is resolved (``localhost`` and
  ``127.0.0.1`` are two servers). A duplicate is never added, and adding never moves an entry.
* A peer may offer alternate servers (the AMQP provider reads them from its Open's
  ``failover-server-list``: ``provider/redirects.py``, ``Provider.alternate_servers``).
  ``amqpOpenServerListAction`` then says what happens: REPLACE (the connected server, then the
  peer's list), ADD (append), IGNORE.
* A redirect (``amqp:connection:redirect`` or a redirecting link detach) names a target that
  goes first in the list (:func:`add_first`).

Servers are :class:`~amqp_jms.provider.config.ConnectionConfig` values; lists are tuples.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..config import ConnectionConfig
from ..redirects import FAILOVER_SERVER_LIST, alternates_from_open, server_from_redirect
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
