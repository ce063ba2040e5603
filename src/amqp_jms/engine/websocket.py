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

import contextlib
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

__all__ = ["SUBPROTOCOL", "WebSocketClient", "WebSocketError", "WebSocketServer"]

#: the subprotocol the binding registers (IANA "amqp")
SUBPROTOCOL = "amqp"
#: what a server also accepts: the binding's draft name, which Azure's own clients still ask for
DRAFT_SUBPROTOCOL = "AMQPWSB10"
#: Qpid JMS's ``transport.ws.maxFrameSize`` default
DEFAULT_MAX_FRAME_SIZE = 65535


class WebSocketError(Exception):
    """The WebSocket layer failed: a refused upgrade, a malformed or oversized frame, a close.

    ``status`` is the HTTP status of a refused upgrade (401 and 403 mean "not allowed")."""

    def __init__(self, text: str, status: int | None = None) -> None:
        super().__init__(text)
        self.status = status


def _binary_messages(ws: WSConnection, payload: bytes, largest: int) -> bytes:
    view = memoryview(payload)
    return b"".join(ws.send(BytesMessage(data=bytes(view[i:i + largest])))
                    for i in range(0, len(view), largest))


class _WebSocketSide:
    """What both sides do once the upgrade is done: carry AMQP bytes in binary messages of at
    most ``max_frame_size`` bytes each way, answer pings, refuse text and oversized frames."""

    def __init__(self, ws: WSConnection, max_frame_size: int, send_frame_size: int) -> None:
        self._ws = ws
        self.max_frame_size = max_frame_size
        self.send_frame_size = send_frame_size
        self._out = bytearray()
        self._held = bytearray()
        self._frame_bytes = 0
        self.open = False
        self.closed = False

    # -- output --------------------------------------------------------------------------------
    def wrap(self, payload: bytes) -> None:
        """Queue AMQP bytes for the peer (held until the upgrade is done), in binary messages
        of at most ``send_frame_size`` bytes (peers commonly refuse frames over 64 KiB)."""
        if not payload or self.closed:
            return
        if self.open:
            self._out += _binary_messages(self._ws, payload, self.send_frame_size)
        else:
            self._held += payload

    def close(self) -> None:
        """Queue a normal close (code 1000) for the peer, once; nothing more is sent after it."""
        if self.open and not self.closed and self._ws.state is ConnectionState.OPEN:
            self._out += self._ws.send(CloseConnection(code=1000))
        self.closed = True

    def data_to_send(self) -> bytes:
        """Every byte ready for the socket (upgrade request or answer, frames, pongs, close)."""
        out, self._out = bytes(self._out), bytearray()
        return out

    # -- input ---------------------------------------------------------------------------------
    def receive_data(self, data: bytes) -> bytes:
        """Feed socket bytes. Returns the AMQP bytes they carried.

        Raises :class:`WebSocketError` when the connection cannot go on (refused upgrade, bad
        frame, a frame over ``max_frame_size``, a close from the peer); what to send the peer
        before hanging up is then in ``data_to_send``.
        """
        if self.closed:
            return b""
        try:
            self._ws.receive_data(data or None)
            amqp = bytearray()
            for ev in self._ws.events():
                if not self._on_handshake(ev):
                    amqp += self._on_frame(ev)
            return bytes(amqp)
        except RemoteProtocolError as e:
            self.closed = True
            if e.event_hint is not None and not self.open and not self._ws.client:
                with contextlib.suppress(LocalProtocolError):  # a bad upgrade request: say so
                    self._out += self._ws.send(e.event_hint)
            raise WebSocketError(f"WebSocket protocol error: {e}") from None
        except LocalProtocolError as e:  # data after the connection closed
            self.closed = True
            raise WebSocketError(f"WebSocket connection closed: {e}") from None

    def _on_handshake(self, ev: object) -> bool:
        """Handle an upgrade event; False when ``ev`` is not one."""
        raise NotImplementedError

    def _opened(self) -> None:
        self.open = True
        held, self._held = bytes(self._held), bytearray()
        self.wrap(held)

    def _on_frame(self, ev: object) -> bytes:
        if isinstance(ev, BytesMessage):
            self._frame_bytes += len(ev.data)
            if self._frame_bytes > self.max_frame_size:
                self._fail(1009, f"a WebSocket frame larger than {self.limit_name} "
                                 f"({self.max_frame_size} bytes)")
            if ev.frame_finished:
                self._frame_bytes = 0
            return bytes(ev.data)
        if isinstance(ev, TextMessage):
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
        return b""

    limit_name = "transport.ws.maxFrameSize"

    def _fail(self, code: int, what: str) -> None:
        if self._ws.state is ConnectionState.OPEN:
            self._out += self._ws.send(CloseConnection(code=code, reason=what[:100]))
        self.closed = True
        raise WebSocketError(f"the peer sent {what}")


class WebSocketClient(_WebSocketSide):
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
        # what we send keeps to the limit we ask of the peer
        super().__init__(WSConnection(ConnectionType.CLIENT), max_frame_size, max_frame_size)
        self._out += self._ws.send(
            Request(
                host=host,
                target=path or "/",
                subprotocols=[SUBPROTOCOL],
                extra_headers=[(k.encode(), v.encode()) for k, v in headers],
            )
        )
        self._reject: tuple[int, bytearray] | None = None

    def _on_handshake(self, ev: object) -> bool:
        if isinstance(ev, AcceptConnection):
            if ev.subprotocol != SUBPROTOCOL:
                self.closed = True
                raise WebSocketError(
                    f"the server accepted the WebSocket upgrade without the {SUBPROTOCOL!r} "
                    f"subprotocol (it chose {ev.subprotocol!r})"
                )
            self._opened()
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
        else:
            return False
        return True

    def _rejected(self) -> None:
        assert self._reject is not None
        status, body = self._reject
        self.closed = True
        detail = bytes(body).decode("utf-8", "replace").strip()
        raise WebSocketError(f"the server refused the WebSocket upgrade: HTTP {status}"
                             + (f" ({detail})" if detail else ""), status)


class WebSocketServer(_WebSocketSide):
    """The server side (the broker's WebSocket listener): accepts an upgrade to ``path`` that
    asks for the ``amqp`` subprotocol (or its draft name ``AMQPWSB10``, which Azure's clients
    send), refuses any other (HTTP 400 or 404, and an error).

    The upgrade request is read by h11, which refuses a request head over 16 KiB."""

    limit_name = "the broker's max_websocket_frame_size"

    def __init__(self, path: str = "/", max_frame_size: int = 1048576) -> None:
        # what we send keeps to Qpid JMS's (and our client's) default limit
        super().__init__(WSConnection(ConnectionType.SERVER), max_frame_size, DEFAULT_MAX_FRAME_SIZE)
        #: the path served; ``/`` serves every path (Azure's clients ask for /$servicebus/websocket)
        self.path = path
        self.request: Request | None = None
        self._first = True

    def receive_data(self, data: bytes) -> bytes:
        if self._first and data:
            self._first = False
            if data.startswith(b"AMQP"):  # an amqp:// client at the WebSocket port: say so at once
                body = b"this is an AMQP WebSocket listener: connect with amqpws:// or amqpwss://"
                self._out += (b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: "
                              + str(len(body)).encode() + b"\r\n\r\n" + body)
                self.closed = True
                raise WebSocketError("refused a connection that sent an AMQP header, not an upgrade", 400)
        return super().receive_data(data)

    def _on_handshake(self, ev: object) -> bool:
        if not isinstance(ev, Request):
            return False
        self.request = ev
        target = ev.target.split("?", 1)[0]
        if self.path not in ("", "/") and target.rstrip("/") != self.path.rstrip("/"):
            self._refuse(404, f"no AMQP WebSocket endpoint at {target[:100]}")
        chosen = next((p for p in (SUBPROTOCOL, DRAFT_SUBPROTOCOL) if p in ev.subprotocols), None)
        if chosen is None:
            self._refuse(400, f"the upgrade does not ask for the {SUBPROTOCOL!r} subprotocol")
        self._out += self._ws.send(AcceptConnection(subprotocol=chosen))
        self._opened()
        return True

    def _refuse(self, status: int, why: str) -> None:
        body = why.encode()
        self._out += self._ws.send(RejectConnection(
            status_code=status, headers=[(b"content-length", str(len(body)).encode())], has_body=True))
        self._out += self._ws.send(RejectData(data=body, body_finished=True))
        self.closed = True
        raise WebSocketError(f"refused the WebSocket upgrade: {why}", status)
