"""The AMQP 1.0 provider over proton's engine: one socket and one loop thread per connection."""

from .anonymous import AnonymousFallbackProducer
from .connection import AmqpProvider, generate_connection_id
from .consumer import AmqpConsumer, AmqpInbound
from .producer import AmqpProducer
from .session import AmqpSession

__all__ = [
    "AmqpConsumer",
    "AmqpInbound",
    "AmqpProducer",
    "AmqpProvider",
    "AmqpSession",
    "AnonymousFallbackProducer",
    "generate_connection_id",
]
