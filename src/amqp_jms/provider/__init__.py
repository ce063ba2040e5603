"""The provider layer: what the JMS objects talk to (``base``), the URL options (``config``),
the AMQP 1.0 implementation over proton's engine (``amqp``) and the loop-thread bridge (``loop``).
"""

from .base import (
    ConsumerSpec,
    Inbound,
    InboundSink,
    ProducerSpec,
    Provider,
    ProviderConsumer,
    ProviderListener,
    ProviderProducer,
    ProviderSession,
)
from .config import ConnectionConfig, parse_url
from .errors import to_jms
from .loop import LoopThread

__all__ = [
    "ConnectionConfig",
    "ConsumerSpec",
    "Inbound",
    "InboundSink",
    "LoopThread",
    "ProducerSpec",
    "Provider",
    "ProviderConsumer",
    "ProviderListener",
    "ProviderProducer",
    "ProviderSession",
    "parse_url",
    "to_jms",
]
