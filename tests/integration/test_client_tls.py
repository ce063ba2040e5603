"""amqps:// with PEM trust and key files (the transport.* options) against the embedded broker."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSException, Queue, TextMessage

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


@pytest.fixture
def cert(tmp_path: Path) -> tuple[Path, Path]:
    crt, key = tmp_path / "broker.crt", tmp_path / "broker.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(crt)],
        check=True, capture_output=True, timeout=60,
    )
    return crt, key


def test_amqps_with_trust_store(broker_factory: Any, cert: tuple[Path, Path]) -> None:
    crt, key = cert
    b = broker_factory(tls_cert=crt, tls_key=key)
    url = f"amqps://127.0.0.1:{b.port}?transport.trustStoreLocation={crt}"
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        s.create_producer(Queue("tls")).send(s.create_text_message("secret"))
        m = s.create_consumer(Queue("tls")).receive(5000)
        assert isinstance(m, TextMessage) and m.get_text() == "secret"


def test_amqps_untrusted_certificate_is_refused(broker_factory: Any, cert: tuple[Path, Path]) -> None:
    crt, key = cert
    b = broker_factory(tls_cert=crt, tls_key=key)
    conn = ConnectionFactory(f"amqps://127.0.0.1:{b.port}?jms.connectTimeout=5000").create_connection()
    with pytest.raises(JMSException, match="certificate"):
        conn.start()
    conn.close()
    trusting = ConnectionFactory(f"amqps://127.0.0.1:{b.port}?transport.trustAll=true").create_connection()
    trusting.start()
    trusting.close()
