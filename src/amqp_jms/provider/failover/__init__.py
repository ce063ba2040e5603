"""Failover (issue 17): connections that survive brokers restarting, moving and failing.

* :mod:`.uri`: ``failover:(...)?...`` parsed into :class:`FailoverConfig` (Qpid JMS's options);
* :mod:`.reconnect`: :class:`Reconnector`, the time-free reconnect state machine;
* :mod:`.servers`: the server list's rules (duplicates, an Open's ``failover-server-list``,
  redirects);
* :mod:`.state`: ``FailoverState``, everything the connection remembers across the wrapped
  connections under it (the one place that says what is replayed and what is owed);
* :mod:`.provider`: ``FailoverProvider``, the policy acting on that state, wrapping one provider
  at a time behind ``provider/base.py``; :mod:`.handles`: the session/producer/consumer handles
  the JMS layer keeps across reconnects; :mod:`.replay`: their re-creation on a new connection.

Design and rules: ``docs/failover-design.md``; options and guarantees: ``docs/client.md``
(Failover).
"""

from .reconnect import Connect, GiveUp, Reconnector
from .servers import alternates_from_open, server_from_redirect, update_server_list
from .uri import FailoverConfig, ReconnectPolicy, ServerListAction, is_failover_url, parse_failover_url

__all__ = [
    "Connect",
    "FailoverConfig",
    "GiveUp",
    "ReconnectPolicy",
    "Reconnector",
    "ServerListAction",
    "alternates_from_open",
    "is_failover_url",
    "parse_failover_url",
    "server_from_redirect",
    "update_server_list",
]
