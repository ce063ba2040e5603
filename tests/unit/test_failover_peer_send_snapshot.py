"""A message changed the moment ``send`` returns is sent as it was, on every failover path
(JMS 2.0 §7.3; Qpid JMS copies such sends): a send made while the connection is down is queued
as the message's frozen data, not the application's object, so changing and re-sending the same
object while failover reconnects sends both versions. Checked frame by frame on the scripted
peer (the broker-crash version is tests/integration/test_failover_send_snapshot.py)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, DeliveryMode, Queue
from amqp_jms.testing.peer import TestPeer, Transfer

#: reconnect after 1.5 s, so the test sends while the connection is down
SLOW = ("failover.initialReconnectDelay=1500&failover.reconnectDelay=1500&jms.requestTimeout=5000"
        "&jms.closeTimeout=1000")


class Interrupted:
    """A connection listener that tells when failover noticed the drop."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def on_connection_interrupted(self, uri: str) -> None:
        self.event.set()


@pytest.mark.parametrize("how", ["non-persistent", "force-async", "transacted"])
def test_a_message_changed_after_an_offline_send_arrives_as_it_was_sent(how: str) -> None:
    """Send "A" while offline, change the same object to "B" (body and a property) and send it
    again: after the reconnect the peer gets "A" then "B", each with its own property value."""
    options = SLOW + ("&jms.forceAsyncSend=true" if how == "force-async" else "")
    transacted = how == "transacted"
    sent: list[Transfer] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        if transacted:
            peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
            peer.expect_declare(b"tx-1")
        peer.expect_attach(offer=10)
        interrupted = Interrupted()
        with ConnectionFactory(f"failover:({peer.url})?{options}").create_connection() as conn:
            conn.add_connection_listener(interrupted)
            s = conn.create_session(transacted=transacted)
            p = s.create_producer(Queue("orders"))
            if how == "non-persistent":
                p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
            peer.wait()

            # the second connection: the same session and producer, then the two transfers
            peer.expect_open()
            peer.expect_begin()
            if transacted:
                peer.expect_attach(lambda a: a.target_is_coordinator, offer=10)
                peer.expect_declare(b"tx-2")
            peer.expect_attach(offer=10)
            peer.expect_transfer(sent.append)
            peer.expect_transfer(sent.append)
            peer.drop()
            assert interrupted.event.wait(5), "failover did not notice the drop"

            m = s.create_text_message("A")
            m.set_string_property("version", "first")
            p.send(m)
            m.set_text("B")
            m.set_string_property("version", "second")
            p.send(m)
            peer.wait()
    bodies: list[Any] = [t.message.body for t in sent]
    versions: list[Any] = [t.message.properties["version"] for t in sent]
    assert bodies == ["A", "B"]
    assert versions == ["first", "second"]
