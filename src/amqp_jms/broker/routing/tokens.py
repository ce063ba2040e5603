"""Bearer tokens the broker accepts: who a token names, or why it is refused.

Used by the SASL layer's XOAUTH2 (``protocol/sasl.py``): a client signs in with a user name and
an OAuth 2.0 bearer token, and a configured validator decides. Two kinds:

* :class:`JwtValidator`: a JWT checked with PyJWT against a key from the configuration (an HMAC
  secret, or a PEM public key for RS*/ES*/PS*), its expiry, and when configured its audience and
  issuer; the identity is the ``sub`` claim (or another, ``identity_claim``).
* any callable ``(user, token) -> identity`` raising :class:`TokenRejected` (an introspection
  call, a lookup table): :class:`CallableValidator` wraps it.

A refusal names its reason ("expired", "wrong audience") so the client's exception can say it.
The validator runs on the broker's loop for a JWT (a signature check: microseconds to a
millisecond); a callable that may block is the embedder's to make quick.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

__all__ = ["CallableValidator", "JwtValidator", "TokenRejected", "TokenValidator"]


class TokenRejected(Exception):
    """The token is not accepted; the message says why (it reaches the client)."""


class TokenValidator(Protocol):
    def validate(self, user: str, token: str) -> str:
        """The identity ``token`` proves (may differ from ``user``), or raise TokenRejected."""
        ...


class CallableValidator:
    """A Python callable ``(user, token) -> identity`` as a validator; any exception other than
    :class:`TokenRejected` is a refusal too ("validator error"), never a broker crash."""

    def __init__(self, check: Callable[[str, str], str]) -> None:
        self.check = check

    def validate(self, user: str, token: str) -> str:
        try:
            identity = self.check(user, token)
        except TokenRejected:
            raise
        except Exception as e:
            raise TokenRejected(f"validator error: {type(e).__name__}") from e
        if not isinstance(identity, str) or not identity:
            raise TokenRejected("the validator named no identity")
        return identity


class JwtValidator:
    """JWTs signed with ``key`` (text, or a file path for a PEM key), checked with PyJWT."""

    def __init__(
        self,
        key: str | bytes,
        *,
        algorithms: Sequence[str] = ("RS256",),
        audience: str | None = None,
        issuer: str | None = None,
        identity_claim: str = "sub",
        leeway_s: float = 0.0,
    ) -> None:
        try:
            import jwt  # noqa: F401  (PyJWT: the `oauth` extra)
        except ImportError as e:
            raise ImportError("JWT validation needs PyJWT: pip install amqp-jms[oauth]") from e
        self.key = key
        self.algorithms = list(algorithms)
        self.audience, self.issuer = audience, issuer
        self.identity_claim = identity_claim
        self.leeway_s = leeway_s

    @classmethod
    def from_file(cls, path: str | Path, **options: Any) -> JwtValidator:
        return cls(Path(path).read_bytes(), **options)

    def validate(self, user: str, token: str) -> str:
        import jwt

        try:
            claims = jwt.decode(
                token, self.key, algorithms=self.algorithms, audience=self.audience, issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp"], "verify_aud": self.audience is not None},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRejected("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise TokenRejected(f"wrong audience (this broker is {self.audience!r})") from None
        except jwt.InvalidIssuerError:
            raise TokenRejected("wrong issuer") from None
        except jwt.InvalidSignatureError:
            raise TokenRejected("bad signature") from None
        except jwt.PyJWTError as e:
            raise TokenRejected(f"invalid token: {e}") from None
        identity = claims.get(self.identity_claim)
        if not isinstance(identity, str) or not identity:
            raise TokenRejected(f"the token has no {self.identity_claim!r} claim")
        if user and user != identity:
            raise TokenRejected(f"the token is for {identity!r}, not {user!r}")
        return identity
