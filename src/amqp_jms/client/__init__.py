"""The JMS 2.0 client API (chapters 4-6) over a provider: connections, sessions, producers,
consumers, acknowledgement and local transactions. Knows nothing of AMQP."""

from .connection import Connection, ConnectionMetaData, ExceptionListener
from .consumer import MessageConsumer, MessageListener
from .factory import ConnectionFactory
from .producer import MessageProducer
from .session import Session

__all__ = [
    "Connection",
    "ConnectionFactory",
    "ConnectionMetaData",
    "ExceptionListener",
    "MessageConsumer",
    "MessageListener",
    "MessageProducer",
    "Session",
]
