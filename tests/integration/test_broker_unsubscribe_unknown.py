"""Unsubscribing a name the broker does not know, frame by frame as Qpid JMS does it (issue 26).

Qpid JMS's ``session.unsubscribe(name)`` attaches a receiver with a *null source* under the
subscription's link name and waits for the broker's answer. For a name it does not know, AMQP 1.0
2.6.3 has the broker answer with a null source and then a Detach carrying the error, which
ActiveMQ sends as ``amqp:not-found``; Qpid JMS then raises ``InvalidDestinationException``. The
embedded broker used to send the null source only, and Qpid JMS waited for ever (in the default
and the prefix mode alike). The peer here is scripted with raw frames, as Qpid JMS sends them.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from hostile_helpers import read_until
from test_broker_peer import AMQP_HEADER, ATTACH, BEGIN, DETACH, OPEN, frame

from amqp_jms.types import Described, Symbol, UByte, UInt, ULong

PREFIXES = ("queue://", "topic://")


def _qpid_jms_lookup(url: str, container_id: str, link_name: str) -> list[tuple[int, int, list[Any]]]:
    host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    try:
        sock.sendall(
            AMQP_HEADER
            + frame(OPEN, [container_id])
            + frame(BEGIN, [None, UInt(0), UInt(2048), UInt(2048)])
            # name, handle, role=receiver, snd-settle unsettled, rcv-settle first, source null,
            # target an empty Target (Qpid JMS's unsubscribe lookup)
            + frame(ATTACH, [link_name, UInt(0), True, UByte(0), UByte(0), None, Described(ULong(0x29), [])])
        )
        return read_until(sock, DETACH)
    finally:
        sock.close()


@pytest.mark.parametrize("prefixes", [None, PREFIXES], ids=["default-mode", "prefix-mode"])
@pytest.mark.parametrize("link_name", ["nosuch", "nosuch|global"])
def test_a_lookup_of_an_unknown_subscription_is_answered_with_detach_not_found(
    broker_factory: Any, prefixes: tuple[str, str] | None, link_name: str
) -> None:
    b = broker_factory(address_prefixes=prefixes) if prefixes else broker_factory()
    frames = _qpid_jms_lookup(b.url, "qpid-jms-app", link_name)
    attach = next(fields for code, _, fields in frames if code == ATTACH)
    detach = next(fields for code, _, fields in frames if code == DETACH)
    assert attach[0] == link_name and attach[2] is False  # the broker's sender end
    assert len(attach) < 6 or attach[5] is None  # a null source: nothing found
    handle, closed, error = detach[0], detach[1], detach[2]
    assert handle == 0 and closed is True
    assert error.value[0] == Symbol("amqp:not-found")
    assert "no subscription named 'nosuch'" in error.value[1]
