"""A login that finds no SASL mechanism both sides accept (proton's bare "[mech=none]") says what
the peer offered, what this client could use, and what a named mechanism lacks."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSSecuritySaslException


def _refusal(url: str, **credentials: str) -> str:
    conn = ConnectionFactory(url, **credentials).create_connection()
    try:
        with pytest.raises(JMSSecuritySaslException) as e:
            conn.start()
    finally:
        conn.close()
    return str(e.value)


def test_no_mechanism_in_common_names_both_lists(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "s3cret"})  # offers SCRAM-SHA-512, -256, -1, PLAIN
    text = _refusal(b.url + "?amqp.saslMechanisms=EXTERNAL", username="alice", password="s3cret")
    offered = "SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1, PLAIN"
    assert f"no SASL mechanism in common: the peer offered {offered}" in text
    assert "this client could use none (amqp.saslMechanisms=EXTERNAL, with a username)" in text
    assert "for EXTERNAL the client needs amqps:// with a client certificate" in text


def test_offered_mechanisms_that_need_credentials_say_so(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "s3cret"})
    text = _refusal(b.url)  # no username: only ANONYMOUS is possible, and it is not offered
    assert "this client could use ANONYMOUS (no amqp.saslMechanisms, without a username)" in text
    offered = "SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1, PLAIN"
    assert f"for {offered} the client needs a username and password" in text


def test_a_wrong_password_is_not_called_a_mechanism_mismatch(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "s3cret"})
    text = _refusal(b.url + "?amqp.saslMechanisms=PLAIN", username="alice", password="wrong")
    assert "SASL outcome auth" in text and "in common" not in text
