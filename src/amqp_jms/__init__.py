"""amqp-jms: the JMS 2.0 messaging model on AMQP 1.0, in Python."""

from .client import (
    Connection,
    ConnectionFactory,
    ConnectionMetaData,
    ExceptionListener,
    MessageConsumer,
    MessageListener,
    MessageProducer,
    Session,
)
from .destination import (
    Destination,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
    parse_destination,
)
from .exceptions import *  # noqa: F403
from .exceptions import __all__ as _exc_all
from .message import (
    DEFAULT_DELIVERY_DELAY,
    DEFAULT_DELIVERY_MODE,
    DEFAULT_PRIORITY,
    DEFAULT_TIME_TO_LIVE,
    BytesMessage,
    DeliveryMode,
    JavaSerializedObject,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)

__version__ = "0.1.0"

__all__ = [
    "Connection",
    "ConnectionFactory",
    "ConnectionMetaData",
    "ExceptionListener",
    "MessageConsumer",
    "MessageListener",
    "MessageProducer",
    "Session",
    "DEFAULT_DELIVERY_DELAY",
    "DEFAULT_DELIVERY_MODE",
    "DEFAULT_PRIORITY",
    "DEFAULT_TIME_TO_LIVE",
    "BytesMessage",
    "DeliveryMode",
    "JavaSerializedObject",
    "MapMessage",
    "Message",
    "ObjectMessage",
    "StreamMessage",
    "TextMessage",
    "Destination",
    "Queue",
    "TemporaryQueue",
    "TemporaryTopic",
    "Topic",
    "__version__",
    "parse_destination",
    *_exc_all,
]
