"""Every annotation and property the client sends, with the AMQP type Qpid JMS gives it, read off
the bytes the scripted peer received (ActiveMQ and Artemis cast by type: a delivery time sent as
a ``timestamp`` instead of Qpid JMS's ``long`` made ActiveMQ store the message raw, with no delay
and its properties invisible to the broker's selectors).

Reference: Qpid JMS ``AmqpJmsMessageFacade`` / ``AmqpDestinationHelper`` and the frames its
``ProducerIntegrationTest`` (``testSendingMessageSetsJMSDeliveryTime...``) and
``MessageIntegrationTest`` (destination/reply-to type annotations) expect.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from amqp_jms import ConnectionFactory, Queue, Topic
from amqp_jms.mapping.codec import decode_sections
from amqp_jms.testing.peer import TestPeer, Transfer
from amqp_jms.types import Byte, Symbol, Timestamp, UByte, UInt

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open(offered_capabilities=["ANONYMOUS-RELAY", "DELAYED_DELIVERY"])
        p.expect_begin()
        yield p


def test_sent_annotations_and_fields_have_qpid_jms_types(peer: TestPeer) -> None:
    got: list[Transfer] = []
    peer.expect_attach(offer=10)
    peer.expect_transfer(got.append)
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("q"))
        p.set_delivery_delay(5000)
        p.set_priority(7)
        p.set_time_to_live(60000)
        m = s.create_text_message("typed")
        m.set_jms_reply_to(Topic("replies"))
        m.set_jms_correlation_id("order-7")
        m.set_string_property("JMSXGroupID", "g")
        m.set_int_property("JMSXGroupSeq", 3)
        m.set_string_property("JMS_AMQP_CONTENT_TYPE", "text/x-note")
        p.send(m)
        peer.wait()
    sec = decode_sections(got[0].payload)
    ma = sec.message_annotations or {}
    assert type(ma[Symbol("x-opt-jms-msg-type")]) is Byte and ma[Symbol("x-opt-jms-msg-type")] == 5
    assert type(ma[Symbol("x-opt-jms-dest")]) is Byte and ma[Symbol("x-opt-jms-dest")] == 0
    assert type(ma[Symbol("x-opt-jms-reply-to")]) is Byte and ma[Symbol("x-opt-jms-reply-to")] == 1
    assert ma[Symbol("x-opt-app-correlation-id")] is True
    delivery_time = ma[Symbol("x-opt-delivery-time")]
    assert type(delivery_time) is int  # a long, never a timestamp
    assert delivery_time == m.get_jms_delivery_time() >= m.get_jms_timestamp() + 5000
    h = sec.header
    assert h is not None and h.durable is True
    assert type(h.priority) is UByte and h.priority == 7
    assert type(h.ttl) is UInt and h.ttl == 60000
    pr = sec.properties
    assert pr is not None
    assert type(pr.creation_time) is Timestamp and type(pr.absolute_expiry_time) is Timestamp
    assert type(pr.group_sequence) is UInt and pr.group_sequence == 3
    assert pr.user_id is None  # no user-id unless jms.populateJMSXUserID (test_client_jmsx_user_id)
    assert type(pr.content_type) is Symbol and pr.content_type == "text/x-note"
    assert pr.correlation_id == "order-7" and type(pr.message_id) is str
    # proton (the same engine a C or Python peer reads with) sees the long as a long
    assert not isinstance(got[0].message.annotations["x-opt-delivery-time"], Timestamp)

