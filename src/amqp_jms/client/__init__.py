"""The JMS 2.0 client API (chapters 4-6) over a provider: connections, sessions, producers,
consumers, acknowledgement and local transactions. Knows nothing of AMQP."""

from .acknowledgement import AcknowledgeMode
from .browser import QueueBrowser
from .completion import CompletionListener
from .connection import Connection, ConnectionMetaData, ExceptionListener
from .connection_consumer import ConnectionConsumer
from .connection_events import ConnectionListener
from .consumer import EncodedMessage, MessageConsumer, MessageListener
from .context import JMSConsumer, JMSContext, JMSProducer
from .domain import (
    QueueConnection,
    QueueConnectionFactory,
    QueueReceiver,
    QueueSender,
    QueueSession,
    TopicConnection,
    TopicConnectionFactory,
    TopicPublisher,
    TopicSession,
    TopicSubscriber,
)
from .factory import ConnectionFactory
from .producer import MessageProducer
from .requestor import QueueRequestor, TopicRequestor
from .server_session import ServerSession, ServerSessionPool, ThreadServerSessionPool
from .session import Session

__all__ = [
    "AcknowledgeMode",
    "CompletionListener",
    "Connection",
    "ConnectionConsumer",
    "ConnectionFactory",
    "ConnectionListener",
    "ConnectionMetaData",
    "EncodedMessage",
    "ExceptionListener",
    "JMSConsumer",
    "JMSContext",
    "JMSProducer",
    "MessageConsumer",
    "MessageListener",
    "MessageProducer",
    "QueueBrowser",
    "QueueConnection",
    "QueueConnectionFactory",
    "QueueReceiver",
    "QueueRequestor",
    "QueueSender",
    "QueueSession",
    "ServerSession",
    "ServerSessionPool",
    "Session",
    "ThreadServerSessionPool",
    "TopicConnection",
    "TopicConnectionFactory",
    "TopicPublisher",
    "TopicRequestor",
    "TopicSession",
    "TopicSubscriber",
]
