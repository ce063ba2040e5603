"""The client side of AMQP over WebSocket (``engine.websocket``) against wsproto's server role:
what a peer that breaks the binding's rules gets (a typed error, a close frame), and that AMQP
bytes pass through in order whatever the framing."""

from __future__ import annotations

import pytest
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, BytesMessage, CloseConnection, Ping, Pong, Request, TextMessage

from amqp_jms.engine.websocket import WebSocketClient, WebSocketError


def accepted(subprotocol: str | None = "amqp", **kw: object) -> tuple[WebSocketClient, WSConnection]:
    client = WebSocketClient("example.net", "/$servicebus/websocket", [("Authorization", "Bearer t")], **kw)  # type: ignore[arg-type]
    server = WSConnection(ConnectionType.SERVER)
    server.receive_data(client.data_to_send())
    (request,) = list(server.events())
    assert isinstance(request, Request)
    assert request.target == "/$servicebus/websocket" and request.subprotocols == ["amqp"]
    assert (b"authorization", b"Bearer t") in request.extra_headers
    client.wrap(b"AMQP\x03\x01\x00\x00")  # held until the upgrade is accepted
    assert client.data_to_send() == b""
    assert client.receive_data(server.send(AcceptConnection(subprotocol=subprotocol))) == b""
    return client, server


def test_amqp_bytes_pass_both_ways_after_the_upgrade() -> None:
    client, server = accepted()
    server.receive_data(client.data_to_send())
    assert [e.data for e in server.events() if isinstance(e, BytesMessage)] == [b"AMQP\x03\x01\x00\x00"]
    wire = server.send(BytesMessage(data=b"AMQP")) + server.send(BytesMessage(data=b"\x00\x01\x00\x00"))
    assert client.receive_data(wire[:3]) + client.receive_data(wire[3:]) == b"AMQP\x00\x01\x00\x00"


def test_a_ping_is_answered_with_a_pong() -> None:
    client, server = accepted()
    client.data_to_send()
    assert client.receive_data(server.send(Ping(payload=b"are you there"))) == b""
    server.receive_data(client.data_to_send())
    assert [e.payload for e in server.events() if isinstance(e, Pong)] == [b"are you there"]


def test_an_upgrade_without_the_amqp_subprotocol_is_refused() -> None:
    with pytest.raises(WebSocketError, match="without the 'amqp' subprotocol"):
        accepted(subprotocol=None)


@pytest.mark.parametrize(
    ("event", "reason"),
    [(TextMessage(data="hello"), "a text WebSocket message"),
     (BytesMessage(data=b"x" * 200), r"larger than transport\.ws\.maxFrameSize \(100 bytes\)")],
)
def test_a_peer_breaking_the_binding_gets_a_close_frame(event: object, reason: str) -> None:
    client, server = accepted(max_frame_size=100)
    client.data_to_send()
    with pytest.raises(WebSocketError, match=reason):
        client.receive_data(server.send(event))  # type: ignore[arg-type]
    server.receive_data(client.data_to_send())
    closes = [e for e in server.events() if isinstance(e, CloseConnection)]
    assert len(closes) == 1 and closes[0].code in (1003, 1009)


def test_a_refused_upgrade_and_garbage_are_errors_not_hangs() -> None:
    client = WebSocketClient("h")
    client.data_to_send()
    with pytest.raises(WebSocketError) as refused:
        client.receive_data(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 6\r\n\r\nno way")
    assert refused.value.status == 401 and "HTTP 401 (no way)" in str(refused.value)
    garbage = WebSocketClient("h")
    garbage.data_to_send()
    with pytest.raises(WebSocketError, match="protocol error"):
        garbage.receive_data(b"\x00\x01 not http at all\r\n\r\n")
