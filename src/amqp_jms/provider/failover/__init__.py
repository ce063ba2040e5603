"""Failover (issue 17): the pure parts a failover provider is built on.

* :mod:`.uri`: ``failover:(...)?...`` parsed into :class:`FailoverConfig` (Qpid JMS's options);
* :mod:`.reconnect`: :class:`Reconnector`, the time-free reconnect state machine;
* :mod:`.servers`: the server list's rules (duplicates, an Open's ``failover-server-list``,
  redirects).

The provider that drives them (wrapping the AMQP provider behind ``provider/base.py``) is planned
in ``docs/failover-design.md``.
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
