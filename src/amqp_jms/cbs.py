"""Claims-based security (CBS, the AMQP draft Azure Service Bus and Event Hubs use): tokens and
the providers that make them.

A connection factory given a token provider (``ConnectionFactory(url, cbs_token_provider=p)``)
sends, before it attaches each link, a ``put-token`` request to the peer's ``$cbs`` node: the
token for the link's *audience* (``sb://<host>/<address>``), and puts it again before the token
expires, so the links live on (``provider/amqp/cbs.py`` does the exchange).

Two providers ship: :class:`SasTokenProvider` (a shared access key's name and key, Service Bus's
``SharedAccessSignature``) and :class:`EntraIdTokenProvider` (an ``azure-identity`` credential,
the ``azure`` extra). Anything with ``get_token(audience) -> CbsToken`` will do.

A leaf module (no proton, no client): the embedded broker's ``$cbs`` node checks SAS tokens with
the same :func:`sas_signature`, so the rule for one lives here once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, quote_plus

__all__ = [
    "JWT",
    "SAS_TOKEN",
    "CbsToken",
    "CbsTokenProvider",
    "EntraIdTokenProvider",
    "SasTokenProvider",
    "parse_sas_token",
    "sas_signature",
    "sas_token",
]

#: the ``type`` of a put-token request carrying a SAS token, and one carrying a JWT
SAS_TOKEN = "servicebus.windows.net:sastoken"
JWT = "jwt"
#: the scope Entra ID issues Service Bus tokens for
SERVICE_BUS_SCOPE = "https://servicebus.azure.net/.default"


@dataclass(frozen=True, slots=True)
class CbsToken:
    """A token for one audience: its text, its ``type`` on the wire and when it expires
    (seconds since the epoch)."""

    token: str
    expires_at: float
    type: str = SAS_TOKEN


class CbsTokenProvider(Protocol):
    """What a connection asks for a token, before a link and before a token expires. Called on
    a worker thread: it may block (fetch a token over the network)."""

    def get_token(self, audience: str) -> CbsToken: ...


def sas_signature(resource: str, expiry: int, key: str) -> str:
    """The base64 HMAC-SHA256 of ``<url-encoded resource>\\n<expiry>`` under ``key`` (Service
    Bus's SharedAccessSignature rule)."""
    to_sign = f"{quote_plus(resource)}\n{expiry}".encode()
    return base64.b64encode(hmac.new(key.encode(), to_sign, hashlib.sha256).digest()).decode()


def sas_token(resource: str, key_name: str, key: str, expiry: int) -> str:
    """``SharedAccessSignature sr=<resource>&sig=<signature>&se=<expiry>&skn=<key name>``."""
    sig = quote_plus(sas_signature(resource, expiry, key))
    return f"SharedAccessSignature sr={quote_plus(resource)}&sig={sig}&se={expiry}&skn={quote_plus(key_name)}"


def parse_sas_token(token: str) -> dict[str, str]:
    """The fields of a SAS token (``sr``, ``sig``, ``se``, ``skn``), URL-decoded; ``ValueError``
    when it is not one."""
    prefix = "SharedAccessSignature "
    if not token.startswith(prefix):
        raise ValueError("not a SharedAccessSignature token")
    fields = dict(parse_qsl(token[len(prefix):], keep_blank_values=True))
    missing = {"sr", "sig", "se", "skn"} - set(fields)
    if missing:
        raise ValueError(f"SAS token lacks {', '.join(sorted(missing))}")
    return fields


class SasTokenProvider:
    """SAS tokens from a shared access key (Azure portal: Shared access policies), each valid
    for ``ttl_s`` seconds; with ``resource`` every token is for that one (say the namespace,
    ``sb://<ns>.servicebus.windows.net/``), else for the audience asked."""

    def __init__(
        self, key_name: str, key: str, *, ttl_s: float = 3600.0, resource: str | None = None
    ) -> None:
        if not key_name or not key:
            raise ValueError("a SAS token provider needs the key's name and the key")
        if ttl_s <= 0:
            raise ValueError("ttl_s must be greater than 0")
        self.key_name, self._key, self.ttl_s, self.resource = key_name, key, ttl_s, resource

    def get_token(self, audience: str) -> CbsToken:
        expiry = int(time.time() + self.ttl_s)
        token = sas_token(self.resource or audience, self.key_name, self._key, expiry)
        return CbsToken(token, expiry, SAS_TOKEN)

    def __repr__(self) -> str:  # never the key
        return f"SasTokenProvider(key_name={self.key_name!r}, ttl_s={self.ttl_s})"


class EntraIdTokenProvider:
    """Entra ID (Azure AD) tokens from an ``azure-identity`` credential (``DefaultAzureCredential``,
    ``ManagedIdentityCredential``, ...): JWTs for ``scope``, put as type ``jwt``. Install the
    ``azure`` extra (``pip install amqp-jms[azure]``) for azure-identity; any object with its
    ``get_token(scope)`` returning ``.token`` and ``.expires_on`` works."""

    def __init__(self, credential: Any, scope: str = SERVICE_BUS_SCOPE) -> None:
        if not callable(getattr(credential, "get_token", None)):
            raise TypeError("EntraIdTokenProvider needs a credential with get_token(scope) "
                            "(azure-identity's DefaultAzureCredential, for one)")
        self.credential, self.scope = credential, scope

    def get_token(self, audience: str) -> CbsToken:
        access = self.credential.get_token(self.scope)
        return CbsToken(str(access.token), float(access.expires_on), JWT)
