"""The broker's ``$cbs`` node (claims-based security, Azure Service Bus's sign-in), against
Microsoft's own AMQP client (``azure.servicebus._pyamqp``) over TCP and WebSocket, and against
amqp-jms's ``cbs_token_provider``: tokens checked, links authorized per audience, grants that
lapse closing what they covered, and renewal keeping messages flowing across expiry."""

from __future__ import annotations

import time
from typing import Any

import pytest

from amqp_jms import ConnectionFactory
from amqp_jms.cbs import CbsToken, SasTokenProvider
from amqp_jms.exceptions import JMSException, JMSSecurityException

KEY_NAME, KEY = "RootManageSharedAccessKey", "k3y-for-tests"


@pytest.fixture
def cbs_broker(broker_factory: Any) -> Any:
    return broker_factory(ws_port=0, cbs_keys={KEY_NAME: KEY})


@pytest.mark.parametrize("transport", ["Amqp", "AmqpOverWebsocket"])
def test_azure_servicebus_pyamqp_signs_in_with_cbs(cbs_broker: Any, transport: str) -> None:
    pyamqp = pytest.importorskip("azure.servicebus._pyamqp")
    from azure.servicebus._pyamqp.authentication import SASTokenAuth
    from azure.servicebus._pyamqp.constants import TransportType
    from azure.servicebus._pyamqp.message import Message

    if transport == "AmqpOverWebsocket":
        pytest.importorskip("websocket")  # websocket-client: pyamqp's synchronous WebSocket transport
    kind = TransportType[transport]
    port, scheme = (cbs_broker.port, "amqp") if kind is TransportType.Amqp else (cbs_broker.ws_port, "ws")
    uri = "sb://127.0.0.1/orders"
    client = pyamqp.SendClient(
        "127.0.0.1", "orders", auth=SASTokenAuth(uri, uri, KEY_NAME, KEY), use_tls=False, transport_type=kind,
        custom_endpoint_address=f"{scheme}://127.0.0.1:{port}/$servicebus/websocket",
    )
    client.open()
    try:
        client.send_message(Message(value=f"from pyamqp over {transport}"))
    finally:
        client.close()
    factory = ConnectionFactory(cbs_broker.url, cbs_token_provider=SasTokenProvider(KEY_NAME, KEY))
    with factory.create_connection() as conn:
        conn.start()
        got = conn.create_session().create_consumer(conn.create_session().create_queue("orders"))
        msg = got.receive(5000)
        assert msg is not None and msg.get_body(object) == f"from pyamqp over {transport}"


def test_renewal_keeps_messages_flowing_across_token_expiry(cbs_broker: Any) -> None:
    tokens = SasTokenProvider(KEY_NAME, KEY, ttl_s=2.0)
    factory = ConnectionFactory(cbs_broker.ws_url, cbs_token_provider=tokens)
    with factory.create_connection() as conn:
        conn.start()
        session = conn.create_session()
        queue = session.create_queue("flowing")
        producer, consumer = session.create_producer(queue), session.create_consumer(queue)
        deadline, sent = time.monotonic() + 4.5, 0  # past two token lifetimes
        while time.monotonic() < deadline:
            producer.send(session.create_text_message(f"m{sent}"))
            got = consumer.receive(2000)
            assert got is not None and got.get_text() == f"m{sent}"
            sent += 1
            time.sleep(0.05)
    assert sent > 20


def test_a_grant_that_lapses_closes_the_links_it_covered(cbs_broker: Any) -> None:
    class Once:
        """A token for 1.5 s, then a provider that cannot renew it."""

        def __init__(self) -> None:
            self.calls = 0

        def get_token(self, audience: str) -> CbsToken:
            self.calls += 1
            if self.calls > 1:
                raise RuntimeError("the identity endpoint is down")
            return SasTokenProvider(KEY_NAME, KEY, ttl_s=1.5).get_token(audience)

    failures: list[JMSException] = []
    with ConnectionFactory(cbs_broker.url, cbs_token_provider=Once()).create_connection() as conn:
        conn.set_exception_listener(failures.append)
        session = conn.create_session()
        producer = session.create_producer(session.create_queue("lapsing"))
        producer.send(session.create_text_message("in time"))
        time.sleep(2.0)
        with pytest.raises(JMSException, match="expired and was not renewed"):
            producer.send(session.create_text_message("too late"))
    assert any("identity endpoint is down" in str(f) for f in failures)  # the failed renewal, reported


def test_without_a_good_token_nothing_attaches(cbs_broker: Any) -> None:
    with ConnectionFactory(cbs_broker.url).create_connection() as conn:
        session = conn.create_session()
        with pytest.raises(JMSSecurityException, match=r"no token put on \$cbs covers 'orders'"):
            session.create_producer(session.create_queue("orders"))
    wrong = SasTokenProvider(KEY_NAME, "not-the-key")
    with ConnectionFactory(cbs_broker.url, cbs_token_provider=wrong).create_connection() as conn:
        session = conn.create_session()
        with pytest.raises(JMSSecurityException, match="401 bad signature"):
            session.create_consumer(session.create_queue("orders"))
    # a token for one entity is not one for another
    narrow = SasTokenProvider(KEY_NAME, KEY, resource="sb://127.0.0.1/payments")
    with ConnectionFactory(cbs_broker.url, cbs_token_provider=narrow).create_connection() as conn:
        session = conn.create_session()
        with pytest.raises(JMSSecurityException, match=r"the token is for 'sb://127\.0\.0\.1/payments'"):
            session.create_producer(session.create_queue("orders"))



def test_an_entra_id_jwt_is_checked_by_a_callable_validator_per_audience(broker_factory: Any) -> None:
    """Passwordless sign-in end to end: ``EntraIdTokenProvider`` puts a JWT (signed here with
    PyJWT, as Entra ID would) and the broker's ``cbs_validator`` callable checks it and
    authorizes by the entities the token's ``roles`` claim names."""
    jwt = pytest.importorskip("jwt")
    from types import SimpleNamespace

    from amqp_jms.broker.routing.tokens import TokenRejected
    from amqp_jms.cbs import JWT, EntraIdTokenProvider

    secret, seen = "entra-test-secret-0123456789abcdef", []

    def check(token: str, kind: str, audience: str) -> float:
        seen.append(kind)
        if kind != JWT:
            raise TokenRejected(f"token type {kind!r} is not accepted here")
        try:
            claims = jwt.decode(token, secret, algorithms=["HS256"], audience="https://servicebus.azure.net")
        except jwt.InvalidTokenError as e:
            raise TokenRejected(f"invalid JWT: {e}") from None
        if audience.rstrip("/").rsplit("/", 1)[-1] not in claims["roles"]:
            raise TokenRejected(f"roles {claims['roles']} do not cover {audience}")
        return float(claims["exp"])

    class Credential:  # azure-identity's TokenCredential shape: get_token(scope) -> .token, .expires_on
        def __init__(self, key: str, roles: list[str]) -> None:
            self.key, self.roles = key, roles

        def get_token(self, scope: str) -> SimpleNamespace:
            exp = int(time.time()) + 300
            claims = {"aud": "https://servicebus.azure.net", "exp": exp, "roles": self.roles}
            return SimpleNamespace(token=jwt.encode(claims, self.key, algorithm="HS256"), expires_on=exp)

    def factory(credential: Credential) -> ConnectionFactory:
        return ConnectionFactory(b.url, cbs_token_provider=EntraIdTokenProvider(credential))

    b = broker_factory(cbs_validator=check)
    with factory(Credential(secret, ["orders"])).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        queue = session.create_queue("orders")
        session.create_producer(queue).send(session.create_text_message("signed in with a JWT"))
        got = session.create_consumer(queue).receive(5000)
        assert got is not None and got.get_text() == "signed in with a JWT"
    assert seen and set(seen) == {JWT}
    with factory(Credential("another-secret-0123456789abcdefgh", ["orders"])).create_connection() as conn:
        session = conn.create_session()
        with pytest.raises(JMSSecurityException, match="invalid JWT: Signature verification failed"):
            session.create_producer(session.create_queue("orders"))
    with factory(Credential(secret, ["payments"])).create_connection() as conn:
        session = conn.create_session()
        with pytest.raises(JMSSecurityException, match=r"roles \['payments'\] do not cover"):
            session.create_consumer(session.create_queue("orders"))
