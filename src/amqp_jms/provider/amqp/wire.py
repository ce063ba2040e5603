"""The layers between the provider's socket and its engine: WebSocket framing (``amqpws``),
nothing for plain TCP. TLS is the socket's own (asyncio's SSL transport), below all of them.

One object per connection, so ``connection.py`` asks the same two questions whatever the URL
scheme: what do these socket bytes carry for the engine (``inbound``), and what goes on the
socket for these engine bytes (``outbound``). Each layer is sans-IO (:mod:`amqp_jms.engine`).
"""

from __future__ import annotations

from ...engine.websocket import WebSocketClient, WebSocketError
from ...exceptions import JMSException, JMSSecurityException
from ..config import DEFAULT_PORTS, ConnectionConfig

__all__ = ["Wire", "WireError"]


class WireError(Exception):
    """A layer below AMQP failed; ``jms`` is what the application is told."""

    def __init__(self, jms: JMSException) -> None:
        super().__init__(jms.reason)
        self.jms = jms


class Wire:
    """The byte path of one connection attempt (made fresh for every connect)."""

    def __init__(self, config: ConnectionConfig) -> None:
        self._where = config.address
        self._ws: WebSocketClient | None = None
        if config.websocket:
            default_port = config.port == DEFAULT_PORTS[config.scheme]
            host = config.host if default_port else f"{config.host}:{config.port}"
            self._ws = WebSocketClient(
                host,
                config.path or "/",
                config.transport.ws_http_headers,
                config.transport.ws_max_frame_size,
            )

    def inbound(self, data: bytes) -> bytes:
        """Socket bytes -> the bytes they carry for the engine (possibly none).

        Raises :class:`WireError` when a layer cannot go on; ``outbound(b"")`` then returns what
        that layer still has to tell the peer (a WebSocket close)."""
        ws = self._ws
        if ws is None:
            return data
        try:
            return ws.receive_data(data)
        except WebSocketError as e:
            cls = JMSSecurityException if e.status in (401, 403, 407) else JMSException
            raise WireError(cls(f"{self._where}: {e}")) from None

    def closing(self) -> bytes:
        """The last bytes before the socket closes (a WebSocket close frame), or ``b""``."""
        if self._ws is None:
            return b""
        self._ws.close()
        return self._ws.data_to_send()

    def outbound(self, data: bytes) -> bytes:
        """Engine bytes -> socket bytes (with whatever a layer adds itself: an upgrade request,
        a pong, a close)."""
        ws = self._ws
        if ws is None:
            return data
        ws.wrap(data)
        return ws.data_to_send()
