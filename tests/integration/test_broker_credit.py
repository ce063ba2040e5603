"""A sender that ignores the link credit the broker granted loses that link, nothing more.

Raw frames over a socket (the project's codec): no AMQP client library can be made to send
beyond its credit, which is exactly what this peer does.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection
from test_broker_peer import (
    AMQP_HEADER,
    ATTACH,
    BEGIN,
    DETACH,
    FLOW,
    OPEN,
    TRANSFER,
    frame,
    parse_frames,
    raw_socket,
)

from amqp_jms.broker import Broker
from amqp_jms.broker.limits import AddressFullPolicy, BrokerLimits
from amqp_jms.types import Described, UByte, UInt, ULong

VALUE_SECTION = 0x77
Frame = tuple[int, int, list[Any]]


def read_frames_until(sock: socket.socket, *codes: int, timeout: float = 5.0) -> list[Frame]:
    """Read until a frame with one of the performatives ``codes`` arrives; the frames read."""
    sock.settimeout(timeout)
    data = AMQP_HEADER
    while True:
        chunk = sock.recv(65536)
        assert chunk, f"socket closed before performative {codes}: {data!r}"
        data += chunk
        try:
            frames = parse_frames(data[8:] if data[8:].startswith(AMQP_HEADER) else data)
        except Exception:
            continue
        if any(f[0] in codes for f in frames):
            return frames


def sender_link(broker: Broker, address: str) -> tuple[socket.socket, int]:
    """A raw connection with one presettled sending link to ``address``: (socket, credit granted)."""
    sock = raw_socket(broker.url)
    sock.sendall(
        AMQP_HEADER
        + frame(OPEN, ["greedy-peer"])
        + frame(BEGIN, [None, UInt(0), UInt(1 << 20), UInt(1 << 20)])
        + frame(ATTACH, ["greedy", UInt(0), False, UByte(1), UByte(0),
                         Described(ULong(0x28), []), Described(ULong(0x29), [address])])
    )
    frames = read_frames_until(sock, FLOW)
    flow = next(fields for code, _, fields in frames if code == FLOW)
    return sock, int(flow[6])  # link-credit


def transfers(first: int, count: int) -> bytes:
    from amqp_jms.mapping.codec import encode_value

    return b"".join(
        frame(TRANSFER, [UInt(0), UInt(i), str(i).encode(), UInt(0), True],
              payload=encode_value(Described(ULong(VALUE_SECTION), f"m{i}")))
        for i in range(first, first + count)
    )


def drain(broker: Broker, address: str) -> list[str]:
    c = BlockingConnection(broker.url, timeout=10)
    r = c.create_receiver(address, credit=100)
    bodies: list[str] = []
    while True:
        try:
            m: Message = r.receive(timeout=0.5)
        except Exception:
            break
        bodies.append(str(m.body))
        r.accept()
    c.close()
    return bodies


@pytest.fixture
def broker(broker_factory: Any) -> Broker:
    """A broker whose queues stop granting credit once they hold a few messages (``BLOCK``):
    the credit a sender was given then stops growing, so a burst beyond it is beyond it however
    the broker's reads split the burst. (Granting more between two reads is the broker's right,
    and a burst that a top-up covers sent nothing beyond its credit.)"""
    return broker_factory(data_dir=None, limits=BrokerLimits(
        queue_memory_limit=1_000, address_full_policy=AddressFullPolicy.BLOCK))


def overrun(sock: socket.socket, credit: int) -> list[Any]:
    """Send 3 transfers more than the credit granted; the broker's Detach fields.

    The burst may reach the broker in several reads, in which case it may have granted more
    credit in between (a Flow): then send 3 beyond the new limit, until it detaches.
    """
    sent, limit = 0, credit
    for _ in range(5):
        sock.sendall(transfers(sent, limit - sent + 3))
        sent = limit + 3
        frames = read_frames_until(sock, DETACH, FLOW)
        detach = [fields for code, _, fields in frames if code == DETACH]
        if detach:
            return detach[0]
        flow = [fields for code, _, fields in frames if code == FLOW][-1]
        limit = int(flow[5]) + int(flow[6])  # delivery-count + link-credit
    raise AssertionError("the broker never detached the over-sending link")


def test_transfers_beyond_credit_end_the_link_with_transfer_limit_exceeded(broker: Broker) -> None:
    sock, credit = sender_link(broker, "greedy-q")
    assert credit > 0
    detach = overrun(sock, credit)
    assert int(detach[0]) == 0 and detach[1] is True  # handle 0, closed
    assert str(detach[2].value[0]) == "amqp:link:transfer-limit-exceeded"
    sock.close()
    bodies = drain(broker, "greedy-q")
    assert len(bodies) >= credit  # what was within the credit is kept ...
    assert bodies == [f"m{i}" for i in range(len(bodies))]  # ... in order, and nothing beyond it


def test_a_credit_abuser_does_not_disturb_other_connections(broker: Broker) -> None:
    good = BlockingConnection(broker.url, timeout=10)
    snd = good.create_sender("polite-q")
    sock, credit = sender_link(broker, "greedy-q2")
    overrun(sock, credit)
    sock.close()
    snd.send(Message(body="after the abuse"))
    good.close()
    assert drain(broker, "polite-q") == ["after the abuse"]
