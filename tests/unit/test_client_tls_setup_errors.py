"""TLS set-up mistakes fail at once with a typed error naming the fix:

- ``amqp://`` to a port that speaks TLS, when the server answers the AMQP header with TLS (its
  TLS header or a TLS alert): the hint ``amqps://`` and the error code;
- a trust store or key store that is missing or not PEM: ``JMSSecurityException`` naming the
  option and the path (not a bare ``FileNotFoundError``), before any connection is made."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from amqp_jms import ConnectionFactory, JMSException, JMSSecurityException

TLS_ANSWERS = {
    "amqp-tls-header": b"AMQP\x02\x01\x00\x00",  # AMQP 1.0 5.2.1: the protocol the server speaks
    "tls-alert": b"\x15\x03\x03\x00\x02\x02\x46",  # fatal protocol_version alert
}


@pytest.mark.parametrize("answer", TLS_ANSWERS.values(), ids=TLS_ANSWERS.keys())
def test_plain_amqp_to_a_tls_port_fails_fast_with_a_hint(answer: bytes) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(8)
            conn.sendall(answer)
            conn.recv(1024)  # until the client hangs up

    threading.Thread(target=serve, daemon=True).start()
    started = time.monotonic()
    conn = ConnectionFactory(f"amqp://127.0.0.1:{port}?jms.connectTimeout=20000").create_connection()
    try:
        with pytest.raises(JMSException) as err:
            conn.start()  # connects
    finally:
        conn.close()
        listener.close()
    assert time.monotonic() - started < 10  # not the 20 s connect timeout
    assert f"127.0.0.1:{port} speaks TLS: connect with amqps://" in str(err.value)
    assert err.value.error_code == "amqp:connection:framing-error"


def _refused(url: str) -> JMSException:
    conn = ConnectionFactory(url).create_connection()
    try:
        with pytest.raises(JMSException) as err:
            conn.start()
    finally:
        conn.close()
    return err.value


def test_a_missing_trust_store_is_a_security_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    err = _refused(f"amqps://127.0.0.1:1?transport.trustStoreLocation={missing}")
    assert isinstance(err, JMSSecurityException)
    assert err.error_code == "tls:unreadable-file"
    assert f"transport.trustStoreLocation={str(missing)!r}" in str(err)
    assert "No such file or directory" in str(err)
    assert isinstance(err.linked_exception, FileNotFoundError)


def test_a_trust_store_that_is_not_pem_names_the_path(tmp_path: Path) -> None:
    junk = tmp_path / "ca.pem"
    junk.write_text("not a certificate\n")
    err = _refused(f"amqps://127.0.0.1:1?transport.trustStoreLocation={junk}")
    assert isinstance(err, JMSSecurityException) and str(junk) in str(err)


def test_a_missing_key_store_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "client.pem"
    err = _refused(f"amqps://127.0.0.1:1?transport.keyStoreLocation={missing}")
    assert isinstance(err, JMSSecurityException) and str(missing) in str(err)
    assert "transport.keyStoreLocation" in str(err)
