"""The server side of the SASL layer (AMQP 1.0 part 5.3), in front of a non-SASL proton transport.

proton's server SASL cannot check PLAIN passwords without Cyrus configuration, and the exchange
is five small frames, so the broker does it here: read the SASL protocol header, offer the
mechanisms, check ``sasl-init``, answer ``sasl-outcome``, then hand every following byte (the
AMQP protocol header onwards) to proton. The frame bodies are encoded and decoded with proton's
``Data``; this module only frames them.

Users file: one ``user:password`` (or ``user=password``) per line, ``#`` comments.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from proton import UNDESCRIBED, Array, Data, Described, symbol, ubyte

from ...engine.sasl_client import AMQP_HEADER, SASL_HEADER
from ...engine.sasl_client import sasl_frame as _frame
from ..routing.tokens import TokenRejected, TokenValidator
from .scram import MECHANISMS as SCRAM_MECHANISMS
from .scram import (
    ScramCredentials,
    ScramError,
    ScramExchange,
    derive,
    is_password_hash,
    parse_password_hash,
    verify_password,
)
from .terminus import data_object

__all__ = [
    "AMQP_HEADER",
    "SASL_HEADER",
    "SaslResult",
    "SaslServer",
    "Users",
    "certificate_identity",
    "load_users",
]

_MECHANISMS = 0x40
_INIT = 0x41
_CHALLENGE = 0x42
_RESPONSE = 0x43
_OUTCOME = 0x44
_MAX_FRAME = 65536


@dataclass
class Users:
    """Who may connect: ``passwords`` for SCRAM and PLAIN; ``anonymous`` allows ANONYMOUS.

    A password may be stored hashed (``SCRAM-SHA-256$...``, see :func:`scram.hash_password`):
    such a user logs in with SCRAM-SHA-256 or PLAIN (checked against the hash), not SCRAM-SHA-1.
    """

    passwords: dict[str, str] = field(default_factory=dict)
    anonymous: bool = True
    _scram: dict[str, dict[str, ScramCredentials]] = field(default_factory=dict, repr=False)

    def check(self, user: str, password: str) -> bool:
        """A PLAIN login. An unknown user costs what a known one does (a hashed password is
        checked against a decoy hash), so the answer's timing does not tell which users exist."""
        expected = self.passwords.get(user)
        if expected is None:
            if self.passwords and any(is_password_hash(pw) for pw in self.passwords.values()):
                verify_password(self._decoy(), password)
            return not self.passwords and self.anonymous
        if is_password_hash(expected):
            return verify_password(self.scram_credentials("SCRAM-SHA-256")[user], password)
        return hmac.compare_digest(expected.encode(), password.encode())

    def _decoy(self) -> ScramCredentials:
        """A SCRAM-SHA-256 credential no password matches, with the iteration count of the
        stored hashes (made once)."""
        creds = self._scram.setdefault("decoy", {})
        decoy = creds.get("")
        if decoy is None:
            stored = self.scram_credentials("SCRAM-SHA-256")
            iterations = max((c.iterations for c in stored.values()), default=4096)
            decoy = creds[""] = derive(os.urandom(16).hex(), "sha256", iterations=iterations)
        return decoy

    @property
    def mechanisms(self) -> list[str]:
        """Strongest first. SCRAM needs known passwords, so it is offered only with a users list;
        SCRAM-SHA-1 only when no password is stored as a (SHA-256) hash."""
        scram = list(SCRAM_MECHANISMS) if self.passwords else []
        if any(is_password_hash(pw) for pw in self.passwords.values()):
            scram = ["SCRAM-SHA-256"]
        return [*scram, "PLAIN", "ANONYMOUS"] if self.anonymous else [*scram, "PLAIN"]

    def scram_credentials(self, mechanism: str) -> dict[str, ScramCredentials]:
        """Every user's SCRAM keys for ``mechanism``: read from stored hashes, or derived on first
        use (PBKDF2 is slow on purpose) with a salt made for this broker run."""
        creds = self._scram.get(mechanism)
        if creds is None:
            h = SCRAM_MECHANISMS[mechanism]
            creds = {}
            for user, pw in self.passwords.items():
                if not is_password_hash(pw):
                    creds[user] = derive(pw, h)
                elif mechanism == "SCRAM-SHA-256":
                    creds[user] = parse_password_hash(pw)
            self._scram[mechanism] = creds
        return creds


def load_users(source: str | Path | dict[str, str] | Users | None) -> Users:
    """Users from a dict or a users file; ``None`` allows anyone (ANONYMOUS, any PLAIN)."""
    if source is None:
        return Users()
    if isinstance(source, Users):
        return source
    if isinstance(source, dict):
        return Users(dict(source), anonymous=False)
    passwords: dict[str, str] = {}
    for n, line in enumerate(Path(source).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        sep = ":" if ":" in line else "="
        user, s, pw = line.partition(sep)
        if not s or not user.strip():
            raise ValueError(f"{source}:{n}: expected 'user:password', got {line!r}")
        passwords[user.strip()] = pw.strip()
    return Users(passwords, anonymous=False)


class SaslResult(Enum):
    PENDING = "pending"
    OK = "ok"
    FAILED = "failed"
    NONE = "none"  # the client skipped SASL and that is allowed


def certificate_identity(peercert: dict[str, Any] | None) -> str | None:
    """Who a verified TLS client certificate names: its subject CN (else the whole subject)."""
    if not peercert:
        return None
    rdns = [pair for rdn in peercert.get("subject", ()) for pair in rdn]
    for key, value in rdns:
        if key == "commonName":
            return str(value)
    return ",".join(f"{k}={v}" for k, v in rdns) or None


class SaslServer:
    """Feed it the first bytes of a connection; it says what to write and when SASL is done.

    ``external_id`` is the identity of the peer's verified TLS client certificate: when set,
    EXTERNAL is offered (first) and authenticates as it. ``admit`` (if given) is asked when the
    client starts a login: false (too many failed logins from its address, see
    :mod:`amqp_jms.broker.protocol.login_throttle`) refuses it with ``sys-temp`` before any check.
    """

    def __init__(
        self,
        users: Users,
        external_id: str | None = None,
        admit: Callable[[], bool] | None = None,
        *,
        max_frame_size: int = _MAX_FRAME,
        token_validator: TokenValidator | None = None,
    ) -> None:
        self.users = users
        #: XOAUTH2 (an OAuth bearer token) is offered when a validator decides on tokens
        self.token_validator = token_validator
        self._token_refused = False
        self.max_frame_size = max_frame_size
        self.external_id = external_id
        self.admit = admit
        self.result = SaslResult.PENDING
        self.user: str | None = None
        self._buf = b""
        self._header_seen = False
        self._scram: ScramExchange | None = None
        self._scram_mech = ""

    def feed(self, data: bytes) -> tuple[bytes, bytes]:
        """Consume input. Returns (bytes to write to the peer, leftover bytes for the AMQP layer).

        Leftover bytes are only returned once ``result`` is ``OK`` or ``NONE``.
        """
        self._buf += data
        out = b""
        if not self._header_seen:
            if len(self._buf) < 8:
                return b"", b""
            header, self._buf = self._buf[:8], self._buf[8:]
            self._header_seen = True
            if header == AMQP_HEADER and self.users.anonymous and not self.users.passwords:
                self.result = SaslResult.NONE
                rest, self._buf = header + self._buf, b""
                return b"", rest
            if header != SASL_HEADER:
                self.result = SaslResult.FAILED
                return SASL_HEADER, b""
            offered = (["EXTERNAL"] if self.external_id else []) + self.users.mechanisms
            if self.token_validator is not None:
                offered.append("XOAUTH2")
            names = [symbol(m) for m in offered]
            mechs = Array(UNDESCRIBED, Data.SYMBOL, *names)  # type: ignore[arg-type]
            out = SASL_HEADER + _frame(_MECHANISMS, [mechs])
        while self.result is SaslResult.PENDING and len(self._buf) >= 8:
            size = int.from_bytes(self._buf[:4], "big")
            if size < 8 or size > self.max_frame_size:
                self.result = SaslResult.FAILED
                return out, b""
            if len(self._buf) < size:
                break
            doff = self._buf[4] * 4
            body = self._buf[doff:size] if doff >= 8 else b""
            self._buf = self._buf[size:]
            if not body:
                continue  # an empty frame
            out += self._on_frame(body)
        if self.result is SaslResult.OK:
            rest, self._buf = self._buf, b""
            return out, rest
        return out, b""

    def _on_frame(self, body: bytes) -> bytes:
        d = Data()
        try:
            d.decode(body)
            obj = data_object(d)
        except Exception:
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(2)])  # sys: malformed
        if not isinstance(obj, Described) or not isinstance(obj.value, list):
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(2)])
        if self._token_refused:  # the client's (empty) answer to our XOAUTH2 error challenge
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(1)])
        if self._scram is not None:
            if obj.descriptor != _RESPONSE:
                self.result = SaslResult.FAILED
                return _frame(_OUTCOME, [ubyte(2)])
            first = obj.value[0] if obj.value else None
            return self._scram_final(bytes(first) if isinstance(first, bytes | memoryview) else b"")
        if self.admit is not None and not self.admit():
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(4)])  # sys-temp: this address is locked out for now
        if obj.descriptor != _INIT:
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(2)])
        fields: list[Any] = obj.value
        # the peer chooses the types: a mechanism must be a symbol (str), a response binary (or
        # null). ``bytes(100000000)`` would allocate 100 MB; any other type is malformed.
        mech_field = fields[0] if fields else None
        resp_field = fields[1] if len(fields) > 1 else None
        if not isinstance(mech_field, str) or not isinstance(resp_field, bytes | memoryview | None):
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(2)])  # sys: malformed
        mech = str(mech_field)
        response = bytes(resp_field) if resp_field is not None else b""
        ok = False
        if mech in SCRAM_MECHANISMS and self.users.passwords:
            return self._scram_first(mech, response)
        if mech == "XOAUTH2" and self.token_validator is not None:
            return self._xoauth2(response)
        if mech == "ANONYMOUS" and self.users.anonymous:
            ok = True
        elif mech == "EXTERNAL" and self.external_id:
            # the response is an optional authorization identity: only the certificate's own
            authzid = response.decode("utf-8", "replace")
            ok = authzid in ("", self.external_id)
            self.user = self.external_id if ok else None
        elif mech == "PLAIN":
            parts = response.split(b"\x00")
            if len(parts) == 3:
                user, pw = parts[1].decode("utf-8", "replace"), parts[2].decode("utf-8", "replace")
                ok = self.users.check(user, pw)
                self.user = user if ok else None
        self.result = SaslResult.OK if ok else SaslResult.FAILED
        return _frame(_OUTCOME, [ubyte(0 if ok else 1)])

    # -- XOAUTH2: ``user=<name>^Aauth=Bearer <token>^A^A``; a refusal is a challenge carrying the
    # error as JSON (Google's form, which Qpid JMS and our client report), then outcome auth
    def _xoauth2(self, response: bytes) -> bytes:
        assert self.token_validator is not None
        fields = dict(p.split("=", 1) for p in response.decode("utf-8", "replace").split("\x01") if "=" in p)
        auth = fields.get("auth", "")
        token = auth[7:] if auth[:7].lower() == "bearer " else ""
        try:
            if not token:
                raise TokenRejected("no bearer token in the XOAUTH2 response")
            self.user = self.token_validator.validate(fields.get("user", ""), token)
        except TokenRejected as e:
            self._token_refused = True
            error = json.dumps({"status": "401", "schemes": "bearer", "error": str(e)})
            return _frame(_CHALLENGE, [error.encode()])
        self.result = SaslResult.OK
        return _frame(_OUTCOME, [ubyte(0)])

    # -- SCRAM: init carries client-first, a challenge carries server-first, the response carries
    # client-final, and the outcome's additional-data carries server-final (AMQP 5.3.3.6)
    def _scram_first(self, mech: str, client_first: bytes) -> bytes:
        self._scram = ScramExchange(SCRAM_MECHANISMS[mech])
        self._scram_mech = mech
        try:
            _, server_first = self._scram.first(client_first, self.users.scram_credentials(mech))
        except ScramError:
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(2)])
        return _frame(_CHALLENGE, [server_first])

    def _scram_final(self, client_final: bytes) -> bytes:
        assert self._scram is not None
        user = self._scram.user
        try:
            server_final = self._scram.final(client_final, user in self.users.passwords)
        except ScramError:
            self.result = SaslResult.FAILED
            return _frame(_OUTCOME, [ubyte(1)])
        self.user = user
        self.result = SaslResult.OK
        return _frame(_OUTCOME, [ubyte(0), server_final])
