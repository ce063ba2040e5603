"""AMQP over WebSocket (the OASIS "AMQP WebSocket Binding"), sans-IO: bytes in, bytes out.

The binding carries the AMQP byte stream (protocol headers, SASL and AMQP frames) as the payload
of binary WebSocket messages, after an HTTP/1.1 upgrade that asks for the subprotocol ``amqp``.
Frame boundaries mean nothing to AMQP: whatever payload arrives is the next slice of the stream.

The framing, masking, ping/pong and close handshake are wsproto's (the sans-IO WebSocket library
the python-hyper project keeps, on h11): we do not write RFC 6455 ourselves. This module adds
only what AMQP needs on top: the subprotocol, the largest frame it accepts (a peer cannot make us
buffer more), and the rule that text messages are a protocol error.

Like :class:`~amqp_jms.engine.core.Engine` it never touches a socket: the adapter writes what
``data_to_send`` returns, feeds what it reads to ``receive_data`` (which returns the AMQP bytes
it carried), and wraps AMQP output with ``wrap``.
"""

from __future__ import annotations

from collections.abc import Iterable

from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Ping,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

__all__ = ["SUBPROTOCOL", "WebSocketClient", "WebSocketError"]

#: the subprotocol the binding registers (IANA "amqp")
SUBPROTOCOL = "amqp"
#: Qpid JMS's ``transport.ws.maxFrameSize`` default
DEFAULT_MAX_FRAME_SIZE = 65535


class WebSocketError(Exception):
    """The WebSocket layer failed: a refused upgrade, a malformed or oversized frame, a close.

    ``status`` is the HTTP status of a refused upgrade (401 and 403 mean "not allowed")."""

    def __init__(self, text: str, status: int | None = None) -> None:
        super().__init__(text)
        self.status = status


class WebSocketClient:
    """The client side: sends the upgrade request, then carries AMQP bytes in binary messages.

    ``data_to_send`` returns the upgrade request first; AMQP output given to ``wrap`` before the
    server accepted is held and sent once it has (a server may not read frames before its 101).
    """

    def __init__(
        self,
        host: str,
        path: str = "/",
        headers: Iterable[tuple[str, str]] = (),
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    ) -> None:
        self._ws = WSConnection(ConnectionType.CLIENT)
        self.max_frame_size = max_frame_size
        self._out = bytearray(
            self._ws.send(
                Request(
                    host=host,
                    target=path or "/",
                    subprotocols=[SUBPROTOCOL],
                    extra_headers=[(k.encode(), v.encode()) for k, v in headers],
                )
            )
        )
        self._held = bytearray()
        self._frame_bytes = 0
        self._reject: tuple[int, bytearray] | None = None
        self.open = False
        self.closed = False

    # -- output --------------------------------------------------------------------------------
    def wrap(self, payload: bytes) -> None:
        """Queue AMQP bytes for the peer (held until the upgrade is accepted)."""
        if not payload or self.closed:
            return
        if self.open:
            self._out += self._ws.send(BytesMessage(data=payload))
        else:
            self._held += payload

    def close(self) -> None:
        """Queue a normal close (code 1000) for the peer, once; nothing more is sent after it."""
        if self.open and not self.closed and self._ws.state is ConnectionState.OPEN:
            self._out += self._ws.send(CloseConnection(code=1000))
        self.closed = True

    def data_to_send(self) -> bytes:
        """Every byte ready for the socket (upgrade request, frames, pongs, close)."""
        out, self._out = bytes(self._out), bytearray()
        return out

    # -- input ---------------------------------------------------------------------------------
    def receive_data(self, data: bytes) -> bytes:
        """Feed socket bytes; ``b""`` is the socket's EOF. Returns the AMQP bytes they carried.

        Raises :class:`WebSocketError` when the connection cannot go on (refused upgrade, bad
        frame, a frame over ``max_frame_size``, a close from the peer); what to send the peer
        before hanging up is then in ``data_to_send``.
        """
        if self.closed:
            return b""
        try:
            self._ws.receive_data(data or None)
            return self._events()
        except RemoteProtocolError as e:
            self.closed = True
            raise WebSocketError(f"WebSocket protocol error: {e}") from None
        except LocalProtocolError as e:  # data after the connection closed
            self.closed = True
            raise WebSocketError(f"WebSocket connection closed: {e}") from None

    def _events(self) -> bytes:
        amqp = bytearray()
        for ev in self._ws.events():
            if isinstance(ev, AcceptConnection):
                if ev.subprotocol != SUBPROTOCOL:
                    self.closed = True
                    raise WebSocketError(
                        f"the server accepted the WebSocket upgrade without the {SUBPROTOCOL!r} "
                        f"subprotocol (it chose {ev.subprotocol!r})"
                    )
                self.open = True
                held, self._held = bytes(self._held), bytearray()
                self.wrap(held)
            elif isinstance(ev, RejectConnection):
                self._reject = (ev.status_code, bytearray())
                if not ev.has_body:
                    self._rejected()
            elif isinstance(ev, RejectData):
                assert self._reject is not None
                if len(self._reject[1]) < 200:
                    self._reject[1].extend(ev.data[:200])
                if ev.body_finished:
                    self._rejected()
            elif isinstance(ev, BytesMessage):
                self._frame_bytes += len(ev.data)
                if self._frame_bytes > self.max_frame_size:
                    self._fail(1009, f"a WebSocket frame larger than transport.ws.maxFrameSize "
                                     f"({self.max_frame_size} bytes)")
                if ev.frame_finished:
                    self._frame_bytes = 0
                amqp += ev.data
            elif isinstance(ev, TextMessage):
                self._fail(1003, "a text WebSocket message (AMQP travels in binary messages)")
            elif isinstance(ev, Ping):
                self._out += self._ws.send(ev.response())
            elif isinstance(ev, CloseConnection):
                if self._ws.state is ConnectionState.REMOTE_CLOSING:
                    self._out += self._ws.send(ev.response())
                self.closed = True
                if ev.code == 1006:  # no close frame: the socket just ended
                    raise WebSocketError("the WebSocket connection was lost without a close frame")
                raise WebSocketError(
                    f"the peer closed the WebSocket connection (code {ev.code}"
                    + (f": {ev.reason})" if ev.reason else ")")
                )
        return bytes(amqp)

    def _rejected(self) -> None:
        assert self._reject is not None
        status, body = self._reject
        self.closed = True
        detail = bytes(body).decode("utf-8", "replace").strip()
        raise WebSocketError(f"the server refused the WebSocket upgrade: HTTP {status}"
                             + (f" ({detail})" if detail else ""), status)

    def _fail(self, code: int, what: str) -> None:
        if self._ws.state is ConnectionState.OPEN:
            self._out += self._ws.send(CloseConnection(code=code, reason=what[:100]))
        self.closed = True
        raise WebSocketError(f"the peer sent {what}")
