"""The one seam where AMQP error conditions become JMS exceptions.

Every refusal from the peer (a closed connection, a detached link, a rejected transfer, a
rejected discharge) comes through ``to_jms`` so the mapping from condition symbol to exception
class lives in one table. The condition name is kept as ``error_code``.
"""

from __future__ import annotations

from ..exceptions import (
    InvalidClientIDException,
    InvalidDestinationException,
    JMSException,
    JMSSecurityException,
    ResourceAllocationException,
    TransactionRolledBackException,
)

__all__ = ["to_jms"]

_BY_CONDITION: dict[str, type[JMSException]] = {
    "amqp:not-found": InvalidDestinationException,
    "amqp:unauthorized-access": JMSSecurityException,
    "amqp:resource-limit-exceeded": ResourceAllocationException,
    "amqp:transaction:rollback": TransactionRolledBackException,
    "amqp:transaction:timeout": TransactionRolledBackException,
    "amqp:transaction:unknown-id": TransactionRolledBackException,
    "amqp:invalid-field": JMSException,
}


def to_jms(
    condition: str | None,
    description: str | None,
    context: str,
    *,
    default: type[JMSException] = JMSException,
    container_id_refused: bool = False,
) -> JMSException:
    """A JMS exception for an AMQP error ``condition`` met while doing ``context``."""
    if container_id_refused:
        cls: type[JMSException] = InvalidClientIDException
    elif condition in ("amqp:unauthorized-access",) or (condition or "").startswith("amqp:sasl"):
        cls = JMSSecurityException
    else:
        cls = _BY_CONDITION.get(condition or "", default)
    detail = f": {description}" if description else ""
    cond = f" ({condition})" if condition else ""
    return cls(f"{context}{cond}{detail}", condition)
