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


def _sasl_mechanisms_frame(offered: object) -> bytes:
    from proton import Data, Described, ulong

    d = Data()
    d.put_object(Described(ulong(0x40), [offered]))
    body = d.encode()
    return (8 + len(body)).to_bytes(4, "big") + bytes([2, 1, 0, 0]) + body  # doff 2, SASL frame


def test_a_client_engine_reads_the_mechanisms_its_peer_offered() -> None:
    """What proton reads but does not expose, for the error that says why no mechanism fit."""
    from proton import UNDESCRIBED, Array, Data, symbol

    from amqp_jms.engine import SaslConfig

    header = b"AMQP\x03\x01\x00\x00"
    offered = Array(UNDESCRIBED, Data.SYMBOL, symbol("SCRAM-SHA-256"), symbol("PLAIN"))
    frame = _sasl_mechanisms_frame(offered)
    eng = Engine(sasl=SaslConfig(mechanisms="EXTERNAL"))
    eng.receive_data(header + frame[:5])  # in pieces, as a socket may deliver it
    assert eng.sasl_offered is None
    eng.receive_data(frame[5:])
    assert eng.sasl_offered == ("SCRAM-SHA-256", "PLAIN")
    single = Engine(sasl=SaslConfig())
    single.receive_data(header + _sasl_mechanisms_frame(symbol("ANONYMOUS")))  # one symbol, no array
    assert single.sasl_offered == ("ANONYMOUS",)
    plain = Engine(sasl=SaslConfig())
    plain.receive_data(b"AMQP\x00\x01\x00\x00")  # a peer that skipped SASL
    assert plain.sasl_offered is None
    server = Engine(server=True, sasl=SaslConfig())
    server.receive_data(header + frame)
    assert server.sasl_offered is None  # only a client keeps its first input
