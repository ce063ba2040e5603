"""Signing in from the client (engine/sasl_client.py) against rhea over WebSocket, each server
mechanism written on node's crypto, not ours: EXTERNAL with a client certificate made in the
test, XOAUTH2 with a token and with a token provider asked again on every reconnect,
SCRAM-SHA-512, and Qpid JMS's choice among what the server offers."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from amqp_jms import ConnectionFactory
from amqp_jms.exceptions import JMSSecurityException, JMSSecuritySaslException

pytestmark = pytest.mark.rhea

EVERY = {"ANONYMOUS": True, "PLAIN": {"alice": "pw"}, "XOAUTH2": {"alice": "tok-1"},
         "SCRAM-SHA-256": {"alice": "pw"}, "SCRAM-SHA-512": {"alice": "pw"}}


def connect_and_send(url: str, **options: object) -> None:
    with ConnectionFactory(url, **options).create_connection() as conn:  # type: ignore[arg-type]
        session = conn.create_session()
        session.create_producer(session.create_queue("q")).send(session.create_text_message("in"))


def test_external_signs_in_with_the_client_certificate(rhea: types.ModuleType, pki: dict[str, Path]) -> None:
    tls = {"key": str(pki["server-key"]), "cert": str(pki["server"]), "ca": str(pki["ca"])}
    mechs = {"PLAIN": {"alice": "pw"}, "EXTERNAL": True}
    with rhea.start("ws_server.js", {"tls": tls, "mechanisms": mechs}) as server:
        port = server.ready()["port"]
        connect_and_send(f"amqpwss://127.0.0.1:{port}?transport.trustStoreLocation={pki['server']}"
                         f"&transport.keyStoreLocation={pki['client']}&transport.keyLocation={pki['client-key']}")
        seen = server.result()
    assert seen["logins"] == [{"mechanism": "EXTERNAL", "user": "alice", "ok": True}]


def test_the_strongest_mechanism_offered_is_chosen_unless_restricted(rhea: types.ModuleType) -> None:
    with rhea.start("ws_server.js", {"mechanisms": EVERY, "connections": 2}) as server:
        port = server.ready()["port"]
        connect_and_send(f"amqpws://alice:pw@127.0.0.1:{port}")
        connect_and_send(f"amqpws://alice:pw@127.0.0.1:{port}?amqp.saslMechanisms=PLAIN")
        seen = server.result()
    assert seen["logins"] == [{"mechanism": "SCRAM-SHA-512", "user": "alice", "ok": True},
                              {"mechanism": "PLAIN", "user": "alice", "ok": True}]


def test_scram_sha_512_with_a_wrong_password_is_refused(rhea: types.ModuleType) -> None:
    with rhea.start("ws_server.js", {"mechanisms": {"SCRAM-SHA-512": {"alice": "pw"}}}) as server:
        port = server.ready()["port"]
        conn = ConnectionFactory(f"amqpws://alice:nope@127.0.0.1:{port}").create_connection()
        with pytest.raises(JMSSecuritySaslException, match=r"outcome auth.*with SCRAM-SHA-512") as refused:
            conn.start()
        assert refused.value.outcome == 1
        conn.close()


def test_xoauth2_asks_the_token_provider_at_every_connect(rhea: types.ModuleType) -> None:
    tokens = iter(["tok-1", "tok-2", "tok-3"])
    asked: list[str] = []

    def provider() -> str:
        asked.append(token := next(tokens))
        return token

    mechs = {"XOAUTH2": {"alice": "tok-1"}}
    with rhea.start("ws_server.js", {"mechanisms": mechs}) as server:
        port = server.ready()["port"]
        factory = ConnectionFactory(f"amqpws://alice@127.0.0.1:{port}?amqp.saslMechanisms=XOAUTH2",
                                    token_provider=provider)
        connect_and_send(factory.url, token_provider=provider)
        conn = factory.create_connection()  # the next connect gets tok-2, which rhea does not take
        with pytest.raises(JMSSecurityException, match=r"outcome auth.*with XOAUTH2"):
            conn.start()
        conn.close()
        seen = server.result()
    assert asked == ["tok-1", "tok-2"]
    assert seen["logins"][0] == {"mechanism": "XOAUTH2", "user": "alice", "ok": True}


def test_a_failing_token_provider_fails_the_connect_naming_it(rhea: types.ModuleType) -> None:
    def provider() -> str:
        raise RuntimeError("the identity endpoint is down")

    conn = ConnectionFactory("amqpws://alice@127.0.0.1:1", token_provider=provider).create_connection()
    with pytest.raises(JMSSecurityException, match=r"token provider failed.*identity endpoint is down"):
        conn.start()
    conn.close()
