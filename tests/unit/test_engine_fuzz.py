"""Whatever bytes a peer sends, the engine never raises: it ends the connection with an AMQP
error the adapter can report (the broker and the provider feed it untrusted socket data)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqp_jms.engine import Engine

AMQP_HEADER = b"AMQP\x00\x01\x00\x00"


def _open_frame_bytes() -> bytes:
    """A real client's first bytes: protocol header and open frame."""
    client = Engine()
    client.connection.container = "fuzz"
    client.connection.open()
    return client.data_to_send()


OPEN = _open_frame_bytes()


def _feed(server: Engine, chunks: list[bytes]) -> None:
    for chunk in chunks:
        server.receive_data(chunk)
        server.data_to_send()
        list(server.events())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=1, max_size=200), st.integers(1, 64))
def test_random_bytes_after_open_never_raise(junk: bytes, split: int) -> None:
    server = Engine(server=True)
    data = OPEN + junk
    _feed(server, [data[i : i + split] for i in range(0, len(data), split)])
    server.receive_data(b"")  # then EOF: the connection is over either way
    server.data_to_send()
    list(server.events())
    assert server.closed
    err = server.error
    assert err is not None and err.name.startswith("amqp:")  # the peer vanished mid-connection


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=1, max_size=120))
def test_random_bytes_instead_of_a_header_end_with_an_error(junk: bytes) -> None:
    server = Engine(server=True)
    _feed(server, [junk])
    server.receive_data(b"")
    server.data_to_send()
    list(server.events())
    if not AMQP_HEADER.startswith(junk) and not junk.startswith(AMQP_HEADER):
        assert server.error is not None
