"""Certificates made for a test with ``openssl``: a server certificate for 127.0.0.1, a client
CA, a client certificate it signed (CN ``alice``) and a self-signed "rogue" one it did not.

Tests of TLS and SASL EXTERNAL need real certificates; making them per test run keeps private
keys out of the repository. Each key is RSA 2048 (about 0.1 s each)."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["make_pki"]


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_pki(directory: Path) -> dict[str, Path]:
    """PEM files in ``directory``: ``server``/``server-key`` (self-signed, CN and SAN 127.0.0.1),
    ``ca``/``ca-key``, ``client``/``client-key`` (signed by ``ca``, subject O=amqp-jms, CN=alice),
    ``rogue``/``rogue-key`` (self-signed CN=mallory)."""
    p = {n: directory / f"{n}.pem" for n in ("server", "server-key", "ca", "ca-key", "client", "client-key",
                                             "client-csr", "rogue", "rogue-key")}
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(p["server-key"]),
             "-out", str(p["server"]), "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(p["ca-key"]),
             "-out", str(p["ca"]), "-days", "1", "-subj", "/CN=test-client-ca")
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", str(p["client-key"]),
             "-out", str(p["client-csr"]), "-subj", "/O=amqp-jms/CN=alice")
    _openssl("x509", "-req", "-in", str(p["client-csr"]), "-CA", str(p["ca"]), "-CAkey", str(p["ca-key"]),
             "-CAcreateserial", "-out", str(p["client"]), "-days", "1")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(p["rogue-key"]),
             "-out", str(p["rogue"]), "-days", "1", "-subj", "/CN=mallory")  # not signed by the CA
    return p
