"""SASL EXTERNAL: a TLS client certificate signed by the broker's trusted CA authenticates.

Raw python-qpid-proton clients with their own certificates; openssl makes the CA and certs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from proton import ConnectionException, Message, SSLDomain
from proton.utils import BlockingConnection


def domain(pki: dict[str, Path], cert: str | None) -> SSLDomain:
    dom = SSLDomain(SSLDomain.MODE_CLIENT)
    dom.set_trusted_ca_db(str(pki["server"]))
    dom.set_peer_authentication(SSLDomain.VERIFY_PEER)
    if cert is not None:
        dom.set_credentials(str(pki[cert]), str(pki[f"{cert}-key"]), None)
    return dom


@pytest.fixture
def tls_broker(broker_factory: Any, pki: dict[str, Path]) -> Any:
    # PLAIN needs a password: without a certificate, only bob/secret gets in
    return broker_factory(users={"bob": "secret"}, tls_cert=str(pki["server"]),
                          tls_key=str(pki["server-key"]), tls_ca=str(pki["ca"]))


def roundtrip(c: BlockingConnection, address: str) -> None:
    c.create_sender(address).send(Message(body="hello"))
    r = c.create_receiver(address)
    assert r.receive(timeout=5).body == "hello"
    r.accept()


def test_client_certificate_authenticates_with_external(tls_broker: Any, pki: dict[str, Path]) -> None:
    c = BlockingConnection(tls_broker.url, timeout=10, ssl_domain=domain(pki, "client"),
                           sasl_enabled=True, allowed_mechs="EXTERNAL")
    roundtrip(c, "external-q")
    c.close()


def test_without_a_certificate_external_is_not_offered(tls_broker: Any, pki: dict[str, Path]) -> None:
    with pytest.raises(ConnectionException):
        BlockingConnection(tls_broker.url, timeout=10, ssl_domain=domain(pki, None),
                           sasl_enabled=True, allowed_mechs="EXTERNAL")
    c = BlockingConnection(tls_broker.url, timeout=10, ssl_domain=domain(pki, None), user="bob",
                           password="secret", allowed_mechs="PLAIN")  # PLAIN still works
    roundtrip(c, "plain-q")
    c.close()


def test_certificate_from_an_untrusted_issuer_is_refused(tls_broker: Any, pki: dict[str, Path]) -> None:
    with pytest.raises(ConnectionException):
        BlockingConnection(tls_broker.url, timeout=10, ssl_domain=domain(pki, "rogue"),
                           sasl_enabled=True, allowed_mechs="EXTERNAL")
    c = BlockingConnection(tls_broker.url, timeout=10, ssl_domain=domain(pki, "client"),
                           sasl_enabled=True, allowed_mechs="EXTERNAL")
    c.close()  # the broker is fine


def test_tls_ca_needs_a_tls_listener() -> None:
    from amqp_jms.broker import Broker

    with pytest.raises(ValueError, match="tls_ca"):
        Broker(tls_ca="ca.pem")


def test_the_jms_client_signs_in_with_its_certificate(tls_broker: Any, pki: dict[str, Path]) -> None:
    # was "SASL(-4): no mechanism available: Unable to find a callback: 16388": Cyrus did not know
    # asyncio's TLS carried a certificate; the client's own SASL offers EXTERNAL when it does
    from amqp_jms import ConnectionFactory, JMSSecurityException

    url = (f"{tls_broker.url.replace('amqp://', 'amqps://')}?transport.trustStoreLocation={pki['server']}"
           f"&transport.keyStoreLocation={pki['client']}&transport.keyLocation={pki['client-key']}")
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        queue = session.create_queue("external-jms")
        session.create_producer(queue).send(session.create_text_message("signed"))
        got = session.create_consumer(queue).receive(5000)
        assert got is not None and got.get_text() == "signed"
    rogue = url.replace(str(pki["client"]), str(pki["rogue"]))
    rogue = rogue.replace(str(pki["client-key"]), str(pki["rogue-key"]))
    conn = ConnectionFactory(rogue + "&amqp.saslMechanisms=EXTERNAL").create_connection()
    with pytest.raises(JMSSecurityException):
        conn.start()
    conn.close()


def test_require_client_certificate_refuses_a_client_without_one(
    broker_factory: Any, pki: dict[str, Path], tmp_path: Path
) -> None:
    from amqp_jms import ConnectionFactory, JMSSecurityException
    from amqp_jms.broker.operations.config import ConfigError, load_config

    config = tmp_path / "broker.toml"
    config.write_text(f'[listener]\nport = 0\nws_port = 0\n[tls]\ncert = "{pki["server"]}"\n'
                      f'key = "{pki["server-key"]}"\nca = "{pki["ca"]}"\nrequire_client_certificate = true\n')
    b = broker_factory(**load_config(config).broker_options())
    trust = f"?transport.trustStoreLocation={pki['server']}"
    for url in (b.url.replace("amqp://", "amqps://"), b.ws_url):
        conn = ConnectionFactory(url + trust + "&jms.connectTimeout=5000").create_connection()
        with pytest.raises(JMSSecurityException):  # the handshake fails: no certificate
            conn.start()
        conn.close()
        mine = f"&transport.keyStoreLocation={pki['client']}&transport.keyLocation={pki['client-key']}"
        with ConnectionFactory(url + trust + mine).create_connection() as ok:
            ok.start()
    config.write_text('[tls]\nrequire_client_certificate = true\n')
    with pytest.raises(ConfigError, match="needs ca"):
        load_config(config)
