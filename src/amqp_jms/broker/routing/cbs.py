"""The ``$cbs`` node: claims-based security as Azure Service Bus does it, so that clients written
for Service Bus (Microsoft's libraries, amqp-jms's ``cbs_token_provider``) can run against the
embedded broker.

A client signs in ANONYMOUS, attaches a sender to ``$cbs`` and a receiver from it, and sends
``put-token`` requests: application properties ``operation=put-token``, ``type`` (``jwt`` or
``servicebus.windows.net:sastoken``), ``name`` (the audience, ``sb://<host>/<entity>``) and
``expiration``; the token as the body. The answer (``status-code`` 200, or 401 with
``status-description`` saying why) goes back on the receiver, ``correlation-id`` = the request's
``message-id``. A token grants its connection the audience's entity (or, for an audience without
a path, every entity) until it expires: a link to an address no live token covers is refused
with ``amqp:unauthorized-access``, and when a grant lapses without a renewal the links it
covered are closed with the same condition.

Who decides on a token: SAS keys (``{key name: key}``, the signature rule of
:mod:`amqp_jms.cbs`), or a callable ``(token, type, audience) -> expiry (epoch seconds)`` raising
:class:`~amqp_jms.broker.routing.tokens.TokenRejected`.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from ...cbs import SAS_TOKEN, parse_sas_token, sas_signature
from .tokens import TokenRejected

__all__ = ["NODE", "CbsGrants", "CbsValidator", "covers", "sas_validator"]

NODE = "$cbs"
#: ``(token, type, audience) -> expiry``; raises TokenRejected
CbsValidator = Callable[[str, str, str], float]


def sas_validator(keys: Mapping[str, str]) -> CbsValidator:
    """Accept SAS tokens signed with one of ``keys`` (policy name -> key) for the audience."""

    def check(token: str, kind: str, audience: str) -> float:
        if kind != SAS_TOKEN:
            raise TokenRejected(f"token type {kind!r} is not accepted here (only {SAS_TOKEN})")
        try:
            fields = parse_sas_token(token)
            expiry = int(fields["se"])
        except ValueError as e:
            raise TokenRejected(f"malformed SAS token: {e}") from None
        key = keys.get(fields["skn"])
        if key is None:
            raise TokenRejected(f"unknown key name {fields['skn']!r}")
        if not hmac.compare_digest(sas_signature(fields["sr"], expiry, key), fields["sig"]):
            raise TokenRejected("bad signature")
        if not covers(fields["sr"], _path(audience)):
            raise TokenRejected(f"the token is for {fields['sr']!r}, not {audience!r}")
        return float(expiry)

    return check


def _path(audience: str) -> str:
    """The entity an audience names: ``sb://ns/orders`` -> ``orders``; ``sb://ns/`` -> ``""``."""
    parts = urlsplit(audience)
    return (parts.path if parts.scheme else audience).strip("/")


def covers(audience: str, address: str) -> bool:
    """Whether a grant for ``audience`` covers ``address`` (its entity, or below it; an audience
    without a path is the whole namespace). The host is not compared: the broker does not know
    the name clients reach it by."""
    entity = _path(audience)
    address = _path(address) if "://" in address else address.strip("/")  # amqps://ns/orders: orders
    return not entity or address == entity or address.startswith(entity + "/")


class CbsGrants:
    """What the ``$cbs`` node knows: the validator, and each connection's live grants."""

    def __init__(self, validator: CbsValidator) -> None:
        self.validator = validator
        self._grants: dict[int, dict[str, float]] = {}  # connection id -> audience -> expiry

    def put_token(self, conn_id: int, props: Mapping[Any, Any], body: Any) -> tuple[int, str, float | None]:
        """Answer one request: ``(status, description, expiry or None)``."""
        operation, kind, audience = props.get("operation"), props.get("type"), props.get("name")
        if operation != "put-token":
            return 400, f"operation {operation!r} is not supported (only put-token)", None
        if not isinstance(kind, str) or not isinstance(audience, str) or not isinstance(body, str):
            return 400, "put-token needs string 'type' and 'name' properties and a string body", None
        try:
            expiry = self.validator(body, kind, audience)
        except TokenRejected as e:
            return 401, str(e), None
        except Exception as e:  # a validator's bug refuses the token, never the broker
            return 401, f"validator error: {type(e).__name__}", None
        if expiry <= time.time():
            return 401, "the token has expired", None
        self._grants.setdefault(conn_id, {})[audience] = expiry
        return 200, "OK", expiry

    def allows(self, conn_id: int, address: str) -> bool:
        now = time.time()
        return any(exp > now and covers(aud, address) for aud, exp in self._grants.get(conn_id, {}).items())

    def lapsed(self, conn_id: int, audience: str) -> bool:
        """True when the grant for ``audience`` has expired (and was not renewed)."""
        return self._grants.get(conn_id, {}).get(audience, 0.0) <= time.time()

    def forget(self, conn_id: int) -> None:
        self._grants.pop(conn_id, None)
