"""The client against rhea acting as a prefix-addressing peer (ActiveMQ/Artemis conventions: Open
offers ``queue-prefix``/``topic-prefix``, the address prefix decides the node type): an AMQP stack
that shares no code with proton sees every link address and ``to``/``reply-to`` prefixed, topics
fan out, temporary queues keep the peer's name, and what arrives reads unprefixed."""

from __future__ import annotations

import types

import pytest

from amqp_jms import ConnectionFactory, Queue, TemporaryQueue, Topic

pytestmark = pytest.mark.rhea


def test_client_addresses_rhea_with_its_prefixes(rhea: types.ModuleType) -> None:
    with rhea.start("prefix_peer.js") as server:
        port = server.ready()["port"]
        factory = ConnectionFactory(f"amqp://127.0.0.1:{port}?amqp.saslLayer=false&jms.closeTimeout=5000")
        with factory.create_connection() as conn:
            conn.start()
            s = conn.create_session()
            fans = [s.create_consumer(Topic("prices")), s.create_consumer(Topic("prices"))]
            orders = s.create_consumer(Queue("orders"))
            quote = s.create_text_message("42")
            quote.set_jms_reply_to(Queue("orders"))
            s.create_producer(Topic("prices")).send(quote)
            got = [c.receive(5000) for c in fans]
            assert [g.get_text() for g in got] == ["42", "42"]
            assert all(g.get_jms_destination() == Topic("prices") for g in got)
            assert all(g.get_jms_reply_to() == Queue("orders") for g in got)

            tq = s.create_temporary_queue()
            assert tq.name == "temp-queue://ID:rhea-1" and str(tq) == tq.name
            replies = s.create_consumer(tq)
            ask = s.create_text_message("ping")
            ask.set_jms_reply_to(tq)
            s.create_producer(None).send(Queue("orders"), ask)  # anonymous producer
            request = orders.receive(5000)
            assert request is not None and request.get_jms_destination() == Queue("orders")
            reply_to = request.get_jms_reply_to()
            assert isinstance(reply_to, TemporaryQueue) and reply_to == tq
            s.create_producer(reply_to).send(s.create_text_message("pong"))
            reply = replies.receive(5000)
            assert reply is not None and reply.get_text() == "pong"
        seen = server.result()
    by_role = {(link["client_role"], link["address"]) for link in seen["links"]}
    assert ("receiver", "topic://prices") in by_role and ("receiver", "queue://orders") in by_role
    assert ("sender", "topic://prices") in by_role and ("sender", None) in by_role
    assert ("receiver", "temp-queue://ID:rhea-1") in by_role  # as the peer named it, unprefixed
    assert ("sender", "temp-queue://ID:rhea-1") in by_role
    routed = [(r["address"], r["to"], r["reply_to"]) for r in seen["routed"]]
    assert routed == [
        ("topic://prices", "topic://prices", "queue://orders"),
        ("queue://orders", "queue://orders", "temp-queue://ID:rhea-1"),
        ("temp-queue://ID:rhea-1", "temp-queue://ID:rhea-1", None),
    ]
