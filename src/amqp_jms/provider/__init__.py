"""The provider layer: what the JMS objects talk to (``base``), the URL options (``config``),
the AMQP 1.0 implementation over proton's engine (``amqp``), the loop-thread bridge (``loop``)
and ``create_provider``, the one way the JMS layer gets a provider (``factory``).
"""

from .base import (
    Capabilities,
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
from .factory import create_provider
from .loop import LoopThread

__all__ = [
    "Capabilities",
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
    "create_provider",
    "parse_url",
    "to_jms",
]
