"""What ``send`` does with the caller's message object, as docs/jms-api.md and the
``amqp_jms.message`` docstring say: the producer sets the JMS headers on that object (JMS 3.4:
JMSMessageID, JMSTimestamp, JMSDestination ... are readable after ``send``), and the bytes that
go to the peer are encoded during ``send``, so changing or re-sending the object once ``send``
has returned, even an asynchronous send still waiting for its outcome, never changes what was
sent. Checked frame by frame against the scripted peer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.testing.peer import TestPeer, Transfer


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def test_the_sent_bytes_are_a_snapshot_and_the_headers_land_on_the_callers_object(peer: TestPeer) -> None:
    sent: list[Transfer] = []
    done = threading.Event()
    outcomes: list[Any] = []
    peer.expect_open()
    peer.expect_begin()
    url = peer.url + "?jms.closeTimeout=2000&jms.requestTimeout=5000"
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        peer.expect_transfer(sent.append)
        peer.expect_transfer(sent.append)
        p = s.create_producer(Queue("orders"))
        m = s.create_text_message("first")
        m.set_string_property("step", "one")

        def listener(message: Any, exc: Exception | None) -> None:
            outcomes.append((message, exc))
            if len(outcomes) == 2:
                done.set()

        p.send(m, completion_listener=listener)
        first_id = m.get_jms_message_id()
        assert first_id is not None and m.get_jms_destination() == Queue("orders")
        assert m.get_jms_timestamp() > 0
        # changed and re-sent at once, while the first send may still await its outcome
        m.set_text("second")
        m.set_string_property("step", "two")
        p.send(m, completion_listener=listener)
        second_id = m.get_jms_message_id()
        assert done.wait(5)
        peer.wait()
    assert [t.message.body for t in sent] == ["first", "second"]
    props: list[Any] = [t.message.properties for t in sent]
    assert [p["step"] for p in props] == ["one", "two"]
    assert [str(t.message.id) for t in sent] == [first_id, second_id] and first_id != second_id
    assert outcomes == [(m, None), (m, None)]  # the listener gets the caller's object
