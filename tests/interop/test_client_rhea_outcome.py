"""Every consumer link the client opens asks for default-outcome modified{delivery-failed}, as
Qpid JMS does, read back by rhea (an AMQP stack that shares no code with proton)."""

from __future__ import annotations

import types

import pytest

from amqp_jms import ConnectionFactory

pytestmark = pytest.mark.rhea


def test_consumers_and_browsers_ask_for_modified_delivery_failed(rhea: types.ModuleType) -> None:
    with rhea.start("source_outcome.js") as server:
        port = server.ready()["port"]
        factory = ConnectionFactory(f"amqp://127.0.0.1:{port}?amqp.saslLayer=false")
        with factory.create_connection() as conn:
            session = conn.create_session()
            session.create_consumer(session.create_queue("orders"))
            assert list(session.create_browser(session.create_queue("audit"))) == []
            session.create_producer(session.create_queue("replies"))
            session.create_consumer(session.create_topic("prices"))
        seen = server.result()
    by_address = {link["address"]: link for link in seen if link["client_role"] == "receiver"}
    assert set(by_address) == {"orders", "audit", "prices"}
    for link in by_address.values():
        assert link["default_outcome"] == {"descriptor": 0x27, "fields": [True]}, link
    senders = [link for link in seen if link["client_role"] == "sender"]
    assert len(senders) == 1 and senders[0]["default_outcome"] is None
