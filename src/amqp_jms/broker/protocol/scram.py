"""The server half of SCRAM-SHA-256 and SCRAM-SHA-1 (RFC 5802, RFC 7677), for the broker's SASL.

Why the broker has it: clients whose proton is built with Cyrus SASL (ours, Qpid JMS) offer SCRAM,
which proves the password without sending it. The broker keeps plain passwords in its users
file, so it derives each user's salted password once (per mechanism, with a salt made at start)
and then checks proofs with HMACs. Pure functions and one small state object per exchange; the
SASL framing is :mod:`amqp_jms.broker.protocol.sasl`'s.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass

__all__ = [
    "HASH_PREFIX",
    "MECHANISMS",
    "ScramCredentials",
    "ScramError",
    "ScramExchange",
    "derive",
    "hash_password",
    "is_password_hash",
    "parse_password_hash",
    "verify_password",
]

#: mechanism name -> hash name, strongest first (the order the broker offers them in)
MECHANISMS = {"SCRAM-SHA-512": "sha512", "SCRAM-SHA-256": "sha256", "SCRAM-SHA-1": "sha1"}
ITERATIONS = 4096


class ScramError(ValueError):
    """The client's SCRAM message is malformed or its proof is wrong."""


@dataclass(frozen=True, slots=True)
class ScramCredentials:
    """What the server keeps for one user and mechanism (RFC 5802 section 3)."""

    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def derive(
    password: str, hash_name: str, salt: bytes | None = None, iterations: int = ITERATIONS
) -> ScramCredentials:
    """The stored and server keys for ``password`` (SASLprep is taken as the identity: ASCII
    and already-normalised passwords, which is what users files hold)."""
    salt = salt if salt is not None else os.urandom(16)
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    return ScramCredentials(
        salt=salt,
        iterations=iterations,
        stored_key=hashlib.new(hash_name, client_key).digest(),
        server_key=hmac.new(salted, b"Server Key", hash_name).digest(),
    )


#: stored password hashes: ``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`` (base64),
#: the format PostgreSQL keeps in pg_authid, so the broker can answer SCRAM-SHA-256 and check PLAIN
#: without ever holding the password
HASH_PREFIX = "SCRAM-SHA-256$"
# PostgreSQL's default (and RFC 7677's minimum): a PLAIN login against a hash runs PBKDF2 on the
# broker's event loop, ~1.5 ms at 4096 rounds here (36 ms at 100k would stall every other client)
HASH_ITERATIONS = ITERATIONS


def hash_password(password: str, iterations: int = HASH_ITERATIONS, salt: bytes | None = None) -> str:
    """The stored form of ``password`` (what ``amqp-jms broker --hash-password`` prints)."""
    c = derive(password, "sha256", salt, iterations)
    b64 = base64.b64encode
    return (f"{HASH_PREFIX}{c.iterations}:{b64(c.salt).decode()}$"
            f"{b64(c.stored_key).decode()}:{b64(c.server_key).decode()}")


def is_password_hash(text: str) -> bool:
    return text.startswith(HASH_PREFIX)


def parse_password_hash(text: str) -> ScramCredentials:
    """The SCRAM-SHA-256 credentials a stored hash holds; ``ValueError`` saying what is wrong."""
    if not is_password_hash(text):
        raise ValueError(f"a password hash starts with {HASH_PREFIX!r}")
    try:
        params, keys = text[len(HASH_PREFIX):].split("$")
        iterations, salt = params.split(":")
        stored, server = keys.split(":")
        creds = ScramCredentials(
            salt=base64.b64decode(salt, validate=True),
            iterations=int(iterations),
            stored_key=base64.b64decode(stored, validate=True),
            server_key=base64.b64decode(server, validate=True),
        )
    except ValueError:
        raise ValueError(
            "malformed password hash: expected SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>"
        ) from None
    if creds.iterations < 1 or len(creds.stored_key) != 32 or len(creds.server_key) != 32:
        raise ValueError("malformed password hash: bad iteration count or key length")
    return creds


def verify_password(creds: ScramCredentials, password: str, hash_name: str = "sha256") -> bool:
    """Whether ``password`` (a PLAIN login) matches stored SCRAM credentials."""
    again = derive(password, hash_name, creds.salt, creds.iterations)
    return hmac.compare_digest(again.stored_key, creds.stored_key)


def _attributes(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"malformed SCRAM attribute {part!r}")
        out.setdefault(part[0], part[2:])
    return out


def _unescape_name(name: str) -> str:
    if "=" in name.replace("=2C", "").replace("=3D", ""):
        raise ScramError("malformed SCRAM user name")
    return name.replace("=2C", ",").replace("=3D", "=")


class ScramExchange:
    """One SCRAM exchange, server side: ``first`` answers the client-first message, ``final``
    checks the client-final message and returns the server-final message."""

    def __init__(self, hash_name: str, nonce: str | None = None) -> None:
        self.hash_name = hash_name
        self._server_nonce = nonce or base64.b64encode(os.urandom(18)).decode()
        self.user: str | None = None
        self._gs2 = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._creds: ScramCredentials | None = None

    def first(self, message: bytes, lookup: dict[str, ScramCredentials]) -> tuple[str, bytes]:
        """Parse client-first; return the user name and the server-first message.

        An unknown user still gets a server-first message (with a made-up salt), so the answer
        does not tell whether the user exists; the proof then fails.
        """
        try:
            text = message.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ScramError("SCRAM client-first is not UTF-8") from e
        parts = text.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y") or (parts[1] and not parts[1].startswith("a=")):
            raise ScramError("malformed SCRAM client-first message (channel binding is not supported)")
        self._gs2 = f"{parts[0]},{parts[1]},"
        self._client_first_bare = parts[2]
        attrs = _attributes(parts[2])
        if "n" not in attrs or "r" not in attrs or "m" in attrs:
            raise ScramError("SCRAM client-first lacks a user name or nonce")
        self.user = _unescape_name(attrs["n"])
        creds = lookup.get(self.user)
        self._creds = creds if creds is not None else derive(os.urandom(8).hex(), self.hash_name)
        nonce = attrs["r"] + self._server_nonce
        salt = base64.b64encode(self._creds.salt).decode()
        self._server_first = f"r={nonce},s={salt},i={self._creds.iterations}"
        return self.user, self._server_first.encode()

    def final(self, message: bytes, known_user: bool) -> bytes:
        """Check client-final; return the server-final message, or raise :class:`ScramError`."""
        if self._creds is None:
            raise ScramError("SCRAM client-final before client-first")
        try:
            text = message.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ScramError("SCRAM client-final is not UTF-8") from e
        without_proof, sep, proof_b64 = text.rpartition(",p=")
        if not sep:
            raise ScramError("SCRAM client-final lacks a proof")
        attrs = _attributes(without_proof)
        expected_nonce = _attributes(self._server_first)["r"]
        if attrs.get("r") != expected_nonce:
            raise ScramError("SCRAM nonce mismatch")
        if attrs.get("c") != base64.b64encode(self._gs2.encode()).decode():
            raise ScramError("SCRAM channel-binding data mismatch")
        try:
            proof = base64.b64decode(proof_b64, validate=True)
        except ValueError as e:
            raise ScramError("SCRAM proof is not base64") from e
        auth = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        h = self.hash_name
        signature = hmac.new(self._creds.stored_key, auth, h).digest()
        if len(proof) != len(signature):
            raise ScramError("SCRAM proof has the wrong length")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        matches = hmac.compare_digest(hashlib.new(h, client_key).digest(), self._creds.stored_key)
        if not (known_user and matches):
            raise ScramError("SCRAM proof does not match")
        server_signature = hmac.new(self._creds.server_key, auth, h).digest()
        return b"v=" + base64.b64encode(server_signature)
