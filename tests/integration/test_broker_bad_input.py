"""A peer that breaks the protocol gets an AMQP Close saying why, and only it is cut off.

Raw bytes over a socket (frames built with the project's codec), not our client: the point is
what the broker writes back to a peer that no client library would let us imitate.
"""

from __future__ import annotations

from typing import Any

from proton import Message
from proton.utils import BlockingConnection
from test_broker_peer import (
    AMQP_HEADER,
    CLOSE,
    OPEN,
    close_error,
    frame,
    parse_frames,
    raw_socket,
    read_available,
)

from amqp_jms.broker import Broker

# a frame whose performative is a described value of an unknown descriptor (0x99)
UNDECODABLE = b"\x00\x00\x00\x0c\x02\x00\x00\x00\x00\x53\x99\x45"


def still_serves(broker: Broker) -> None:
    c = BlockingConnection(broker.url, timeout=10)
    c.create_sender("alive-bad-input").send(Message(body="ok"))
    r = c.create_receiver("alive-bad-input")
    assert r.receive(timeout=5).body == "ok"
    r.accept()
    c.close()


def opened(broker: Broker) -> Any:
    """A raw socket with a valid header + open exchanged (the broker's Open already read)."""
    sock = raw_socket(broker.url)
    sock.sendall(AMQP_HEADER + frame(OPEN, ["raw-peer"]))
    data = b""
    sock.settimeout(5)
    while len(data) < 12 or len(data) < 8 + int.from_bytes(data[8:12], "big"):  # header + one frame
        data += sock.recv(65536)
    assert parse_frames(data)[0][0] == OPEN
    return sock


def test_undecodable_frame_after_open_gets_close_with_decode_error(broker: Broker) -> None:
    sock = opened(broker)
    sock.sendall(UNDECODABLE)
    data, closed = read_available(sock, 5)
    sock.close()
    assert closed, "the broker must close the socket after the Close"
    assert close_error(AMQP_HEADER + data) == "amqp:decode-error"
    still_serves(broker)


def test_garbage_in_the_same_packet_as_open_gets_close(broker: Broker) -> None:
    sock = raw_socket(broker.url)
    sock.sendall(AMQP_HEADER + frame(OPEN, ["raw-peer"]) + UNDECODABLE)
    data, closed = read_available(sock, 5)
    sock.close()
    assert closed
    codes = [code for code, _, _ in parse_frames(data)]
    assert codes == [OPEN, CLOSE]  # a Close always follows an Open
    assert close_error(data) == "amqp:decode-error"
    still_serves(broker)


def test_oversized_frame_gets_close_with_framing_error(broker_factory: Any) -> None:
    b = broker_factory(data_dir=None, max_frame_size=4096)
    sock = opened(b)
    sock.sendall(b"\x00\x01\x00\x00\x02\x00\x00\x00" + b"\x00" * 64)  # announces 64 KiB > 4096
    data, closed = read_available(sock, 5)
    sock.close()
    assert closed
    assert close_error(AMQP_HEADER + data) == "amqp:connection:framing-error"
    still_serves(b)


def test_second_connection_is_served_while_a_bad_one_is_cut_off(broker: Broker) -> None:
    good = BlockingConnection(broker.url, timeout=10)
    snd = good.create_sender("bystander")
    bad = opened(broker)
    bad.sendall(UNDECODABLE)
    data, closed = read_available(bad, 5)
    bad.close()
    assert closed and close_error(AMQP_HEADER + data) == "amqp:decode-error"
    snd.send(Message(body="still here"))  # the same, older connection keeps working
    r = good.create_receiver("bystander")
    assert r.receive(timeout=5).body == "still here"
    r.accept()
    good.close()
