"""Reaching the peer through an HTTP proxy: ``CONNECT host:port`` (RFC 9110 9.3.6), then TLS (for
``amqps``/``amqpwss``) and the rest of the byte path inside the tunnel, as if the socket had been
opened to the peer. For TCP and WebSocket alike: the proxy only ever sees a tunnel.

Options: ``transport.proxyHost``, ``transport.proxyPort`` (default 8080), and with a proxy that
asks for credentials ``transport.proxyUsername`` / ``transport.proxyPassword`` (sent as Basic
``Proxy-Authorization``; over TLS to the peer, but in clear to the proxy itself).
"""

from __future__ import annotations

import asyncio
import base64
import ssl

from ...exceptions import JMSException, JMSSecurityException
from ..config import ConnectionConfig

__all__ = ["open_tunnel"]

#: the largest proxy response head read (a proxy answering more is broken or hostile)
MAX_RESPONSE_HEAD = 16384


class _Tunnel(asyncio.Protocol):
    """Reads the proxy's answer to CONNECT; nothing else passes through it."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.answered: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        if self.answered.done():
            return
        self.head += data
        end = self.head.find(b"\r\n\r\n")
        if end >= 0:
            if end + 4 != len(self.head):  # the peer cannot speak before we do: a confused proxy
                self.answered.set_exception(JMSException("the proxy sent bytes after its answer to CONNECT"))
            else:
                self.answered.set_result(bytes(self.head[:end]))
        elif len(self.head) > MAX_RESPONSE_HEAD:
            self.answered.set_exception(JMSException("the proxy's answer to CONNECT is too long"))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.answered.done():
            why = "the proxy closed the connection before answering CONNECT" + (f": {exc}" if exc else "")
            self.answered.set_exception(JMSException(why))


async def open_tunnel(
    cfg: ConnectionConfig, ctx: ssl.SSLContext | None, protocol: asyncio.BaseProtocol
) -> asyncio.Transport:
    """A transport to the peer through ``cfg``'s proxy, TLS inside the tunnel when ``ctx``,
    already handed to ``protocol`` (whose ``connection_made`` has run)."""
    t = cfg.transport
    assert t.proxy_host is not None
    loop = asyncio.get_running_loop()
    transport, tunnel = await loop.create_connection(_Tunnel, t.proxy_host, t.proxy_port)
    target = f"{cfg.host}:{cfg.port}"
    request = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if t.proxy_username is not None:
        basic = base64.b64encode(f"{t.proxy_username}:{t.proxy_password or ''}".encode()).decode()
        request += f"Proxy-Authorization: Basic {basic}\r\n"
    transport.write((request + "\r\n").encode())
    try:
        head = await tunnel.answered
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        refused = f"the proxy {t.proxy_host}:{t.proxy_port} refused the tunnel to {target}"
        if status == 407:
            raise JMSSecurityException(f"{refused}: {status_line} (transport.proxyUsername / proxyPassword)")
        if not 200 <= status < 300:
            raise JMSException(f"{refused}: {status_line[:200]!r}")
        if ctx is not None:
            hostname = cfg.host if ctx.check_hostname else None
            tls = await loop.start_tls(transport, tunnel, ctx, server_hostname=hostname)
            assert isinstance(tls, asyncio.Transport)
            transport = tls
    except BaseException:
        transport.abort()
        raise
    transport.set_protocol(protocol)
    protocol.connection_made(transport)
    return transport
