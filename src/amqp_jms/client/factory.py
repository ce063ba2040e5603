"""ConnectionFactory: a URL plus options (Qpid JMS names), parsed once into a frozen config."""

from __future__ import annotations

from typing import Any

from ..provider import create_provider
from ..provider.config import parse_url
from .connection import Connection

__all__ = ["ConnectionFactory"]


class ConnectionFactory:
    """``ConnectionFactory("amqp://host:5672?jms.prefetchPolicy.all=100", **options)``.

    ``options`` use the URL option names (``**{"jms.clientID": "a"}``) or the short keywords
    ``client_id``, ``username``, ``password``. Unknown options raise ``JMSException`` here, at
    once, naming the option. See docs/client.md for every option.
    """

    def __init__(self, url: str = "amqp://localhost:5672", **options: Any) -> None:
        self._url = url
        self.config = parse_url(url, **options)

    @property
    def url(self) -> str:
        return self._url

    def create_connection(self, username: str | None = None, password: str | None = None) -> Connection:
        cfg = self.config
        if username is not None:
            cfg = cfg.replace(username=username, password=password)
        return Connection(cfg, create_provider)

    def create_context(self, *args: Any, **kwargs: Any) -> Any:
        """JMS 2.0 ``JMSContext``: ``()``, ``(session_mode)``, ``(user, password[, session_mode])``."""
        from .context import create_context

        return create_context(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"ConnectionFactory({self._url!r})"
