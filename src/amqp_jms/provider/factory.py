"""``create_provider``: the one place that picks a provider for a URL or a parsed config.

The JMS layer builds connections only through it, so it never names a provider class: an
``amqp://``/``amqps://`` URL (or its ``ConnectionConfig``) gives the AMQP provider, a
``failover:(…)`` URL (or its ``FailoverConfig``) the failover provider that wraps it.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import JMSException
from .base import Provider
from .config import ConnectionConfig, parse_url
from .failover.uri import FailoverConfig, is_failover_url, parse_failover_url

__all__ = ["create_provider"]


def create_provider(url_or_config: str | ConnectionConfig | FailoverConfig, **options: Any) -> Provider:
    """A new, unconnected provider; ``options`` (URL option names) only with a URL."""
    config: ConnectionConfig | FailoverConfig
    if isinstance(url_or_config, str):
        url = url_or_config
        config = parse_failover_url(url, **options) if is_failover_url(url) else parse_url(url, **options)
    elif options:
        raise TypeError("create_provider: options are given in the URL or the config, not both")
    else:
        config = url_or_config
    if isinstance(config, FailoverConfig):
        raise JMSException("failover: URLs are not supported yet: the failover provider is not built")
    from .amqp import AmqpProvider

    return AmqpProvider(config)
