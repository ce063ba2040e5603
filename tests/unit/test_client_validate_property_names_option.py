"""``jms.validatePropertyNames=false``: messages of such a connection accept any non-empty name.

Qpid JMS behaviour: messages a session creates, and messages it delivers (once their properties
are cleared), skip the selector-identifier rule; None and "" are still refused. The default
connection keeps validating.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as PMessage

from amqp_jms import ConnectionFactory, JMSContext, Queue, TextMessage
from amqp_jms.exceptions import JMSRuntimeException
from amqp_jms.message import Message
from amqp_jms.message._data import restore, snapshot
from amqp_jms.message._seam import trust_property_names
from amqp_jms.testing.peer import TestPeer, Transfer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
LENIENT = FAST + "&jms.validatePropertyNames=false"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open()
        p.expect_begin()
        yield p


def test_lenient_connection_sends_a_property_with_a_non_identifier_name(peer: TestPeer) -> None:
    sent: list[Transfer] = []
    peer.expect_attach(offer=10)
    peer.expect_transfer(sent.append)
    with ConnectionFactory(peer.url + LENIENT).create_connection() as conn:
        s = conn.create_session()
        for create in (s.create_message, s.create_text_message, s.create_bytes_message,
                       s.create_map_message, s.create_stream_message, s.create_object_message):
            m: Any = create()
            m.set_string_property("my-prop", "v")
            m.set_int_property("1st", 1)
            m.set_object_property("AND", True)  # a selector keyword: also accepted
            with pytest.raises(ValueError):
                m.set_string_property("", "v")  # empty names stay refused (as in Qpid JMS)
            with pytest.raises(ValueError):
                m.set_string_property(None, "v")
        msg = s.create_text_message("x")
        msg.set_string_property("my-prop", "v")
        s.create_producer(Queue("q")).send(msg)
        peer.wait()
    assert sent[0].message.properties == {"my-prop": "v"}


def test_default_connection_still_validates_names(peer: TestPeer) -> None:
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        m = conn.create_session().create_text_message()
        with pytest.raises(ValueError, match="my-prop"):
            m.set_string_property("my-prop", "v")
        peer.wait()


def test_lenient_names_do_not_leak_into_the_validated_cache() -> None:
    lenient = Message()
    trust_property_names(lenient)  # what a session of a jms.validatePropertyNames=false connection does
    lenient.set_string_property("not-valid-x", "v")
    assert lenient.get_string_property("not-valid-x") == "v"
    assert restore(snapshot(lenient)).get_string_property("not-valid-x") == "v"
    with pytest.raises(ValueError):
        Message().set_string_property("not-valid-x", "v")


def test_received_message_of_a_lenient_connection_accepts_names_after_clear(peer: TestPeer) -> None:
    peer.expect_attach()
    incoming = PMessage(body="in", properties={"my-prop": "v"}, annotations={"x-opt-jms-msg-type": 5})
    peer.expect_flow(send=[incoming])
    peer.expect_disposition()
    with ConnectionFactory(peer.url + LENIENT).create_connection() as conn:
        c = conn.create_session().create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert isinstance(m, TextMessage) and m.get_string_property("my-prop") == "v"
        m.clear_properties()
        m.set_string_property("other-prop", "w")
        assert m.get_string_property("other-prop") == "w"
        peer.wait()


def test_context_producer_property_follows_the_option(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)  # the context's producer
    peer.expect_transfer(lambda t: t.message.properties == {"my-prop": 5})
    with ConnectionFactory(peer.url + LENIENT).create_context() as ctx:
        ctx.create_producer().set_property("my-prop", 5).send(Queue("q"), "body")
        peer.wait()


def test_context_producer_property_is_validated_by_default(peer: TestPeer) -> None:
    with ConnectionFactory(peer.url + FAST).create_context(JMSContext.AUTO_ACKNOWLEDGE) as ctx:
        with pytest.raises((ValueError, JMSRuntimeException)):
            ctx.create_producer().set_property("my-prop", 5)
    # refused before anything went on the wire (a context connects on first use, issue 16)
    assert peer.log == []
