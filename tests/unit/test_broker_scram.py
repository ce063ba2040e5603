"""The broker's SCRAM server against the RFC test vectors, and its refusals."""

from __future__ import annotations

import base64

import pytest

from amqp_jms.broker.protocol.scram import ScramCredentials, ScramError, ScramExchange, derive


def _creds(hash_name: str, salt_b64: str) -> dict[str, ScramCredentials]:
    return {"user": derive("pencil", hash_name, base64.b64decode(salt_b64), 4096)}


@pytest.mark.parametrize(
    ("hash_name", "cnonce", "snonce", "salt", "proof", "server_final"),
    [
        (  # RFC 5802 section 5
            "sha1", "fyko+d2lbbFgONRv9qkxdawL", "3rfcNHYJY1ZVvWVs7j", "QSXCR+Q6sek8bf92",
            "v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=", "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=",
        ),
        (  # RFC 7677 section 3
            "sha256", "rOprNGfwEbeRWgbNEkqO", "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", "W22ZaJ0SNY7soEsUEjb6gQ==",
            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
            "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
        ),
    ],
)
def test_rfc_vectors(
    hash_name: str, cnonce: str, snonce: str, salt: str, proof: str, server_final: str
) -> None:
    ex = ScramExchange(hash_name, nonce=snonce)
    user, server_first = ex.first(f"n,,n=user,r={cnonce}".encode(), _creds(hash_name, salt))
    assert user == "user"
    assert server_first == f"r={cnonce}{snonce},s={salt},i=4096".encode()
    final = ex.final(f"c=biws,r={cnonce}{snonce},p={proof}".encode(), known_user=True)
    assert final == server_final.encode()


def _exchange() -> tuple[ScramExchange, str]:
    ex = ScramExchange("sha256", nonce="SERVER")
    ex.first(b"n,,n=user,r=CLIENT", _creds("sha256", "W22ZaJ0SNY7soEsUEjb6gQ=="))
    return ex, "c=biws,r=CLIENTSERVER"


def test_a_wrong_proof_is_refused() -> None:
    ex, prefix = _exchange()
    with pytest.raises(ScramError, match="proof does not match"):
        ex.final(f"{prefix},p={base64.b64encode(bytes(32)).decode()}".encode(), known_user=True)


def test_an_unknown_user_gets_a_challenge_but_never_succeeds() -> None:
    ex = ScramExchange("sha256", nonce="S")
    user, server_first = ex.first(b"n,,n=mallory,r=C", {})
    assert user == "mallory" and server_first.startswith(b"r=CS,s=")
    with pytest.raises(ScramError):
        ex.final(b"c=biws,r=CS,p=" + base64.b64encode(bytes(32)), known_user=False)


@pytest.mark.parametrize(
    "first",
    [b"", b"p=tls-unique,,n=user,r=C", b"n,,r=C", b"n,,n=user", b"n,,m=ext,n=user,r=C", b"\xff\xfe",
     b"n,,n=a=b,r=C"],
)
def test_malformed_client_first_is_a_scram_error(first: bytes) -> None:
    with pytest.raises(ScramError):
        ScramExchange("sha256").first(first, {})


@pytest.mark.parametrize(
    "final",
    [b"c=biws,r=CLIENTSERVER", b"c=biws,r=OTHER,p=AAAA", b"c=eSws,r=CLIENTSERVER,p=AAAA",
     b"c=biws,r=CLIENTSERVER,p=!!"],
)
def test_malformed_or_mismatched_client_final_is_a_scram_error(final: bytes) -> None:
    ex, _ = _exchange()
    with pytest.raises(ScramError):
        ex.final(final, known_user=True)


def test_user_names_are_unescaped() -> None:
    ex = ScramExchange("sha256", nonce="S")
    user, _ = ex.first(b"n,,n=a=2Cb=3Dc,r=C", {})
    assert user == "a,b=c"
