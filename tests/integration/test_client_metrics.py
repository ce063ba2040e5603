"""Per-connection counters against known traffic through the embedded broker (and a lost
connection against the scripted peer): ``connection.metrics()`` and the asyncio face."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, DeliveryMode, Queue, Session
from amqp_jms.aio import AsyncConnectionFactory
from amqp_jms.provider import payload
from amqp_jms.provider.metrics import ConnectionMetrics
from amqp_jms.testing.peer import TestPeer

PULL = "?jms.prefetchPolicy.all=0"


def test_counters_follow_known_traffic(broker: Any) -> None:
    q = Queue("metrics")
    with ConnectionFactory(broker.url).create_connection() as producer_conn:
        assert producer_conn.metrics() == ConnectionMetrics(producer_conn.metrics().connection_id)
        session = producer_conn.create_session()
        producer = session.create_producer(q)
        producer.set_delivery_mode(DeliveryMode.PERSISTENT)  # waits for each outcome
        sent = []
        for i in range(6):
            m = session.create_text_message(f"{i}" + "x" * 100)
            producer.send(m)
            sent.append(m)
        p = producer_conn.metrics()
        assert (p.messages_sent, p.sends_accepted, p.messages_received) == (6, 6, 0)
        assert p.bytes_sent == sum(len(payload.encode(m)) for m in sent)  # the transfers' payloads
        assert p.connection_id == producer_conn.connection_id()
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.messages_sent = 0  # type: ignore[misc]

    with ConnectionFactory(broker.url + PULL).create_connection() as conn:  # prefetch 0: one per receive
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(q)
        got = [consumer.receive(5000) for _ in range(2)]
        assert all(got)
        got[-1].set_int_property("JMS_AMQP_ACK_TYPE", 4)  # type: ignore[union-attr]  # modified-failed
        got[-1].acknowledge()  # type: ignore[union-attr]
        consumer.close()
        c1 = conn.metrics()
        assert (c1.messages_received, c1.acks_modified, c1.acks_accepted, c1.redeliveries) == (2, 2, 0, 0)
        assert c1.bytes_received >= 2 * 101

    with ConnectionFactory(broker.url + PULL).create_connection() as conn:
        conn.start()
        consumer = conn.create_session().create_consumer(q)
        bodies = [consumer.receive(5000) for _ in range(6)]
        assert all(bodies)
        deadline = time.monotonic() + 5
        while conn.metrics().acks_accepted < 6 and time.monotonic() < deadline:
            time.sleep(0.01)  # (an AUTO_ACK acknowledgement is posted to the I/O thread)
        c2 = conn.metrics()
        assert (c2.messages_received, c2.acks_accepted, c2.redeliveries, c2.failures) == (6, 6, 2, 0)
        assert c2.messages_sent == 0 and c2.bytes_received >= 6 * 101


def test_a_lost_connection_counts_one_failure_on_both_faces() -> None:
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()

        async def go() -> ConnectionMetrics:
            conn = await AsyncConnectionFactory(peer.url + "?jms.closeTimeout=2000").create_connection()
            async with conn:
                await conn.create_session()
                peer.wait()
                peer.drop()
                deadline = time.monotonic() + 5
                while conn.metrics().failures == 0 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                return conn.metrics()

        m = asyncio.run(go())
    assert m.failures == 1 and m.messages_sent == 0
