"""The client through an HTTP proxy (``transport.proxyHost``): a CONNECT tunnel, for TCP and
WebSocket, plain and TLS, with proxy credentials. The proxy here is a few lines of the standard
library that only knows CONNECT, so what passes through it is the client's doing."""

from __future__ import annotations

import base64
import contextlib
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import ConnectionFactory
from amqp_jms.exceptions import JMSException, JMSSecurityException


class ConnectProxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, credentials: str | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.credentials = credentials
        self.requests: list[str] = []


class _Tunnel(socketserver.BaseRequestHandler):
    server: ConnectProxy

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        lines = head.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
        self.server.requests.append(lines[0])
        method, target, _ = lines[0].split(" ", 2)
        headers = dict(line.split(": ", 1) for line in lines[1:])
        if method != "CONNECT":
            self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
            return
        wanted = self.server.credentials
        basic = f"Basic {base64.b64encode(wanted.encode()).decode()}" if wanted is not None else None
        if basic is not None and headers.get("Proxy-Authorization") != basic:
            self.request.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                                 b"Proxy-Authenticate: Basic realm=\"test\"\r\ncontent-length: 0\r\n\r\n")
            return
        host, port = target.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=10)
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        pump = threading.Thread(target=_copy, args=(upstream, self.request), daemon=True)
        pump.start()
        _copy(self.request, upstream)
        pump.join(5)


def _copy(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def proxy(credentials: str | None = None) -> Iterator[ConnectProxy]:
    server = ConnectProxy(credentials)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def roundtrip(url: str) -> str | None:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        queue = session.create_queue("proxied")
        session.create_producer(queue).send(session.create_text_message("through the tunnel"))
        got = session.create_consumer(queue).receive(5000)
        return got.get_text() if got is not None else None


def with_proxy(url: str, p: ConnectProxy, extra: str = "") -> str:
    options = f"transport.proxyHost=127.0.0.1&transport.proxyPort={p.server_address[1]}{extra}"
    return f"{url}{'&' if '?' in url else '?'}{options}"


@pytest.mark.parametrize("scheme", ["amqp", "amqpws"])
def test_tcp_and_websocket_go_through_the_proxy(broker_factory: Any, scheme: str) -> None:
    b = broker_factory(ws_port=0)
    url = b.url if scheme == "amqp" else b.ws_url
    with proxy() as p:
        assert roundtrip(with_proxy(url, p)) == "through the tunnel"
    port = b.port if scheme == "amqp" else b.ws_port
    assert p.requests == [f"CONNECT 127.0.0.1:{port} HTTP/1.1"]


def test_tls_inside_the_tunnel_with_proxy_credentials(broker_factory: Any, pki: dict[str, Path]) -> None:
    b = broker_factory(ws_port=0, tls_cert=str(pki["server"]), tls_key=str(pki["server-key"]))
    with proxy("carol:pa55") as p:
        url = with_proxy(f"{b.ws_url}?transport.trustStoreLocation={pki['server']}", p,
                         "&transport.proxyUsername=carol&transport.proxyPassword=pa55")
        assert roundtrip(url) == "through the tunnel"
        conn = ConnectionFactory(with_proxy(b.url.replace("amqp://", "amqps://"), p)).create_connection()
        with pytest.raises(JMSSecurityException, match="407 Proxy Authentication Required"):
            conn.start()
        conn.close()


def test_a_proxy_that_cannot_reach_the_peer_is_reported(broker_factory: Any) -> None:
    with proxy() as p, socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
        conn = ConnectionFactory(with_proxy(f"amqp://127.0.0.1:{dead}", p)).create_connection()
        with pytest.raises(JMSException, match="proxy"):
            conn.start()
        conn.close()
