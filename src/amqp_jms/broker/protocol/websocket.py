"""The WebSocket listener: AMQP over WebSocket (subprotocol ``amqp``) into the same
:class:`~amqp_jms.broker.protocol.server.AmqpProtocol` the TCP listener uses.

``WebSocketProtocol`` sits between the socket and an ``AmqpProtocol``: it unwraps what the
peer sends (:class:`amqp_jms.engine.websocket.WebSocketServer`, on wsproto) and hands the
``AmqpProtocol`` a transport that wraps what it writes. The ``AmqpProtocol`` exists from the
moment the socket is accepted, so every limit and timeout of the TCP listener holds here the
same way (``max_connections``, ``handshake_timeout`` counting the HTTP upgrade, the write
buffer and its back-pressure, SASL, the login throttle, ``max_frame_size``); the WebSocket layer
adds ``max_websocket_frame_size`` and h11's 16 KiB limit on the upgrade request's head.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..._reading import KeptBufferProtocol
from ...engine.websocket import WebSocketError, WebSocketServer
from .server import AmqpProtocol, ServerState

__all__ = ["WebSocketProtocol"]

log = logging.getLogger("amqp_jms.broker")


class _WrappingTransport(asyncio.Transport):
    """What the inner ``AmqpProtocol`` writes to: every write becomes binary WebSocket frames
    on the real socket; everything else is the socket's."""

    def __init__(self, outer: WebSocketProtocol, socket: asyncio.Transport) -> None:
        super().__init__()
        self._outer = outer
        self._socket = socket

    def write(self, data: bytes | bytearray | memoryview) -> None:
        ws = self._outer.ws
        ws.wrap(bytes(data))
        out = ws.data_to_send()
        if out:
            self._socket.write(out)

    def close(self) -> None:
        ws = self._outer.ws
        ws.close()
        out = ws.data_to_send()
        if out and not self._socket.is_closing():
            self._socket.write(out)
        self._socket.close()

    def abort(self) -> None:
        self._socket.abort()

    def is_closing(self) -> bool:
        return self._socket.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._socket.get_extra_info(name, default)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._socket.set_write_buffer_limits(high=high, low=low)

    def get_write_buffer_size(self) -> int:
        return self._socket.get_write_buffer_size()


class WebSocketProtocol(KeptBufferProtocol):
    """One accepted WebSocket connection: the upgrade, then AMQP inside binary messages."""

    def __init__(self, state: ServerState, path: str = "/") -> None:
        self.inner = AmqpProtocol(state)
        self.ws = WebSocketServer(path, state.limits.max_websocket_frame_size)
        self._socket: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._socket = transport
        self.inner.connection_made(_WrappingTransport(self, transport))

    def data_received(self, data: bytes) -> None:
        try:
            amqp = self.ws.receive_data(data)
        except WebSocketError as e:
            log.info("WebSocket connection from %s: %s", self.inner.source or "?", e)
            out = self.ws.data_to_send()
            if self._socket is not None and not self._socket.is_closing():
                if out:
                    self._socket.write(out)
                self._socket.close()
            return
        out = self.ws.data_to_send()  # the upgrade's answer, pongs
        if out and self._socket is not None:
            self._socket.write(out)
        if amqp:
            self.inner.data_received(amqp)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()
