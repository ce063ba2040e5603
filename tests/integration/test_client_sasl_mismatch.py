"""A login that finds no SASL mechanism both sides accept (proton's bare "[mech=none]") says what
the peer offered, what this client could use, and what a named mechanism lacks."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSSecuritySaslException
from amqp_jms.engine.sasl_client import SaslCredentials
from amqp_jms.provider.errors import sasl_mismatch
from amqp_jms.testing.peer import TestPeer


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


def test_a_mechanism_the_client_does_not_have_is_not_called_usable() -> None:
    """proton as the server, offering only DIGEST-MD5 (Cyrus has it; this client does not): the
    refusal names it as unimplemented, and lists what the client has instead (CRAM-MD5, XOAUTH2)."""
    with TestPeer(sasl_mechanisms="DIGEST-MD5") as peer:
        named = _refusal(peer.url + "?amqp.saslMechanisms=DIGEST-MD5", username="u", password="p")
        any_mech = _refusal(peer.url, username="u", password="p")
    assert "the peer offered DIGEST-MD5; this client could use none (amqp.saslMechanisms=DIGEST-MD5" in named
    assert "for DIGEST-MD5 this client has no implementation" in named
    usable = "SCRAM-SHA-512, SCRAM-SHA-256, SCRAM-SHA-1, CRAM-MD5, PLAIN, ANONYMOUS, XOAUTH2"
    assert f"this client could use {usable} (no amqp.saslMechanisms, with a username)" in any_mech


@pytest.mark.parametrize(
    ("creds", "tls", "says"),
    [
        # over TLS, EXTERNAL lacks only the certificate (not the scheme)
        (SaslCredentials(allowed=("EXTERNAL",)), True,
         "for EXTERNAL the client needs a client certificate (transport.keyStoreLocation)"),
        # a bearer token with a space is no XOAUTH2 token (Qpid JMS's rule)
        (SaslCredentials(username="u", password="not a token", allowed=("XOAUTH2",)), False,
         "for XOAUTH2 the client needs a username and a bearer token without spaces"),
    ],
)
def test_what_a_named_mechanism_lacks(creds: SaslCredentials, tls: bool, says: str) -> None:
    text = sasl_mismatch(("SCRAM-SHA-256",), creds, tls=tls)
    assert says in text and "this client could use none" in text
    assert "for SCRAM-SHA-256 amqp.saslMechanisms leaves it out" in text
