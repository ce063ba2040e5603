"""``amqp.traceFrames=true``: the client logs every frame in and out, decoded, on ``amqp_jms.frames``,
and what it logs is what the scripted peer read and wrote (the peer traces its own engine)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest
from proton import Message as PMessage
from proton import byte, symbol

from amqp_jms import ConnectionFactory, JMSSecurityException, Queue
from amqp_jms.provider.frames import redact
from amqp_jms.testing.peer import TestPeer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
_PERFORMATIVE = re.compile(r"^(\d+) (->|<-) (@[\w-]+\(\d+\).*)$", re.S)


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer(trace_frames=True) as p:
        yield p


def _frames(lines: list[str], direction: str) -> list[str]:
    """The performatives (channel + the decoded frame) travelling in ``direction``."""
    out = []
    for line in lines:
        m = _PERFORMATIVE.match(line)
        if m and m.group(2) == direction:
            out.append(f"{m.group(1)} {m.group(3)}")
    return out


def _kind(frame: str) -> str:
    m = re.match(r"\d+ @([\w-]+)", frame)
    assert m is not None
    return m.group(1)


def _converse(peer: TestPeer, url: str) -> str:
    """open, begin, a producer's attach + transfer + disposition, a consumer's attach + flow +
    transfer + disposition, then detach, end, close. Returns the connection id."""
    peer.expect_open()
    peer.expect_begin()
    peer.expect_attach(offer=10)
    peer.expect_transfer()
    peer.expect_attach()
    peer.expect_flow(send=[PMessage(body="back", annotations={symbol("x-opt-jms-msg-type"): byte(5)})])
    peer.expect_disposition()
    peer.expect_detach()
    peer.expect_detach()
    peer.expect_end()
    peer.expect_close()
    with ConnectionFactory(url).create_connection() as conn:
        session = conn.create_session()
        session.create_producer(Queue("q")).send(session.create_text_message("out"))
        consumer = session.create_consumer(Queue("q"))
        conn.start()
        m = consumer.receive(2000)
        assert m is not None and m.get_body(str) == "back"
        cid = conn.connection_id()
        consumer.close()
        session.close()
    peer.wait()
    return cid


def test_logged_frames_are_the_frames_the_peer_saw_and_sent(
    peer: TestPeer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="amqp_jms.frames")
    cid = _converse(peer, peer.url + FAST + "&amqp.traceFrames=true")
    records = [r for r in caplog.records if r.name == "amqp_jms.frames"]
    assert records and all(r.levelno == logging.DEBUG for r in records)
    assert all(r.connection_id == cid and f"[connection={cid}] " in r.getMessage() for r in records)
    client = [r.getMessage().split("] ", 1)[1] for r in records]
    peer_lines = [redact(line.removeprefix("FRAME: ")) for line in peer.frames]
    sent, received = _frames(client, "->"), _frames(client, "<-")
    # every frame the client logged as sent is, decoded alike, one the peer logged as read, in
    # order; and the other way round
    assert sent == _frames(peer_lines, "<-")
    assert received == _frames(peer_lines, "->")
    kinds = [_kind(f) for f in sent]
    assert kinds[:4] == ["sasl-init", "open", "begin", "attach"]
    both = set(kinds) | {_kind(f) for f in received}
    assert {"open", "begin", "attach", "flow", "transfer", "disposition", "detach", "end", "close"} <= both
    assert "transfer" in kinds and "disposition" in kinds  # our send, our acknowledgement
    assert any('@transfer(20)' in f and "back" in f for f in received)


def test_frame_trace_is_off_by_default(peer: TestPeer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="amqp_jms.frames")
    peer.expect_open()
    peer.expect_begin()
    peer.expect_end()
    peer.expect_close()
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        conn.create_session()
        assert conn._provider.engine.transport.tracer is None  # no per-frame work at all
    peer.wait()
    assert not [r for r in caplog.records if r.name == "amqp_jms.frames"]


def test_sasl_credentials_are_not_logged() -> None:
    line = r'0 -> @sasl-init(65) [mechanism=:PLAIN, initial-response=b"\x00user\x00s3cr\"et"]'
    assert "s3cr" not in redact(line) and "mechanism=:PLAIN" in redact(line)
    with TestPeer(trace_frames=True) as peer:
        records: list[logging.LogRecord] = []

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                records.append(record)

        frames = logging.getLogger("amqp_jms.frames")
        keep, level = Keep(), frames.level
        frames.addHandler(keep)
        frames.setLevel(logging.DEBUG)
        try:
            url = peer.url.replace("amqp://", "amqp://user:s3cret@") + FAST + "&amqp.traceFrames=true"
            with pytest.raises(JMSSecurityException):  # (the peer knows no users)
                ConnectionFactory(url).create_connection().create_session()
        finally:
            frames.removeHandler(keep)
            frames.setLevel(level)
    text = "\n".join(r.getMessage() for r in records)
    assert "@sasl-init" in text and "s3cret" not in text
