"""The client side of the SASL layer (AMQP 1.0 part 5.3), sans-IO, with the mechanisms Qpid JMS
has and the choice Qpid JMS makes among them.

Why not proton's: proton's client SASL is Cyrus's, and Cyrus neither knows that our TLS (done
by asyncio, not proton) carries a client certificate, so EXTERNAL failed ("SASL(-4): no mechanism
available: Unable to find a callback: 16388"), nor has XOAUTH2; SCRAM-SHA-512 depends on the
plugins of the machine. The exchange is a header and a few small frames, so it is done here and
proton's transport runs without SASL (the AMQP header follows the outcome).

Choice (Qpid JMS's ``SaslMechanismFinder``): of the mechanisms the server offers, keep those
``amqp.saslMechanisms`` allows (all when unset) and the credentials make usable, then take the
highest priority; among equals the one the server listed last. Priorities are Qpid JMS's:
EXTERNAL and SCRAM-SHA-512 6, SCRAM-SHA-256 5, SCRAM-SHA-1 4, CRAM-MD5 2, PLAIN 1, ANONYMOUS and
XOAUTH2 0.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from proton import Data, Described, symbol, ulong

__all__ = [
    "AMQP_HEADER",
    "SASL_HEADER",
    "SaslClient",
    "SaslCredentials",
    "SaslError",
    "SaslNoMechanism",
    "SaslRefused",
    "choose_mechanism",
    "sasl_frame",
]

AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
SASL_HEADER = b"AMQP\x03\x01\x00\x00"
MECHANISMS, INIT, CHALLENGE, RESPONSE, OUTCOME = 0x40, 0x41, 0x42, 0x43, 0x44
#: a SASL frame larger than this is refused (the spec's minimum max-frame-size is 512; servers
#: send a mechanism list and short challenges)
MAX_SASL_FRAME = 65536


class SaslError(Exception):
    """The exchange cannot go on: no usable mechanism, a malformed frame, a server that failed
    to prove itself (a SCRAM signature that does not match)."""


class SaslHeaderMismatch(SaslError):
    """The server answered the SASL header with something else: ``header`` is what it sent (its
    first bytes; a TLS record type byte alone is enough to tell a TLS port)."""

    def __init__(self, header: bytes) -> None:
        super().__init__(f"the server does not speak SASL (it sent {header!r}); "
                         "amqp.saslLayer=false connects without it")
        self.header = header

    @property
    def speaks_tls(self) -> bool:
        """The answer of a TLS port: the AMQP-over-TLS header (AMQP 1.0 5.2.1, protocol id 2) or
        a TLS record (an alert, 0x15, or a handshake, 0x16)."""
        return self.header.startswith(b"AMQP\x02") or self.header[:1] in (b"\x15", b"\x16")


class SaslNoMechanism(SaslError):
    """No mechanism the server offers is one the client may and can use; ``offered`` lists
    what the server offered (the provider words the reason: ``provider.errors.sasl_mismatch``)."""

    def __init__(self, text: str, offered: tuple[str, ...]) -> None:
        super().__init__(text)
        self.offered = offered


class SaslRefused(SaslError):
    """The server answered with a sasl-outcome other than ok."""

    def __init__(self, code: int, text: str | None) -> None:
        super().__init__(f"sasl-outcome {code}" + (f": {text}" if text else ""))
        self.code = code
        self.text = text


@dataclass(frozen=True, slots=True)
class SaslCredentials:
    """What the client may sign in with. ``password`` is the bearer token for XOAUTH2;
    ``has_certificate`` says the TLS layer presents a client certificate (EXTERNAL)."""

    username: str | None = None
    password: str | None = None
    has_certificate: bool = False
    allowed: tuple[str, ...] = ()  # amqp.saslMechanisms; empty = any
    hostname: str | None = None


def sasl_frame(performative: int, fields: list[Any]) -> bytes:
    """One SASL frame (type 1) carrying the described list ``performative(fields)``."""
    d = Data()
    d.put_object(Described(ulong(performative), fields))
    body = d.encode()
    return (8 + len(body)).to_bytes(4, "big") + b"\x02\x01\x00\x00" + body


def describe(body: bytes) -> str:
    """A frame body as proton's frame trace prints it (``@sasl-init(65) [mechanism=:PLAIN, ...]``)."""
    from cproton import pn_data_format  # (Data.format cuts long values short in proton 0.40)

    d = Data()
    d.decode(body)
    err, text = pn_data_format(d._data, 65536)
    if err < 0:
        return "<undecodable>"
    # the trace writes an array's type as @<symbol>[...] (pn_data_format: @PN_SYMBOL[...]) and
    # an unsigned number in hex (the outcome's ubyte code: code=0x1, pn_data_format: code=1)
    line = re.sub(r"@PN_([A-Z0-9_]+)\[", lambda m: f"@<{m.group(1).lower()}>[",
                  bytes(text).decode("utf-8", "replace"))
    return re.sub(r"^(@sasl-outcome\(68\) \[code=)(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)):#x}", line)


# -- mechanisms --------------------------------------------------------------------------------
class _Mechanism:
    name = ""
    priority = 0

    def __init__(self, creds: SaslCredentials) -> None:
        self.creds = creds

    @staticmethod
    def applicable(creds: SaslCredentials) -> bool:
        return bool(creds.username) and bool(creds.password)

    def initial(self) -> bytes | None:
        return None

    def challenge(self, data: bytes) -> bytes:
        return b""

    def outcome_data(self, data: bytes) -> None:
        """The outcome's additional-data (SCRAM's server-final may come there)."""

    def verify(self) -> None:
        """Raise SaslError if the exchange ended before the mechanism was satisfied."""


class _Anonymous(_Mechanism):
    name = "ANONYMOUS"

    @staticmethod
    def applicable(creds: SaslCredentials) -> bool:
        return True

    def initial(self) -> bytes | None:
        return b""


class _Plain(_Mechanism):
    name, priority = "PLAIN", 1

    def initial(self) -> bytes | None:
        return b"\x00" + (self.creds.username or "").encode() + b"\x00" + (self.creds.password or "").encode()


class _External(_Mechanism):
    name, priority = "EXTERNAL", 6

    @staticmethod
    def applicable(creds: SaslCredentials) -> bool:
        return creds.has_certificate

    def initial(self) -> bytes | None:
        return b""  # the certificate's own identity (no authorization id)


class _XOAuth2(_Mechanism):
    """``user=<name>^Aauth=Bearer <token>^A^A`` (Google's XOAUTH2, as Qpid JMS sends it). A
    challenge is the server's JSON error; it is kept for the refusal's message."""

    name = "XOAUTH2"

    def __init__(self, creds: SaslCredentials) -> None:
        super().__init__(creds)
        self.error: str | None = None

    @staticmethod
    def applicable(creds: SaslCredentials) -> bool:
        token = creds.password or ""
        # Qpid JMS wants base64; a JWT is base64url parts joined by dots: both are single tokens
        return bool(creds.username) and bool(token) and not any(c.isspace() for c in token)

    def initial(self) -> bytes | None:
        user, token = (self.creds.username or "").encode(), (self.creds.password or "").encode()
        return b"user=" + user + b"\x01auth=Bearer " + token + b"\x01\x01"

    def challenge(self, data: bytes) -> bytes:
        if data and self.error is None:
            self.error = data.decode("utf-8", "replace")[:500]
        return b""


class _CramMD5(_Mechanism):
    name, priority = "CRAM-MD5", 2

    def challenge(self, data: bytes) -> bytes:
        digest = hmac.new((self.creds.password or "").encode(), data, "md5").hexdigest()
        return f"{self.creds.username} {digest}".encode()


def _scram_name(text: str) -> str:
    if not text.isascii():
        raise SaslError("SCRAM: only ASCII user names and passwords are supported (no SASLprep)")
    return text.replace("=", "=3D").replace(",", "=2C")


class _Scram(_Mechanism):
    """RFC 5802 client (no channel binding). The server-final message (``v=``) comes in a
    challenge (answered with an empty response) or in the outcome's additional-data; either way
    its signature must match, or the server never knew the password."""

    hash_name = ""

    def __init__(self, creds: SaslCredentials, nonce: str | None = None) -> None:
        super().__init__(creds)
        self.nonce = nonce or base64.b64encode(os.urandom(24)).decode()
        self._first_bare = f"n={_scram_name(creds.username or '')},r={self.nonce}"
        self._server_signature: bytes | None = None
        self._verified = False

    def initial(self) -> bytes | None:
        return ("n,," + self._first_bare).encode()

    def challenge(self, data: bytes) -> bytes:
        if self._server_signature is None:
            return self._proof(data)
        self._check_final(data)
        return b""

    def outcome_data(self, data: bytes) -> None:
        if data and not self._verified:
            self._check_final(data)

    def verify(self) -> None:
        if not self._verified:
            raise SaslError(f"{self.name}: the server accepted without proving it knows the password "
                            "(no server-final message)")

    def _proof(self, data: bytes) -> bytes:
        text = data.decode("ascii", "replace")
        attrs = dict(p.split("=", 1) for p in text.split(",") if "=" in p)
        nonce, salt, count = attrs.get("r", ""), attrs.get("s"), attrs.get("i", "")
        if text.startswith("m="):
            raise SaslError(f"{self.name}: the server requires an extension we do not support")
        if not nonce.startswith(self.nonce) or salt is None or not count.isdigit() or int(count) < 1:
            raise SaslError(f"{self.name}: malformed server-first message {text[:100]!r}")
        if int(count) > 10_000_000:
            raise SaslError(f"{self.name}: iteration count {count} is beyond reason")
        h = self.hash_name
        salted = hashlib.pbkdf2_hmac(h, _scram_name(self.creds.password or "").encode(),
                                     base64.b64decode(salt), int(count))
        without_proof = f"c=biws,r={nonce}"
        auth = f"{self._first_bare},{text},{without_proof}".encode()
        client_key = hmac.new(salted, b"Client Key", h).digest()
        signature = hmac.new(hashlib.new(h, client_key).digest(), auth, h).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self._server_signature = hmac.new(hmac.new(salted, b"Server Key", h).digest(), auth, h).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _check_final(self, data: bytes) -> None:
        text = data.decode("ascii", "replace")
        if text.startswith("e="):
            raise SaslError(f"{self.name}: the server refused: {text[2:100]}")
        got = base64.b64decode(text[2:].split(",")[0]) if text.startswith("v=") else b""
        if self._server_signature is None or not hmac.compare_digest(got, self._server_signature):
            raise SaslError(f"{self.name}: the server's signature does not match (it does not know the "
                            "password, or something in between altered the exchange)")
        self._verified = True


class _ScramSha1(_Scram):
    name, priority, hash_name = "SCRAM-SHA-1", 4, "sha1"


class _ScramSha256(_Scram):
    name, priority, hash_name = "SCRAM-SHA-256", 5, "sha256"


class _ScramSha512(_Scram):
    name, priority, hash_name = "SCRAM-SHA-512", 6, "sha512"


#: every mechanism the client has, by name
KNOWN: dict[str, type[_Mechanism]] = {
    m.name: m
    for m in (_Anonymous, _Plain, _External, _XOAuth2, _CramMD5, _ScramSha1, _ScramSha256, _ScramSha512)
}


def choose_mechanism(offered: Sequence[str], creds: SaslCredentials) -> str | None:
    """The mechanism Qpid JMS would pick from ``offered`` with ``creds`` (``None``: none fits)."""
    found = [
        KNOWN[name] for name in offered
        if name in KNOWN and (not creds.allowed or name in creds.allowed) and KNOWN[name].applicable(creds)
    ]
    if not found:
        return None
    best = max(m.priority for m in found)
    return [m for m in found if m.priority == best][-1].name


# -- the exchange ------------------------------------------------------------------------------
class SaslClient:
    """Feed it what the server sends; it says what to answer and when the AMQP layer may start.

    ``data_to_send()`` starts with the SASL protocol header. ``receive_data`` returns the bytes
    that followed the ok outcome (the start of the AMQP layer), raises :class:`SaslRefused` for
    another outcome and :class:`SaslError` when the exchange cannot go on.
    """

    def __init__(self, creds: SaslCredentials, trace: Callable[[str], None] | None = None) -> None:
        self.creds = creds
        self._trace = trace  # amqp.traceFrames: each frame as proton's trace prints it
        if trace is not None:
            trace("  -> SASL")
        self._out = bytearray(SASL_HEADER)
        self._buf = bytearray()
        self._header_seen = False
        self.mechanism: _Mechanism | None = None
        self.offered: list[str] = []
        self.done = False

    @property
    def mechanism_name(self) -> str | None:
        return self.mechanism.name if self.mechanism is not None else None

    def data_to_send(self) -> bytes:
        out, self._out = bytes(self._out), bytearray()
        return out

    def receive_data(self, data: bytes) -> bytes:
        if self.done:
            return data
        self._buf += data
        if not self._header_seen:
            if self._buf[:1] in (b"\x15", b"\x16"):  # a TLS record: it will never be a header
                raise SaslHeaderMismatch(bytes(self._buf[:8]))
            if len(self._buf) < 8:
                return b""
            header = bytes(self._buf[:8])
            if header != SASL_HEADER:
                raise SaslHeaderMismatch(header)
            del self._buf[:8]
            self._header_seen = True
            if self._trace is not None:
                self._trace("  <- SASL")
        while not self.done and len(self._buf) >= 8:
            size = int.from_bytes(self._buf[:4], "big")
            if size < 8 or size > MAX_SASL_FRAME:
                raise SaslError(f"malformed SASL frame (size {size})")
            if len(self._buf) < size:
                break
            doff = self._buf[4] * 4
            body = bytes(self._buf[doff:size]) if doff >= 8 else b""
            del self._buf[:size]
            if body:
                if self._trace is not None:
                    self._trace(f"0 <- {describe(body)}")
                self._on_frame(body)
        if self.done:
            rest, self._buf = bytes(self._buf), bytearray()
            return rest
        return b""

    def _on_frame(self, body: bytes) -> None:
        d = Data()
        try:
            d.decode(body)
            obj = d.get_object()
        except Exception as e:
            raise SaslError(f"undecodable SASL frame: {e}") from None
        if not isinstance(obj, Described) or not isinstance(obj.value, list):
            raise SaslError("malformed SASL frame (not a described list)")
        fields: list[Any] = obj.value
        first = fields[0] if fields else None
        kind = int(obj.descriptor) if isinstance(obj.descriptor, int) else None
        if kind == MECHANISMS and self.mechanism is None:
            self._on_mechanisms(first)
        elif kind == CHALLENGE and self.mechanism is not None:
            self._respond(self.mechanism.challenge(_binary(first)))
        elif kind == OUTCOME and self.mechanism is not None:
            self._on_outcome(first, fields[1] if len(fields) > 1 else None)
        else:
            raise SaslError(f"unexpected SASL frame {obj.descriptor!r} at this point of the exchange")

    def _on_mechanisms(self, value: Any) -> None:
        names = [value] if isinstance(value, str) else list(value or [])
        self.offered = [str(n) for n in names]
        name = choose_mechanism(self.offered, self.creds)
        if name is None:
            have = "a client certificate" if self.creds.has_certificate else (
                "a user name and password" if self.creds.password else
                "a user name" if self.creds.username else "no credentials")
            limit = f" and amqp.saslMechanisms={','.join(self.creds.allowed)}" if self.creds.allowed else ""
            raise SaslNoMechanism(f"no SASL mechanism fits: the server offers "
                                  f"{' '.join(self.offered) or 'none'}, and with {have}{limit} the client "
                                  "can use none of them", tuple(self.offered))
        self.mechanism = KNOWN[name](self.creds)
        fields: list[Any] = [symbol(name), self.mechanism.initial()]
        if self.creds.hostname:
            fields.append(self.creds.hostname)
        self._send(INIT, fields)

    def _respond(self, response: bytes) -> None:
        self._send(RESPONSE, [response])

    def _send(self, performative: int, fields: list[Any]) -> None:
        frame = sasl_frame(performative, fields)
        if self._trace is not None:
            self._trace(f"0 -> {describe(frame[8:])}")
        self._out += frame

    def _on_outcome(self, code: Any, additional: Any) -> None:
        assert self.mechanism is not None
        code = int(code) if isinstance(code, int) else 2
        if code != 0:
            text = getattr(self.mechanism, "error", None) or (
                _binary(additional).decode("utf-8", "replace")[:500] if additional else None)
            raise SaslRefused(code, text)
        if additional:
            self.mechanism.outcome_data(_binary(additional))
        self.mechanism.verify()
        self.done = True


def _binary(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return b""
