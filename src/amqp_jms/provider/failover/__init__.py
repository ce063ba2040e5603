"""Failover (issue 17): the pure parts a failover provider is built on.

* :mod:`.uri`: ``failover:(...)?...`` parsed into :class:`FailoverConfig` (Qpid JMS's options);
* :mod:`.reconnect`: :class:`Reconnector`, the time-free reconnect state machine;
* :mod:`.servers`: the server list's rules (duplicates, an Open's ``failover-server-list``,
  redirects).

The provider that drives them (wrapping the AMQP provider behind ``provider/base.py``) is planned
in ``docs/failover-design.md``.
"""

from .uri import FailoverConfig, ReconnectPolicy, ServerListAction, is_failover_url, parse_failover_url

__all__ = [
    "FailoverConfig",
    "ReconnectPolicy",
    "ServerListAction",
    "is_failover_url",
    "parse_failover_url",
]
