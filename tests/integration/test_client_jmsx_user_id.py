"""JMSXUserID as Qpid JMS sets it: with ``jms.populateJMSXUserID=true`` a sent message carries the
connection's user name (AMQP ``user-id``); without it none at all, whatever the application set,
so a message cannot claim to come from another user."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue


@pytest.mark.parametrize("populate", [False, True])
def test_jmsx_user_id_is_the_connection_user_or_nothing(broker_factory: Any, populate: bool) -> None:
    b = broker_factory(users={"alice": "a-pw"})
    url = f"{b.url}?jms.populateJMSXUserID={str(populate).lower()}"
    with ConnectionFactory(url, username="alice", password="a-pw").create_connection() as conn:
        conn.start()
        s = conn.create_session()
        m = s.create_text_message("who")
        m.set_string_property("JMSXUserID", "mallory")
        s.create_producer(Queue("uid")).send(m)
        got = s.create_consumer(Queue("uid")).receive(5000)
    assert got is not None
    assert got.get_string_property("JMSXUserID") == ("alice" if populate else None)
    assert got.property_exists("JMSXUserID") is populate
