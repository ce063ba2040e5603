"""TLS failures are typed: JMSSecurityException naming why (unknown CA, host mismatch, expired, a
refused client certificate), and mutual TLS logs in with SASL EXTERNAL as the certificate's CN.

A CA, a server certificate and client certificates are made in the test with the openssl CLI.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from proton import LinkException, Message, SSLDomain
from proton.utils import BlockingConnection

from amqp_jms import ConnectionFactory, JMSException, JMSSecurityException
from amqp_jms.broker.routing.authorization import Authorization

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")

    def ca(name: str) -> None:
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
                "-keyout", str(d / f"{name}.key"), "-out", str(d / f"{name}.pem"))

    def issue(name: str, cn: str, issuer: str, days: str, san: str | None) -> None:
        openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={cn}",
                "-keyout", str(d / f"{name}.key"), "-out", str(d / f"{name}.csr"))
        args = ["x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / f"{issuer}.pem"),
                "-CAkey", str(d / f"{issuer}.key"), "-CAcreateserial", "-days", days,
                "-out", str(d / f"{name}.pem")]
        if san is not None:
            (d / f"{name}.ext").write_text(f"subjectAltName={san}\n")
            args += ["-extfile", str(d / f"{name}.ext")]
        openssl(*args)

    ca("server-ca")
    ca("client-ca")
    ca("rogue-ca")
    local = "IP:127.0.0.1,DNS:localhost"
    issue("server", "localhost", "server-ca", "1", local)
    issue("expired", "localhost", "server-ca", "-1", local)  # notAfter before notBefore: expired
    issue("elsewhere", "other.example", "server-ca", "1", "DNS:other.example")
    issue("billing", "billing-service", "client-ca", "1", None)
    issue("rogue", "billing-service", "rogue-ca", "1", None)  # same CN, a CA the broker does not trust
    return d


def url(b: Any, pki: Path, client: str | None = None, **extra: str) -> str:
    q = {"transport.trustStoreLocation": str(pki / "server-ca.pem"), "jms.connectTimeout": "10000", **extra}
    if client is not None:
        q |= {"transport.keyStoreLocation": str(pki / f"{client}.pem"),
              "transport.keyLocation": str(pki / f"{client}.key")}
    return f"amqps://127.0.0.1:{b.port}?" + "&".join(f"{k}={v}" for k, v in q.items())


def refused(address: str) -> JMSException:
    conn = ConnectionFactory(address).create_connection()
    try:
        with pytest.raises(JMSException) as e:
            conn.start()
    finally:
        conn.close()
    return e.value


@pytest.mark.parametrize(
    ("cert", "trust", "code", "words"),
    [
        ("server", "rogue-ca", "tls:unknown-ca", "unable to get local issuer certificate"),
        ("elsewhere", "server-ca", "tls:host-mismatch", "mismatch"),
        ("expired", "server-ca", "tls:expired", "certificate has expired"),
    ],
)
def test_server_certificate_failures_say_why(
    broker_factory: Any, pki: Path, cert: str, trust: str, code: str, words: str
) -> None:
    b = broker_factory(tls_cert=pki / f"{cert}.pem", tls_key=pki / f"{cert}.key")
    e = refused(url(b, pki, **{"transport.trustStoreLocation": str(pki / f"{trust}.pem")}))
    assert isinstance(e, JMSSecurityException)
    assert e.error_code == code
    assert words in str(e)


@pytest.fixture
def mutual(broker_factory: Any, pki: Path) -> Any:
    rules = Authorization.build({"billing-service": ["billing"]},
                                [("invoices", {"send": ["billing"], "consume": ["billing"]})])
    return broker_factory(users={"bob": "secret"}, authorization=rules, tls_cert=pki / "server.pem",
                          tls_key=pki / "server.key", tls_ca=pki / "client-ca.pem")


def test_mutual_tls_logs_in_with_external_as_the_certificate_cn(mutual: Any, pki: Path) -> None:
    # python-qpid-proton's own TLS: it hands the certificate identity to its SASL layer, which our
    # client's asyncio TLS cannot do yet (docs/client.md)
    dom = SSLDomain(SSLDomain.MODE_CLIENT)
    dom.set_trusted_ca_db(str(pki / "server-ca.pem"))
    dom.set_peer_authentication(SSLDomain.VERIFY_PEER)
    dom.set_credentials(str(pki / "billing.pem"), str(pki / "billing.key"), None)
    c = BlockingConnection(mutual.url.replace("amqps://127.0.0.1", "amqps://localhost"), timeout=10,
                           ssl_domain=dom, sasl_enabled=True, allowed_mechs="EXTERNAL")
    try:
        c.create_sender("invoices").send(Message(body="inv-1"))
        r = c.create_receiver("invoices")
        assert r.receive(timeout=5).body == "inv-1"
        r.accept()
        with pytest.raises(LinkException, match="'billing-service' may not send to 'payroll'"):
            c.create_sender("payroll")  # its roles come from its CN
    finally:
        c.close()


def test_a_rejected_client_certificate_is_a_security_error_not_framing(mutual: Any, pki: Path) -> None:
    e = refused(url(mutual, pki, "rogue"))
    assert isinstance(e, JMSSecurityException), repr(e)
    assert e.error_code == "tls:client-certificate-rejected"
    assert "client certificate" in str(e) and "unknown ca" in str(e)
    # the broker is unharmed: a trusted certificate still gets in (here with PLAIN on top)
    ok = url(mutual, pki, "billing", **{"amqp.saslMechanisms": "PLAIN"})
    with ConnectionFactory(ok, username="bob", password="secret").create_connection() as conn:
        conn.start()


def test_a_silent_tls_handshake_is_dropped(broker_factory: Any, pki: Path) -> None:
    import socket
    import time

    from amqp_jms.broker.limits import BrokerLimits

    # the TLS handshake has the handshake limit too (limits.handshake_timeout, default 10 s)
    b = broker_factory(tls_cert=pki / "server.pem", tls_key=pki / "server.key",
                       limits=BrokerLimits(handshake_timeout=0.5))
    with socket.create_connection(("127.0.0.1", b.port), timeout=5) as s:
        t0 = time.monotonic()
        assert s.recv(1) == b""  # closed by the broker: no handshake came
        assert time.monotonic() - t0 < 4


def test_plain_amqp_to_the_brokers_tls_port_fails_at_once(broker_factory: Any, pki: Path) -> None:
    """``amqp://`` to a TLS listener: the broker's TLS layer sees no TLS record and closes at
    once (it used to wait for more, and the client waited out its whole connect timeout), and
    the client names the likely fix."""
    import time

    b = broker_factory(tls_cert=pki / "server.pem", tls_key=pki / "server.key")
    started = time.monotonic()
    e = refused(f"amqp://127.0.0.1:{b.port}?jms.connectTimeout=20000")
    assert time.monotonic() - started < 5
    assert e.error_code == "amqp:connection:framing-error"
    assert "connect with amqps://" in str(e)
    # the TLS port still serves amqps://
    with ConnectionFactory(url(b, pki)).create_connection() as conn:
        conn.start()
