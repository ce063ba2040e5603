"""amqp-jms over WebSocket (``amqpws://``, ``amqpwss://``) to rhea listening with npm ``ws``: an
AMQP stack and a WebSocket stack that share no code with proton or wsproto."""

from __future__ import annotations

import contextlib
import queue
import types
from pathlib import Path

import pytest

from amqp_jms import ConnectionFactory
from amqp_jms.exceptions import IllegalStateException, JMSException

pytestmark = pytest.mark.rhea


def roundtrip(url: str, body: str = "hello over ws", **options: str) -> str | None:
    with ConnectionFactory(url, **options).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        queue = session.create_queue("orders")
        session.create_producer(queue).send(session.create_text_message(body))
        got = session.create_consumer(queue).receive(5000)
        return got.get_text() if got is not None else None


def test_amqpws_carries_messages_to_the_path_with_the_headers_asked_for(rhea: types.ModuleType) -> None:
    with rhea.start("ws_server.js", {"path": "/amqp"}) as server:
        port = server.ready()["port"]
        url = (f"amqpws://127.0.0.1:{port}/amqp?amqp.saslLayer=false"
               "&transport.ws.httpHeader.X-Tenant=blue&transport.ws.httpHeader.Authorization=Basic%20eDp5")
        assert roundtrip(url) == "hello over ws"
        seen = server.result()
    assert seen["upgrades"] == [{"path": "/amqp", "protocols": "amqp",
                                 "headers": {"authorization": "Basic eDp5", "x-tenant": "blue"}}]
    assert seen["messages"] == [{"address": "orders", "body": "hello over ws"}]


def test_amqpwss_verifies_the_server_certificate(rhea: types.ModuleType, pki: dict[str, Path]) -> None:
    tls = {"key": str(pki["server-key"]), "cert": str(pki["server"])}
    with rhea.start("ws_server.js", {"path": "/", "tls": tls}) as server:
        port = server.ready()["port"]
        trusted = f"amqpwss://127.0.0.1:{port}?transport.trustStoreLocation={pki['server']}"
        assert roundtrip(trusted, "secret words") == "secret words"
        server.result()
    with rhea.start("ws_server.js", {"path": "/", "tls": tls}) as server:
        port = server.ready()["port"]
        conn = ConnectionFactory(f"amqpwss://127.0.0.1:{port}").create_connection()
        with pytest.raises(JMSException, match="certificate"):  # not in the default trust store
            conn.start()
        conn.close()


def test_a_refused_upgrade_names_the_http_status(rhea: types.ModuleType) -> None:
    with rhea.start("ws_server.js", {"path": "/amqp"}) as server:
        port = server.ready()["port"]
        conn = ConnectionFactory(f"amqpws://127.0.0.1:{port}/elsewhere?amqp.saslLayer=false",
                                 **{"jms.connectTimeout": "5000"}).create_connection()
        with pytest.raises(JMSException, match=r"refused the WebSocket upgrade: HTTP 400"):
            conn.start()
        conn.close()


def test_a_frame_over_ws_max_frame_size_fails_the_connection(rhea: types.ModuleType) -> None:
    with rhea.start("ws_server.js", {"path": "/"}) as server:
        port = server.ready()["port"]
        url = f"amqpws://127.0.0.1:{port}?amqp.saslLayer=false&transport.ws.maxFrameSize=4096"
        failures: queue.Queue[JMSException] = queue.Queue()
        with ConnectionFactory(url).create_connection() as conn:
            conn.set_exception_listener(failures.put)
            conn.start()
            session = conn.create_session()
            big = session.create_queue("big")
            session.create_producer(big).send(session.create_text_message("x" * 20000))
            consumer = session.create_consumer(big)
            # the connection fails instead of buffering the frame; the listener is told why (the
            # receive in progress returns None, or raises if it starts after the failure)
            with contextlib.suppress(IllegalStateException):
                assert consumer.receive(5000) is None
            assert "transport.ws.maxFrameSize (4096 bytes)" in str(failures.get(timeout=5))


def test_failover_moves_from_a_dead_tcp_server_to_a_websocket_one(rhea: types.ModuleType) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    with rhea.start("ws_server.js", {"path": "/ws"}) as server:
        port = server.ready()["port"]
        url = (f"failover:(amqp://127.0.0.1:{dead},amqpws://127.0.0.1:{port}/ws)"
               "?failover.nested.amqp.saslLayer=false&failover.maxReconnectAttempts=3")
        assert roundtrip(url, "either way") == "either way"
        seen = server.result()
    assert [u["path"] for u in seen["upgrades"]] == ["/ws"]
