"""The C transfer-and-write of a waiting send and the C read of its answer (``write_through``,
``_ctransfer``) against the Python paths they replace: for the same link the socket gets the
bytes the Python path would write; output that is not one plain frame stays in proton; what a
full socket does not take comes back, already taken from proton, so that nothing is written
twice or lost; its frame rule is ``outgoing._one_plain_frame``'s. The read puts into the engine
what the Python read would, and finds the answer alone exactly when the Python path's look
(``Engine.sole_event``) does; nothing to read, the socket's end and a closed input read nothing.
``AMQP_JMS_NO_ACCEL=1`` turns both off."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from proton import Delivery, Event

from amqp_jms.engine import Engine
from amqp_jms.engine.raw import addr, ffi, lib, ptr_addr
from amqp_jms.provider.amqp import write_through
from amqp_jms.provider.amqp.outgoing import _one_plain_frame

transfer_out, c_one_plain_frame = write_through.transfer_out, write_through.one_plain_frame
read_in = write_through.read_in
pytestmark = pytest.mark.skipif(transfer_out is None, reason="the C accelerator _ctransfer was not built")


def _pump(a: Engine, b: Engine) -> None:
    for _ in range(10):
        if out := a.data_to_send():
            b.receive_data(out)
        if out := b.data_to_send():
            a.receive_data(out)
        for ev in b.events():
            if ev.type == Event.CONNECTION_REMOTE_OPEN:
                b.connection.open()
            elif ev.type == Event.SESSION_REMOTE_OPEN:
                ev.session.open()
            elif ev.type == Event.LINK_REMOTE_OPEN:
                ev.link.source.copy(ev.link.remote_source)
                ev.link.target.copy(ev.link.remote_target)
                ev.link.open()
                ev.link.flow(100)
        list(a.events())


def _sender() -> tuple[Engine, Engine, object]:
    """A client engine with a sender attached and given credit by a server engine (frames of up
    to 1 MiB: a transfer of the sizes here is one frame)."""
    client, server = Engine(max_frame_size=1 << 20), Engine(server=True, max_frame_size=1 << 20)
    client.connection.open()
    ssn = client.connection.session()
    ssn.open()
    snd = ssn.sender("s")
    snd.target.address = "q"
    snd.open()
    _pump(client, server)
    assert snd.credit == 100
    # proton's output buffer starts at 8 KiB, so a bigger transfer's first output is part of a
    # frame (left for the provider's write); one big transfer grows it, as on a busy connection
    server.receive_data(_python_transfer(client, snd, b"0", bytes(70_000)))
    return client, server, snd


def _python_transfer(client: Engine, snd: object, tag: bytes, data: bytes) -> bytes:
    """The provider's Python path: the transfer into proton-c, then proton's output."""
    impl = snd._impl  # type: ignore[attr-defined]
    lib.pn_delivery(impl, (len(tag), ffi.from_buffer(tag)))
    lib.pn_link_send(impl, ffi.from_buffer(data), len(data))
    lib.pn_link_advance(impl)
    return client.data_to_send()


Pair = tuple[socket.socket, socket.socket]


@pytest.fixture
def pair() -> Iterator[Pair]:
    a, b = socket.socketpair()
    a.setblocking(False)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def _read_all(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        out += sock.recv(n - len(out))
    return out


@pytest.mark.parametrize("size", [0, 1, 256, 20_000])
def test_the_socket_gets_what_the_python_path_writes(pair: Pair, size: int) -> None:
    assert transfer_out is not None
    a, b = pair
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    ours, ours_server, ours_snd = _sender()
    theirs, _, theirs_snd = _sender()
    for i in range(1, 4):
        tag = str(i).encode()
        expected = _python_transfer(theirs, theirs_snd, tag, data)
        delivery, rest = transfer_out(addr(ours_snd), tag, data, ours.transport_addr, a.fileno())
        assert rest is None
        assert _read_all(b, len(expected)) == expected
        assert ours.data_to_send() == b""  # taken from proton once written
        d = lib.pn_link_current(ours_snd._impl)  # type: ignore[attr-defined]
        assert delivery != ptr_addr(d)  # advanced past it: a new one is current
        assert ffi.unpack(lib.pn_delivery_tag(ffi.cast("pn_delivery_t *", delivery)).start, len(tag)) == tag
    ours_server.receive_data(expected)  # the server takes the last frame as a transfer
    assert any(ev.type == Event.DELIVERY for ev in ours_server.events())


def test_output_that_is_not_one_plain_frame_stays_in_proton(pair: Pair) -> None:
    assert transfer_out is not None
    a, b = pair
    client, _, snd = _sender()
    other = snd.session.sender("other")  # type: ignore[attr-defined]
    other.target.address = "q2"
    other.open()  # an attach pending before the transfer
    delivery, rest = transfer_out(addr(snd), b"1", b"payload", client.transport_addr, a.fileno())
    assert rest == write_through.LEFT
    assert delivery
    b.setblocking(False)
    with pytest.raises(BlockingIOError):
        b.recv(100)  # nothing was written
    out = client.data_to_send()  # the provider's own write takes it, attach and transfer
    assert len(out) > 2 * 8 and not _one_plain_frame(out)


def test_what_a_full_socket_does_not_take_comes_back_taken_from_proton(
    pair: Pair,
) -> None:
    assert transfer_out is not None
    a, b = pair
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    client, _, snd = _sender()
    twin_client, _, twin = _sender()
    data = os.urandom(60_000)
    expected = _python_transfer(twin_client, twin, b"1", data)
    _, rest = transfer_out(addr(snd), b"1", data, client.transport_addr, a.fileno())
    assert isinstance(rest, bytes) and 0 < len(rest) < len(expected)
    assert client.data_to_send() == b""  # nothing left in proton to be written twice
    written = _read_all(b, len(expected) - len(rest))
    assert written + rest == expected


def test_a_socket_that_takes_nothing_gives_the_whole_frame_back(pair: Pair) -> None:
    assert transfer_out is not None
    a, _ = pair
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    while True:  # fill it
        try:
            a.send(b"\0" * 4096)
        except BlockingIOError:
            break
    client, _, snd = _sender()
    _, rest = transfer_out(addr(snd), b"1", b"hello", client.transport_addr, a.fileno())
    assert isinstance(rest, bytes) and _one_plain_frame(rest)
    assert client.data_to_send() == b""


def test_a_closed_socket_gives_the_frame_back_for_the_transport_to_meet_the_error(
    pair: Pair,
) -> None:
    assert transfer_out is not None
    a, b = pair
    b.close()
    client, _, snd = _sender()
    _, rest = transfer_out(addr(snd), b"1", b"hello", client.transport_addr, a.fileno())
    assert isinstance(rest, bytes) and _one_plain_frame(rest)  # (no SIGPIPE: the test lives)


def test_bad_arguments_are_refused_before_proton_is_touched() -> None:
    assert transfer_out is not None
    with pytest.raises(TypeError):
        transfer_out(1, "tag", b"data", 1, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        transfer_out(0, b"tag", b"data", 0, 0)


def _frame(body: bytes, doff: int = 2, kind: int = 0) -> bytes:
    pad = b"\0" * ((doff - 2) * 4)
    return struct.pack(">IBBH", 8 + len(pad) + len(body), doff, kind, 0) + pad + body


REAL_FRAMES = [
    _frame(b"\x00\x53\x14\xc0\x05\x03\x43\x43\xa0\x00"),  # a transfer
    _frame(b"\x00\x53\x12\xc0\x03\x01\xa1\x00"),  # an attach
    _frame(b"\x00\x80\x00\x00\x00\x00\x00\x00\x00\x12\x45"),  # an attach by its long code
    _frame(b"\x00\x53\x15\x45", kind=1),  # a SASL frame
    _frame(b""),  # an empty frame (a heartbeat)
    b"AMQP\x00\x01\x00\x00",
]


@pytest.mark.parametrize("data", REAL_FRAMES + [f + f for f in REAL_FRAMES] + [f[:-1] for f in REAL_FRAMES])
def test_the_frame_rule_is_the_outgoing_editors(data: bytes) -> None:
    assert c_one_plain_frame is not None
    assert c_one_plain_frame(data) == _one_plain_frame(data)


@settings(max_examples=2000, deadline=None)
@given(st.binary(max_size=40), st.integers(0, 255), st.integers(0, 3))
def test_the_frame_rule_agrees_with_its_twin_on_any_bytes(body: bytes, doff: int, cut: int) -> None:
    assert c_one_plain_frame is not None
    for data in (body, _frame(body, max(doff % 12, 0)), _frame(body)[: max(0, len(body) + 8 - cut)]):
        assert c_one_plain_frame(data) == _one_plain_frame(data)


# -- the answer's read ------------------------------------------------------------------------


def _answered(flow: bool = False) -> tuple[Engine, int, bytes]:
    """A client whose transfer the server accepted (and settled): the client engine (its events
    taken), the delivery's address, and the server's answer bytes (with a flow after it)."""
    client, server, snd = _sender()
    impl = snd._impl  # type: ignore[attr-defined]
    d = lib.pn_delivery(impl, (1, ffi.from_buffer(b"1")))
    lib.pn_link_send(impl, ffi.from_buffer(b"payload"), 7)
    lib.pn_link_advance(impl)
    server.receive_data(client.data_to_send())
    list(client.events())
    for ev in server.events():
        if ev.type == Event.DELIVERY and ev.delivery.tag == "1":
            ev.delivery.update(Delivery.ACCEPTED)
            ev.delivery.settle()
            if flow:
                ev.link.flow(5)
    return client, ptr_addr(d), server.data_to_send()


def _python_read(client: Engine, delivery: int, data: bytes) -> bool:
    """The Python path: the bytes into the engine, then ``_answered_alone``'s look."""
    client.receive_data(data)
    ev = client.sole_event()
    if ev is None or lib.pn_event_type(ev) != lib.PN_DELIVERY:
        return False
    return ptr_addr(lib.pn_event_delivery(ev)) == delivery


@pytest.mark.parametrize("flow", [False, True], ids=["answer", "answer and flow"])
@pytest.mark.parametrize("match", [True, False], ids=["its delivery", "another"])
def test_the_read_puts_in_what_the_python_read_does_and_finds_the_answer_alone_as_it_does(
    pair: Pair, flow: bool, match: bool,
) -> None:
    assert read_in is not None
    a, b = pair
    ours, delivery, answer = _answered(flow)
    theirs, their_delivery, their_answer = _answered(flow)
    assert answer == their_answer
    b.sendall(answer)
    status = read_in(a.fileno(), ours.transport_addr, ours.collector_addr, delivery if match else 0)
    alone = _python_read(theirs, their_delivery if match else 0, their_answer)
    assert status == (write_through.SOLE if alone else write_through.TAKEN)
    assert alone == (match and not flow)
    d = ffi.cast("pn_delivery_t *", delivery)
    assert lib.pn_delivery_remote_state(d) == lib.PN_ACCEPTED and lib.pn_delivery_settled(d)
    assert [ev.type for ev in ours.events()] == [ev.type for ev in theirs.events()]


def test_the_read_reads_nothing_when_there_is_nothing_or_the_socket_ended(pair: Pair) -> None:
    assert read_in is not None
    a, b = pair
    client, delivery, _ = _answered()
    args = (a.fileno(), client.transport_addr, client.collector_addr, delivery)
    assert read_in(*args) == write_through.AGAIN
    b.close()
    assert read_in(*args) == write_through.GONE
    assert read_in(*args) == write_through.GONE  # (the end stays readable, for the loop)
    assert client.sole_event() is None  # nothing went in


def test_the_read_reads_nothing_once_the_engine_takes_no_input(pair: Pair) -> None:
    assert read_in is not None
    a, b = pair
    client, delivery, answer = _answered()
    client.transport.close_tail()
    b.sendall(answer)
    assert read_in(a.fileno(), client.transport_addr, client.collector_addr, delivery) == write_through.GONE
    assert a.recv(len(answer)) == answer  # still on the socket: nothing was taken from it


def test_no_accel_turns_it_off() -> None:
    code = ("from amqp_jms.provider.amqp import write_through as w; "
            "print(w.transfer_out is None and w.read_in is None)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "AMQP_JMS_NO_ACCEL": "1"})
    assert run.stdout.strip() == "True", run.stderr
