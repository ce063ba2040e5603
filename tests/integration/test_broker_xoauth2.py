"""XOAUTH2 end to end: the JMS client signs in with a bearer token, the broker's validator
(``routing/tokens.py``) decides: a JWT checked with PyJWT against a key from the configuration
file, or a Python callable. Each refusal is a JMSSecuritySaslException naming its reason."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

jwt = pytest.importorskip("jwt")
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402

from amqp_jms import ConnectionFactory  # noqa: E402
from amqp_jms.broker.routing.tokens import TokenRejected  # noqa: E402
from amqp_jms.exceptions import JMSSecuritySaslException  # noqa: E402

AUDIENCE = "amqp://broker.example"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = tmp_path_factory.mktemp("jwt") / "issuer.pub.pem"
    public.write_bytes(private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def token(private: Any, *, sub: str = "alice", aud: str = AUDIENCE, ttl: float = 300) -> str:
    claims = {"sub": sub, "aud": aud, "exp": int(time.time() + ttl), "iss": "https://idp.example"}
    return str(jwt.encode(claims, private, algorithm="RS256"))


@pytest.fixture
def oauth_broker(broker_factory: Any, keys: tuple[Any, Path], tmp_path: Path) -> Any:
    from amqp_jms.broker.operations.config import load_config

    config = tmp_path / "broker.toml"
    config.write_text(f'[listener]\nport = 0\nws_port = 0\n[login]\nxoauth2_jwt_key = "{keys[1]}"\n'
                      f'xoauth2_audience = "{AUDIENCE}"\nxoauth2_issuer = "https://idp.example"\n')
    return broker_factory(**load_config(config).broker_options())


def use(url: str, **options: Any) -> None:
    with ConnectionFactory(url, **options).create_connection() as conn:
        session = conn.create_session()
        session.create_producer(session.create_queue("oauth")).send(session.create_text_message("ok"))


@pytest.mark.parametrize("transport", ["tcp", "websocket"])
def test_a_good_token_signs_in_and_a_provider_is_asked_each_connect(
    oauth_broker: Any, keys: tuple[Any, Path], transport: str
) -> None:
    url = oauth_broker.url if transport == "tcp" else oauth_broker.ws_url
    asked: list[str] = []

    def provider() -> str:
        asked.append(t := token(keys[0]))
        return t

    factory = ConnectionFactory(f"{url}?amqp.saslMechanisms=XOAUTH2", username="alice",
                                token_provider=provider)
    for _ in range(2):
        with factory.create_connection() as conn:
            conn.start()
    assert len(asked) == 2


@pytest.mark.parametrize(
    ("claims", "reason"),
    [({"ttl": -60}, "expired"), ({"aud": "amqp://elsewhere"}, "wrong audience"),
     ({"sub": "mallory"}, "is for 'mallory', not 'alice'")],
)
def test_a_bad_token_is_refused_naming_why(
    oauth_broker: Any, keys: tuple[Any, Path], claims: dict[str, Any], reason: str
) -> None:
    bad = token(keys[0], **claims)
    conn = ConnectionFactory(f"{oauth_broker.url}?amqp.saslMechanisms=XOAUTH2", username="alice",
                             password=bad).create_connection()
    with pytest.raises(JMSSecuritySaslException, match=reason) as refused:
        conn.start()
    assert refused.value.outcome == 1
    conn.close()


def test_a_token_signed_by_another_key_is_refused(oauth_broker: Any) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    conn = ConnectionFactory(f"{oauth_broker.url}?amqp.saslMechanisms=XOAUTH2", username="alice",
                             password=token(other)).create_connection()
    with pytest.raises(JMSSecuritySaslException, match="bad signature"):
        conn.start()
    conn.close()


def test_a_python_callable_can_be_the_validator(broker_factory: Any) -> None:
    def check(user: str, tok: str) -> str:
        if tok != "opaque-token-1":
            raise TokenRejected("unknown token")
        return "svc-orders"

    b = broker_factory(users={"bob": "pw"}, token_validator=check)
    use(f"{b.url}?amqp.saslMechanisms=XOAUTH2", username="svc", password="opaque-token-1")
    conn = ConnectionFactory(f"{b.url}?amqp.saslMechanisms=XOAUTH2", username="svc",
                             password="opaque-token-2").create_connection()
    with pytest.raises(JMSSecuritySaslException, match="unknown token"):
        conn.start()
    conn.close()


def test_a_failover_reconnect_asks_the_token_provider_again(broker_factory: Any) -> None:
    """The broker takes each token once (as a short-lived token would lapse): the reconnect after
    a dropped connection only signs in because the provider is called again."""
    from amqp_jms.testing import FaultProxy

    issued, used = iter(f"tok-{n}" for n in range(1, 10)), set()

    def check(user: str, tok: str) -> str:
        if tok in used:
            raise TokenRejected(f"token {tok} was already used")
        used.add(tok)
        return user

    asked: list[str] = []

    def provider() -> str:
        asked.append(t := next(issued))
        return t

    b = broker_factory(token_validator=check)
    with FaultProxy(b.port) as proxy:
        url = (f"failover:({proxy.url})?failover.initialReconnectDelay=0&failover.reconnectDelay=50"
               "&failover.maxReconnectAttempts=3&failover.nested.amqp.saslMechanisms=XOAUTH2")
        with ConnectionFactory(url, username="svc", token_provider=provider).create_connection() as conn:
            conn.start()
            session = conn.create_session()
            producer = session.create_producer(session.create_queue("oauth-fo"))
            producer.send(session.create_text_message("before"))
            proxy.drop()
            producer.send(session.create_text_message("after"))  # waits for the reconnect
    assert asked[:2] == ["tok-1", "tok-2"] and used >= {"tok-1", "tok-2"}
