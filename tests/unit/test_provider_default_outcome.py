"""Consumer sources carry default-outcome modified{delivery-failed}: proton's own attach frames,
edited by OutgoingFrames, read back with our codec and accepted by a second proton engine."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from proton import Collector, Connection, Data, Event, Terminus, Transport, symbol, ulong

from amqp_jms.mapping.codec import decode_value
from amqp_jms.provider.amqp.outgoing import OutgoingFrames, with_default_outcome
from amqp_jms.provider.amqp.terminus import data_symbols, has_filter
from amqp_jms.types import Described


def _client_output(build: Any, sasl: bool = False) -> bytes:
    """Everything a proton client transport writes after ``build(connection)``."""
    conn = Connection()
    conn.container = "c1"
    t = Transport()
    if sasl:
        t.sasl().allowed_mechs("ANONYMOUS")
    t.bind(conn)
    conn.open()
    build(conn)
    out = b""
    while (n := t.pending()) > 0:
        out += t.peek(n) or b""
        t.pop(n)
    return out


def _receiver(conn: Connection, name: str = "qpid-jms:receiver:1", selector: str | None = None) -> None:
    ssn = conn.session()
    ssn.open()
    rcv = ssn.receiver(name)
    rcv.source.address = "queue-a"
    rcv.source.capabilities.put_array(False, Data.SYMBOL)
    rcv.source.capabilities.enter()
    rcv.source.capabilities.put_symbol(symbol("queue"))
    rcv.source.capabilities.exit()
    if selector is not None:
        rcv.source.filter.put_map()
        rcv.source.filter.enter()
        rcv.source.filter.put_symbol(symbol("jms-selector"))
        rcv.source.filter.put_described()
        rcv.source.filter.enter()
        rcv.source.filter.put_ulong(ulong(0x0000468C00000004))
        rcv.source.filter.put_string(selector)
        rcv.source.filter.exit()
        rcv.source.filter.exit()
    rcv.source.durability = Terminus.DELIVERIES
    rcv.target.address = None
    rcv.open()


def _sender(conn: Connection) -> None:
    ssn = conn.session()
    ssn.open()
    snd = ssn.sender("qpid-jms:sender:1")
    snd.target.address = "queue-b"
    snd.open()


def _frames(stream: bytes) -> list[tuple[int, bytes]]:
    """(type, body) of every frame after the protocol headers."""
    out, pos = [], 0
    while pos < len(stream):
        if stream.startswith(b"AMQP", pos):
            pos += 8
            continue
        size = int.from_bytes(stream[pos : pos + 4], "big")
        doff = stream[pos + 4] * 4
        out.append((stream[pos + 5], stream[pos + doff : pos + size]))
        pos += size
    return out


def _attaches(stream: bytes) -> list[list[Any]]:
    found = []
    for ftype, body in _frames(stream):
        if ftype == 0 and body:
            value, _ = decode_value(body)
            if isinstance(value, Described) and value.descriptor == 0x12:
                found.append(value.value)
    return found


def _accept(stream: bytes) -> list[Any]:
    """Feed ``stream`` to a proton server engine; return its remote sources of opened links."""
    conn = Connection()
    coll = Collector()
    conn.collect(coll)
    t = Transport(Transport.SERVER)
    t.bind(conn)
    t.push(stream)
    assert t.condition is None, t.condition
    links = []
    while (ev := coll.peek()) is not None:
        if ev.type == Event.LINK_REMOTE_OPEN:
            links.append(ev.link)
        coll.pop()
    return links


def test_a_receiver_attach_gains_modified_delivery_failed() -> None:
    raw = _client_output(_receiver)
    (before,) = _attaches(raw)
    assert len(before[5].value) < 9 or before[5].value[8] is None  # proton writes none
    edited = OutgoingFrames().feed(raw)
    (after,) = _attaches(edited)
    source = after[5].value
    outcome = source[8]
    assert isinstance(outcome, Described) and outcome.descriptor == 0x27
    assert outcome.value == [True]
    # everything else in the attach is as proton wrote it
    assert after[:5] == before[:5] and after[6:] == before[6:]
    assert source[:8] == before[5].value[:8]
    assert source[9:] == before[5].value[9:]


def test_proton_accepts_the_edited_attach_with_every_other_field_intact() -> None:
    edited = OutgoingFrames().feed(_client_output(lambda c: _receiver(c, selector="color = 'blue'")))
    (link,) = _accept(edited)
    src = link.remote_source
    assert link.name == "qpid-jms:receiver:1" and link.is_sender  # the server's end sends
    assert src.address == "queue-a"
    assert src.durability == Terminus.DELIVERIES
    assert data_symbols(src.capabilities) == {"queue"}
    assert has_filter(src.filter, "jms-selector")


def test_sender_attach_and_other_frames_pass_untouched() -> None:
    raw = _client_output(_sender)
    assert OutgoingFrames().feed(raw) == raw


def test_a_default_outcome_already_set_is_left_alone() -> None:
    raw = _client_output(_receiver)
    once = OutgoingFrames().feed(raw)
    assert OutgoingFrames().feed(once) == once
    (attach,) = _attaches(once)
    body = next(b for t, b in _frames(once) if t == 0 and b.startswith(b"\x00\x53\x12"))
    assert with_default_outcome(body) is None
    assert attach[5].value[8].descriptor == 0x27


def test_the_sasl_layer_is_followed() -> None:
    """Through a whole SASL exchange with a proton server: the client's edited stream."""
    client, server = Connection(), Connection()
    client.container = "c1"
    ct, st_ = Transport(), Transport(Transport.SERVER)
    ct.sasl().allowed_mechs("ANONYMOUS")
    st_.sasl().allowed_mechs("ANONYMOUS")
    ct.bind(client)
    st_.bind(server)
    client.open()
    _receiver(client)
    frames, sent = OutgoingFrames(), b""
    for _ in range(10):
        while (n := ct.pending()) > 0:
            chunk = frames.feed(ct.peek(n) or b"")
            ct.pop(n)
            sent += chunk
            st_.push(chunk)
        while (n := st_.pending()) > 0:
            ct.push(st_.peek(n) or b"")
            st_.pop(n)
    assert sent.startswith(b"AMQP\x03") and b"AMQP\x00" in sent
    assert st_.condition is None
    sasl_end = sent.index(b"AMQP\x00")
    (after,) = _attaches(sent[sasl_end:])
    assert after[5].value[8].descriptor == 0x27
    assert any(t == 1 for t, _ in _frames(sent[:sasl_end]))  # SASL frames went through as they were


def test_a_stream_that_is_not_frames_passes_through_unchanged() -> None:
    garbage = b"\x00\x00\x00\x02" + bytes(20)
    f = OutgoingFrames()
    assert f.feed(garbage) == garbage
    raw = _client_output(_receiver)
    assert f.feed(raw) == raw  # lost track: nothing more is edited, nothing is dropped


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12), many=st.integers(1, 4))
def test_any_split_of_the_stream_gives_the_same_bytes(cuts: list[int], many: int) -> None:
    def build(conn: Connection) -> None:
        for i in range(many):
            _receiver(conn, name=f"r{i}", selector="x > 1" if i % 2 else None)
            _sender(conn)

    raw = _client_output(build)
    whole = OutgoingFrames().feed(raw)
    f = OutgoingFrames()
    pieces, last = [], 0
    for c in [*sorted({c % (len(raw) + 1) for c in cuts}), len(raw)]:
        pieces.append(f.feed(raw[last:c]))
        last = c
    assert b"".join(pieces) == whole
    assert len(_attaches(whole)) == 2 * many
    assert sum(1 for a in _attaches(whole) if len(a[5].value) > 8 and a[5].value[8] is not None) == many


def _attach_frame() -> bytes:
    raw = _client_output(_receiver)
    pos = raw.index(b"\x00\x53\x12") - 8  # proton writes doff 2: the frame header is 8 bytes
    size = int.from_bytes(raw[pos : pos + 4], "big")
    return raw[pos : pos + size]


@settings(max_examples=60, deadline=None)
@given(
    layout=st.lists(st.one_of(st.just(-1), st.integers(0, 70_000)), min_size=1, max_size=8),
    chunk=st.integers(1, 70_000),
)
def test_attaches_between_transfers_of_any_size_and_any_chunking(layout: list[int], chunk: int) -> None:
    attach = _attach_frame()
    edited = OutgoingFrames().feed(b"AMQP\x00\x01\x00\x00" + attach)[8:]
    assert edited != attach

    def transfer(n: int) -> bytes:  # a transfer frame (descriptor 0x14) with an n-byte payload
        body = b"\x00\x53\x14\x45" + bytes([0x12]) * n  # payload bytes that look like attach codes
        return (8 + len(body)).to_bytes(4, "big") + b"\x02\x00\x00\x01" + body

    frames = [attach if n < 0 else transfer(n) for n in layout]
    expected = b"AMQP\x00\x01\x00\x00" + b"".join(edited if n < 0 else f for n, f in zip(layout, frames))
    stream = b"AMQP\x00\x01\x00\x00" + b"".join(frames)
    f = OutgoingFrames()
    got = b"".join(f.feed(stream[i : i + chunk]) for i in range(0, len(stream), chunk))
    assert got == expected
