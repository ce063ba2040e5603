"""The one seam where AMQP error conditions become JMS exceptions.

Every refusal from the peer (a closed connection, a detached link, a rejected transfer, a
rejected discharge) comes through ``to_jms`` (conditions) or ``outcome_error`` (a transfer's
outcome, plain or inside a transactional state), so the mapping from condition symbol to
exception class lives in one table. The condition name is kept as ``error_code``.
"""

from __future__ import annotations

import ssl
from typing import Any

from ..engine.raw import TRANSACTIONAL_STATE
from ..engine.sasl_client import KNOWN, SaslCredentials
from ..exceptions import (
    InvalidClientIDException,
    InvalidDestinationException,
    JMSException,
    JMSSecurityException,
    JMSSecuritySaslException,
    ResourceAllocationException,
    SendFailedException,
    TransactionRolledBackException,
)

__all__ = ["REDIRECT_CONDITIONS", "RedirectedException", "outcome_error", "sasl_mismatch", "sasl_refused",
           "tls_error", "tls_file_error", "to_jms"]

_BY_CONDITION: dict[str, type[JMSException]] = {
    "amqp:not-found": InvalidDestinationException,
    "amqp:unauthorized-access": JMSSecurityException,
    "amqp:resource-limit-exceeded": ResourceAllocationException,
    "amqp:link:message-size-exceeded": ResourceAllocationException,
    "amqp:transaction:rollback": TransactionRolledBackException,
    "amqp:transaction:timeout": TransactionRolledBackException,
    "amqp:transaction:unknown-id": TransactionRolledBackException,
    "amqp:invalid-field": JMSException,
}


#: a peer closing the connection or a link with one of these names where to go instead
REDIRECT_CONDITIONS = ("amqp:connection:redirect", "amqp:link:redirect")


class RedirectedException(JMSException):
    """The peer closed the connection (``amqp:connection:redirect``) or a link
    (``amqp:link:redirect``) naming another server: ``info`` is the condition's map
    (``network-host``, ``port``, ``scheme``, ``hostname``), which a failover connection follows."""

    def __init__(self, reason: str, error_code: str | None, info: dict[str, Any]) -> None:
        super().__init__(reason, error_code)
        self.info = info


def to_jms(
    condition: str | None,
    description: str | None,
    context: str,
    *,
    default: type[JMSException] = JMSException,
    container_id_refused: bool = False,
    info: Any = None,
) -> JMSException:
    """A JMS exception for an AMQP error ``condition`` met while doing ``context``; ``info``, the
    condition's map, makes a redirect a RedirectedException carrying it."""
    if condition in REDIRECT_CONDITIONS and info:
        detail = f": {description}" if description else ""
        return RedirectedException(f"{context} ({condition}){detail}", condition,
                                   {str(k): v for k, v in dict(info).items()})
    if container_id_refused:
        cls: type[JMSException] = InvalidClientIDException
    elif condition in ("amqp:unauthorized-access",) or (condition or "").startswith("amqp:sasl"):
        cls = JMSSecurityException
    else:
        cls = _BY_CONDITION.get(condition or "", default)
    detail = f": {description}" if description else ""
    cond = f" ({condition})" if condition else ""
    return cls(f"{context}{cond}{detail}", condition)


_SASL_CODES: dict[int, str] = {1: "auth", 2: "sys", 3: "sys-perm", 4: "sys-temp"}


def sasl_refused(outcome: int, description: str | None, where: str,
                 why: str | None = None) -> JMSSecuritySaslException:
    """The login ``where`` was refused with sasl-code ``outcome``: a JMSSecuritySaslException
    carrying the code, so failover can tell a temporary refusal (sys-temp) from a final one.
    ``why`` (from :func:`sasl_mismatch`) replaces proton's bare "[mech=none]" with the reason."""
    name = _SASL_CODES.get(outcome, f"code {outcome}")
    detail = f": {why} ({description})" if why else f": {description}" if description else ""
    return JMSSecuritySaslException(f"the login to {where} was refused (SASL outcome {name}){detail}",
                                    "amqp:unauthorized-access", outcome=outcome)


def sasl_mismatch(offered: tuple[str, ...], creds: SaslCredentials, *, tls: bool) -> str:
    """Why the client chose no SASL mechanism (proton's bare "[mech=none]" in other clients):
    what the peer ``offered``, which of the client's own mechanisms (``engine.sasl_client.KNOWN``,
    the table the choice itself reads) ``creds`` make usable, and for each mechanism offered or
    named in ``amqp.saslMechanisms`` but not usable, what it lacks."""
    def lacks(name: str) -> str | None:
        mech = KNOWN.get(name)
        if mech is None:
            return "this client has no implementation"
        if creds.allowed and name not in creds.allowed:
            return "amqp.saslMechanisms leaves it out"
        if mech.applicable(creds):
            return None
        if name == "EXTERNAL":
            return ("the client needs a client certificate (transport.keyStoreLocation)" if tls else
                    "the client needs amqps:// with a client certificate (transport.keyStoreLocation)")
        if name == "XOAUTH2":
            return ("the client needs a username and a bearer token without spaces (the password, "
                    "or token_provider=)")
        return ("the client needs a username and password (user:pass@ in the URL, or jms.username "
                "and jms.password)")

    by_priority = sorted(KNOWN, key=lambda n: -KNOWN[n].priority)
    usable = [n for n in by_priority if lacks(n) is None]
    source = f"amqp.saslMechanisms={','.join(creds.allowed)}" if creds.allowed else "no amqp.saslMechanisms"
    parts = [f"the peer offered {', '.join(offered) if offered else 'no mechanism'}",
             f"this client could use {', '.join(usable) or 'none'} ({source}, "
             f"{'with' if creds.username else 'without'} a username{', over TLS' if tls else ''})"]
    reasons: dict[str, list[str]] = {}
    for name in dict.fromkeys([*creds.allowed, *offered]):
        reason = lacks(name)
        if reason is not None:
            reasons.setdefault(reason, []).append(name)
    parts += [f"for {', '.join(names)} {reason}" for reason, names in reasons.items()]
    return "no SASL mechanism in common: " + "; ".join(parts)


_REFUSED: dict[int, str] = {0x25: "rejected", 0x26: "released", 0x27: "modified"}


def outcome_error(state: Any, delivery: Any, what: str) -> JMSException | None:
    """None for ``accepted``; otherwise the SendFailedException (JMSSecurityException when
    unauthorized) naming the peer's error."""
    code: int = int(state or 0)
    cond_name: str | None = None
    cond_desc: str | None = None
    if code == TRANSACTIONAL_STATE:
        data: Any = delivery.remote.data or []
        inner: Any = data[1] if len(data) > 1 else None
        code = int(inner.descriptor) if inner is not None and hasattr(inner, "descriptor") else 0x24
        if code == 0x25 and inner.value:
            err: Any = inner.value[0]
            if err is not None and getattr(err, "value", None):
                cond_name = str(err.value[0])
                cond_desc = str(err.value[1]) if len(err.value) > 1 and err.value[1] else None
    else:
        c = delivery.remote.condition
        if c is not None and c.name:
            cond_name, cond_desc = str(c.name), c.description
    if code in (0, 0x24):
        return None
    name = _REFUSED.get(code, f"refused (outcome {code:#x})")
    cond_txt = f" ({cond_name})" if cond_name else ""
    desc = f": {cond_desc}" if cond_desc else ""
    text = f"{what} was {name} by the peer{cond_txt}{desc}"
    if cond_name == "amqp:unauthorized-access":  # as Qpid JMS: a refused send is a security error
        return JMSSecurityException(text, cond_name)
    return SendFailedException(text, cond_name)


# OpenSSL X509_V_ERR_* codes a client meets verifying a server, by the reason we report
_VERIFY_REASONS: dict[int, str] = {
    2: "unknown-ca", 18: "unknown-ca", 19: "unknown-ca", 20: "unknown-ca", 21: "unknown-ca",
    9: "not-yet-valid", 10: "expired", 23: "revoked", 62: "host-mismatch", 64: "host-mismatch",
}
# TLS alerts a server sends when it refuses our client certificate (ssl.SSLError.reason)
_CLIENT_CERT_ALERTS = ("CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "UNKNOWN_CA", "CERTIFICATE_UNKNOWN",
                       "CERTIFICATE_EXPIRED", "CERTIFICATE_REVOKED", "UNSUPPORTED_CERTIFICATE",
                       "ACCESS_DENIED", "HANDSHAKE_FAILURE")


def tls_file_error(exc: OSError, option: str, path: str | None) -> JMSSecurityException:
    """A TLS file the configuration names cannot be used (missing, unreadable, not PEM): a
    ``JMSSecurityException`` naming the option and the path, final for failover (another
    server will not make the file appear), instead of a bare ``FileNotFoundError``."""
    why = exc.strerror or exc.reason if isinstance(exc, ssl.SSLError) else exc.strerror
    return JMSSecurityException(
        f"TLS: cannot use {option}={path!r}: {why or exc}", "tls:unreadable-file", linked_exception=exc
    )


def tls_error(exc: ssl.SSLError, where: str) -> JMSException:
    """The JMS exception for a TLS failure talking to ``where`` (``host:port``).

    A certificate that fails verification, or a TLS alert refusing our client certificate, is a
    ``JMSSecurityException`` whose ``error_code`` says why (``tls:unknown-ca``,
    ``tls:host-mismatch``, ``tls:expired``, ``tls:client-certificate-rejected``, ...) and whose
    message carries OpenSSL's own words; any other TLS error stays a ``JMSException``.
    """
    if isinstance(exc, ssl.SSLCertVerificationError):
        reason = _VERIFY_REASONS.get(int(exc.verify_code or 0), "certificate-verify-failed")
        detail = exc.verify_message or exc.reason or str(exc)
        return JMSSecurityException(
            f"TLS: the certificate of {where} was not accepted: {detail}", f"tls:{reason}",
            linked_exception=exc,
        )
    alert = str(exc.reason or "")
    if "ALERT" in alert and alert.endswith(_CLIENT_CERT_ALERTS):
        words = alert.lower().replace("_", " ")
        return JMSSecurityException(
            f"TLS: {where} refused the connection's client certificate ({words})",
            "tls:client-certificate-rejected", linked_exception=exc,
        )
    return JMSException(f"TLS error with {where}: {exc}", "tls:error", linked_exception=exc)
