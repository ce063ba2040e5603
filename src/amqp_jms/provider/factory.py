"""``create_provider``: the one place that picks a provider for a URL or a parsed config.

The JMS layer builds connections only through it, so it never names a provider class: an
``amqp://``/``amqps://`` URL (or its ``ConnectionConfig``) gives the AMQP provider, a
``failover:(…)`` URL (or its ``FailoverConfig``) the failover provider that wraps it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Provider
from .config import ConnectionConfig, parse_url
from .failover.uri import FailoverConfig, is_failover_url, parse_failover_url

__all__ = ["connection_settings", "create_provider", "provider_factory"]

#: what a connection calls with its (possibly changed) config to get its provider
ProviderFactory = Callable[[ConnectionConfig], Provider]


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
        from .failover.provider import FailoverProvider

        return FailoverProvider(config)
    from .amqp import AmqpProvider

    return AmqpProvider(config)


def provider_factory(failover: FailoverConfig | None) -> ProviderFactory:
    """What a connection calls with its (possibly changed) config to get its provider: for a
    ``failover:`` URL a failover provider over ``failover``'s servers that takes the client id
    and credentials from that config, else the AMQP provider for it."""
    if failover is None:
        return create_provider
    from .failover.provider import FailoverProvider

    return lambda config: FailoverProvider(failover, config)


def connection_settings(url: str, **options: Any) -> tuple[ConnectionConfig, ProviderFactory]:
    """For a connection factory: the settings the JMS layer reads (client id, credentials,
    timeouts, policies; for a ``failover:`` URL those of its first server, as the ``jms.*``
    options are the same on every server) and what makes the provider of each connection."""
    if is_failover_url(url):
        failover = parse_failover_url(url, **options)
        return failover.servers[0], provider_factory(failover)
    return parse_url(url, **options), provider_factory(None)
