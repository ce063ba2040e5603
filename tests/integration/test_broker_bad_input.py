"""A peer that breaks the protocol gets an AMQP Close saying why, and only it is cut off.

Raw bytes over a socket (frames built with the project's codec), not our client: the point is
what the broker writes back to a peer that no client library would let us imitate.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection
from test_broker_peer import (
    AMQP_HEADER,
    ATTACH,
    BEGIN,
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


# -- fields of the wrong type or with invalid content: amqp:decode-error and one log line --------
def _source(address: str) -> Any:
    from amqp_jms.types import Described, ULong

    return Described(ULong(0x28), [address])


def _target(address: str, caps: Any = None) -> Any:
    from amqp_jms.types import Described, Symbol, UInt, ULong

    return Described(ULong(0x29), [address, UInt(0), Symbol("session-end"), UInt(0), False, None, caps])


def _attach_bytes(target: Any) -> bytes:
    from amqp_jms.types import UInt

    return (
        AMQP_HEADER + frame(OPEN, ["c"]) + frame(BEGIN, [None, UInt(0), UInt(100), UInt(100)])
        + frame(ATTACH, ["l", UInt(0), False, None, None, _source("s"), target])
    )


def _malformed_cases() -> dict[str, bytes]:
    from amqp_jms.types import UInt

    bad = b"\xa1\x04\xff\xfe\xfd\xfc"  # str8 of 4 bytes that are not UTF-8
    return {
        "container-id-not-utf8": AMQP_HEADER + frame(OPEN, ["XXXX"]).replace(b"\xa1\x04XXXX", bad),
        "address-not-utf8": _attach_bytes(_target("YYYY")).replace(b"\xa1\x04YYYY", bad),
        "capability-uint": _attach_bytes(_target("q", UInt(7))),
        "capabilities-list-of-binary": _attach_bytes(_target("q", [b"x"])),
        "desired-capabilities-uint": AMQP_HEADER + frame(OPEN, ["c", *[None] * 7, UInt(5)]),
    }


@pytest.mark.parametrize("name", list(_malformed_cases()))
def test_malformed_field_closes_with_decode_error_and_one_log_line(
    broker: Broker, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="amqp_jms.broker")
    sock = raw_socket(broker.url)
    sock.sendall(_malformed_cases()[name])
    data, closed = read_available(sock, 4)
    sock.close()
    assert close_error(data) == "amqp:decode-error"
    assert closed, "a peer that does not answer the Close is cut off"
    records = [r for r in caplog.records if "malformed" in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info is None
    assert not any(r.levelno >= logging.ERROR for r in caplog.records)
    still_serves(broker)
