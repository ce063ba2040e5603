"""The broker's WebSocket listener (``ws_port``): AMQP over WebSocket, subprotocol ``amqp``, plain
and TLS, with the TCP listener's limits and timeouts, and what hostile input gets."""

from __future__ import annotations

import socket
import time
import types
from pathlib import Path
from typing import Any

import pytest
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    RejectConnection,
    Request,
    TextMessage,
)

from amqp_jms import ConnectionFactory
from amqp_jms.broker.limits import BrokerLimits


def roundtrip(url: str, body: str) -> str | None:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        queue = session.create_queue("ws-q")
        session.create_producer(queue).send(session.create_text_message(body))
        got = session.create_consumer(queue).receive(5000)
        return got.get_text() if got is not None else None


def test_amqpws_carries_messages_bigger_than_a_websocket_frame(broker_factory: Any) -> None:
    b = broker_factory(ws_port=0, ws_path="/amqp")
    assert b.ws_url.startswith("amqpws://127.0.0.1:") and b.ws_url.endswith("/amqp")
    body = "x" * 300_000  # several 64 KiB WebSocket frames each way
    assert roundtrip(b.ws_url, body) == body


def test_amqpwss_with_a_client_certificate_signs_in_with_external(
    broker_factory: Any, pki: dict[str, Path]
) -> None:
    b = broker_factory(ws_port=0, users={"bob": "pw"}, tls_cert=str(pki["server"]),
                       tls_key=str(pki["server-key"]), tls_ca=str(pki["ca"]))
    assert b.ws_url.startswith("amqpwss://")
    url = (f"{b.ws_url}?transport.trustStoreLocation={pki['server']}&amqp.saslMechanisms=EXTERNAL"
           f"&transport.keyStoreLocation={pki['client']}&transport.keyLocation={pki['client-key']}")
    assert roundtrip(url, "certified") == "certified"


def upgrade(
    port: int, *, path: str = "/", subprotocols: tuple[str, ...] = ("amqp",)
) -> tuple[socket.socket, WSConnection, list[Any]]:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    ws = WSConnection(ConnectionType.CLIENT)
    s.sendall(ws.send(Request(host="127.0.0.1", target=path, subprotocols=list(subprotocols))))
    return s, ws, read_events(s, ws)


def read_events(s: socket.socket, ws: WSConnection) -> list[Any]:
    events: list[Any] = []
    while not events:
        data = s.recv(65536)
        ws.receive_data(data or None)
        events = list(ws.events())
        if not data:
            break
    return events


def closed_by_peer(s: socket.socket) -> bool:
    s.settimeout(5)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


@pytest.mark.parametrize(
    ("path", "subprotocols", "status"),
    [("/elsewhere", ("amqp",), 404), ("/amqp", ("mqtt",), 400), ("/amqp", (), 400)],
)
def test_an_upgrade_the_listener_cannot_serve_is_refused(
    broker_factory: Any, path: str, subprotocols: tuple[str, ...], status: int
) -> None:
    b = broker_factory(ws_port=0, ws_path="/amqp")
    s, _, events = upgrade(b.ws_port, path=path, subprotocols=subprotocols)
    assert isinstance(events[0], RejectConnection) and events[0].status_code == status
    assert closed_by_peer(s)
    s.close()


def test_not_http_at_all_is_refused_and_closed(broker_factory: Any) -> None:
    b = broker_factory(ws_port=0)
    with socket.create_connection(("127.0.0.1", b.ws_port), timeout=5) as s:
        s.sendall(b"AMQP\x00\x01\x00\x00" + b"\x00" * 64)  # a raw AMQP client on the WebSocket port
        first = s.recv(4096)
        assert first.startswith(b"HTTP/1.1 400")
        assert closed_by_peer(s)


@pytest.mark.parametrize("hostile", ["text", "oversized"])
def test_a_frame_breaking_the_binding_closes_the_connection(broker_factory: Any, hostile: str) -> None:
    b = broker_factory(ws_port=0, limits=BrokerLimits(max_websocket_frame_size=4096))
    s, ws, events = upgrade(b.ws_port)
    assert isinstance(events[0], AcceptConnection) and events[0].subprotocol == "amqp"
    event = TextMessage(data="hello") if hostile == "text" else BytesMessage(data=b"AMQP" + b"\x00" * 10000)
    s.sendall(ws.send(event))
    closes = [e for e in read_events(s, ws) if isinstance(e, CloseConnection)]
    assert closes and closes[0].code == (1003 if hostile == "text" else 1009)
    assert closed_by_peer(s)
    s.close()


def test_the_handshake_timeout_counts_from_the_socket_not_the_upgrade(broker_factory: Any) -> None:
    b = broker_factory(ws_port=0, limits=BrokerLimits(handshake_timeout=0.5))
    started = time.monotonic()
    s, _, events = upgrade(b.ws_port)  # upgraded, then silent: no SASL, no Open
    assert isinstance(events[0], AcceptConnection)
    assert closed_by_peer(s) and time.monotonic() - started < 4
    s.close()


def test_max_connections_holds_on_the_websocket_listener(broker_factory: Any) -> None:
    b = broker_factory(ws_port=0, limits=BrokerLimits(max_connections=1))
    first, _, events = upgrade(b.ws_port)
    assert isinstance(events[0], AcceptConnection)
    with socket.create_connection(("127.0.0.1", b.ws_port), timeout=5) as second:
        assert closed_by_peer(second)  # refused before any byte, as on the TCP port
    first.close()


@pytest.mark.rhea
def test_rhea_over_websocket_is_a_client_of_the_broker(broker_factory: Any, rhea: types.ModuleType) -> None:
    b = broker_factory(ws_port=0, ws_path="/ws")
    url = b.ws_url.replace("amqpws://", "ws://")
    out = rhea.run("ws_client.js", {"url": url, "address": "rhea-ws", "count": 3})
    assert out == {"protocol": "amqp", "received": ["m0", "m1", "m2"]}


def test_the_config_file_and_the_flags_set_the_websocket_listener(tmp_path: Path) -> None:
    from amqp_jms.broker.operations.cli import build_parser, config_from_args
    from amqp_jms.broker.operations.config import ConfigError, load_config

    path = tmp_path / "broker.toml"
    path.write_text('[listener]\nport = 0\nws_port = 0\nws_path = "/$servicebus/websocket"\n')
    opts = load_config(path).broker_options()
    assert (opts["ws_port"], opts["ws_path"]) == (0, "/$servicebus/websocket")
    args = build_parser().parse_args(["--config", str(path), "--ws-port", "5999", "--ws-path", "/ws"])
    assert (config_from_args(args).ws_port, config_from_args(args).ws_path) == (5999, "/ws")
    path.write_text('[listener]\nws_port = 70000\n')
    with pytest.raises(ConfigError, match=r"ws_port: expected 0\.\.65535"):
        load_config(path)


def test_failover_moves_from_amqpwss_to_amqp_between_embedded_brokers(
    broker_factory: Any, pki: dict[str, Path]
) -> None:
    """A failover list mixing schemes: TLS WebSocket first, plain TCP when that broker goes away."""
    first = broker_factory(ws_port=0, tls_cert=str(pki["server"]), tls_key=str(pki["server-key"]))
    second = broker_factory()
    events: list[tuple[str, str]] = []

    class Listener:
        def on_connection_established(self, uri: str) -> None:
            events.append(("established", uri))

        def on_connection_interrupted(self, uri: str) -> None:
            events.append(("interrupted", uri))

        def on_connection_restored(self, uri: str) -> None:
            events.append(("restored", uri))

        def on_connection_failure(self, exc: Exception) -> None:
            events.append(("failure", str(exc)))

    url = (f"failover:({first.ws_url},{second.url})?failover.initialReconnectDelay=0"
           f"&failover.reconnectDelay=50&failover.nested.transport.trustStoreLocation={pki['server']}")
    with ConnectionFactory(url).create_connection() as conn:
        conn.add_connection_listener(Listener())
        conn.start()
        session = conn.create_session()
        queue = session.create_queue("mixed")
        producer = session.create_producer(queue)
        producer.send(session.create_text_message("over amqpwss"))
        first.stop()
        producer.send(session.create_text_message("over amqp"))  # waits for the reconnect
        got = session.create_consumer(queue).receive(5000)
        assert got is not None and got.get_text() == "over amqp"
    kinds = [(kind, uri.split("?")[0]) for kind, uri in events]
    wss = first.ws_url.rstrip("/")  # the default path, "/", is not repeated in the listener's uri
    assert kinds == [("established", wss), ("interrupted", wss),
                     ("restored", second.url)], events
