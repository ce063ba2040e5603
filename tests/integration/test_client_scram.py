"""SCRAM through the real stack: the client's SASL (engine/sasl_client.py) against the broker's
SCRAM server (broker/protocol/scram.py); the two share no code."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSSecurityException, Queue


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "SCRAM-SHA-1"])
def test_scram_authenticates_and_the_connection_works(broker_factory: Any, mechanism: str) -> None:
    b = broker_factory(users={"alice": "s3cret", "bob": "other"})
    url = f"{b.url}?amqp.saslMechanisms={mechanism}"
    with ConnectionFactory(url, username="alice", password="s3cret").create_connection() as conn:
        conn.start()
        session = conn.create_session()
        session.create_producer(Queue("scram")).send(session.create_text_message("hi"))
        msg = session.create_consumer(Queue("scram")).receive(5)
        assert msg is not None and msg.get_body(str) == "hi"


@pytest.mark.parametrize(
    ("user", "password"), [("alice", "wrong"), ("mallory", "s3cret"), ("bob", "s3cret")]
)
def test_scram_refuses_a_wrong_password_or_unknown_user(
    broker_factory: Any, user: str, password: str
) -> None:
    b = broker_factory(users={"alice": "s3cret", "bob": "other"})
    conn = ConnectionFactory(f"{b.url}?amqp.saslMechanisms=SCRAM-SHA-256", username=user,
                             password=password).create_connection()
    with pytest.raises(JMSSecurityException, match="SCRAM-SHA-256"):
        conn.start()
    conn.close()


def test_without_a_mechanism_list_the_client_picks_scram_over_plain(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "s3cret"})
    conn = ConnectionFactory(b.url, username="alice", password="wrong").create_connection()
    with pytest.raises(JMSSecurityException, match="SCRAM-SHA-512"):  # the strongest offered
        conn.start()
    conn.close()
    with ConnectionFactory(b.url, username="alice", password="s3cret").create_connection() as ok:
        ok.start()
