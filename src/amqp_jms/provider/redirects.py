"""The AMQP forms that name other servers: a redirect map (``amqp:connection:redirect``, a
redirecting link detach) and the ``failover-server-list`` an Open may carry (pure functions).

A map has ``network-host`` (required), ``port`` (required), ``scheme``, ``hostname`` (the vhost
to open) and ``path``; the server it names takes every other setting from the server it was
learnt on, and an invalid entry of a list is skipped (Qpid JMS's AmqpRedirect and
FailoverProvider.processAlternates). The AMQP provider reads its Open's list
(``Provider.alternate_servers``); the failover provider turns a redirect into its next server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..exceptions import JMSException
from .config import ConnectionConfig

__all__ = ["FAILOVER_SERVER_LIST", "alternates_from_open", "server_from_redirect"]

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
