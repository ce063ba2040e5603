"""MQ <-> AMQP: the MQ mapping composed with ``amqp_jms.mapping``, nothing re-implemented.

``mq_to_amqp`` reads the JMS meaning out of an MQ message and hands it to the AMQP JMS mapping's
encoder; ``amqp_to_mq`` does the reverse. A JMS message therefore survives MQ -> AMQP -> MQ and
AMQP -> MQ -> AMQP with its JMS view (headers, properties, body) unchanged, except what one side
cannot carry (documented in docs/mq.md).
"""

from __future__ import annotations

from typing import Any

from .incoming import from_mq
from .message import MQMessage
from .mqmd import MQMD
from .outgoing import to_mq

__all__ = ["amqp_to_mq", "mq_to_amqp"]


def mq_to_amqp(md: MQMD, data: bytes) -> bytes:
    """An encoded AMQP message (bare message bytes) for an MQ message."""
    from .. import mapping

    return bytes(mapping.encode(from_mq(md, data)))


def amqp_to_mq(amqp_bytes: bytes, **options: Any) -> MQMessage:
    """The MQ form of an encoded AMQP message; ``options`` as for ``to_mq``."""
    from .. import mapping

    return to_mq(mapping.decode(amqp_bytes), **options)
