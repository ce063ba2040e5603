"""The shared sans-IO engine: bytes in, events out, no I/O of its own."""

from __future__ import annotations

import ast
import pathlib

from proton import Event

import amqp_jms.engine as engine_pkg
from amqp_jms.engine import Engine, EngineError

FORBIDDEN = {"asyncio", "socket", "threading", "time", "selectors", "ssl"}


def test_engine_package_imports_no_io_modules() -> None:
    root = pathlib.Path(engine_pkg.__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module.split(".")[0]]
            assert not FORBIDDEN & set(names), f"{path.name} imports {FORBIDDEN & set(names)}"


def _pump(a: Engine, b: Engine, on_event=None, rounds: int = 10) -> None:  # type: ignore[no-untyped-def]
    for _ in range(rounds):
        # b"" means EOF to receive_data, so only non-empty chunks are fed
        if out := a.data_to_send():
            b.receive_data(out)
        if out := b.data_to_send():
            a.receive_data(out)
        for eng in (a, b):
            for ev in eng.events():
                if on_event:
                    on_event(eng, ev)


def _accept(eng: Engine, ev) -> None:  # type: ignore[no-untyped-def]
    if ev.type == Event.CONNECTION_REMOTE_OPEN and eng.server:
        eng.connection.open()
    if ev.type == Event.CONNECTION_REMOTE_CLOSE and eng.server:
        eng.connection.close()


def test_client_and_server_engines_open_and_close_over_bytes_only() -> None:
    client, server = Engine(), Engine(server=True)
    client.connection.container = "c1"
    client.connection.open()
    _pump(client, server, _accept)
    assert server.connection.remote_container == "c1"
    assert client.connection.state & client.connection.REMOTE_ACTIVE
    client.close()
    _pump(client, server, _accept)
    assert client.connection.state & client.connection.REMOTE_CLOSED
    assert client.error is None


def test_garbage_input_ends_connection_with_a_decode_error_not_an_exception() -> None:
    server = Engine(server=True)
    server.receive_data(b"AMQP\x00\x01\x00\x00" + b"\xff" * 64)
    out = server.data_to_send()
    list(server.events())
    assert out  # it answers (header + close with error) rather than raising
    err = server.error
    assert isinstance(err, EngineError)
    assert err.name.startswith("amqp:")


def test_wrong_protocol_header_is_refused() -> None:
    server = Engine(server=True)
    server.receive_data(b"GET / HTTP/1.1\r\n\r\n")
    server.data_to_send()
    list(server.events())
    assert server.error is not None


def test_eof_marks_tail_closed_and_idle_tick_returns_deadline() -> None:
    client = Engine(idle_timeout_s=2.0)
    server = Engine(server=True)
    client.connection.open()
    _pump(client, server, _accept)
    deadline = client.tick(100.0)
    assert deadline > 100.0
    client.receive_data(b"")
    client.abort()
    assert client.closed
