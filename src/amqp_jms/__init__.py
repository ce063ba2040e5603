"""amqp-jms: the JMS 2.0 messaging model on AMQP 1.0, in Python.

The client classes are loaded on first use (PEP 562 ``__getattr__``): importing
``amqp_jms.broker`` or ``amqp_jms.mapping`` runs this module first, and must not pay for (or
depend on) the client and its provider.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ._version import __version__
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

if _TYPE_CHECKING:
    from .client import (
        AcknowledgeMode,
        CompletionListener,
        Connection,
        ConnectionFactory,
        ConnectionListener,
        ConnectionMetaData,
        ExceptionListener,
        JMSConsumer,
        JMSContext,
        JMSProducer,
        MessageConsumer,
        MessageListener,
        MessageProducer,
        QueueBrowser,
        QueueConnection,
        QueueConnectionFactory,
        QueueReceiver,
        QueueRequestor,
        QueueSender,
        QueueSession,
        Session,
        TopicConnection,
        TopicConnectionFactory,
        TopicPublisher,
        TopicRequestor,
        TopicSession,
        TopicSubscriber,
    )

__all__ = [
    "QueueConnection",
    "QueueConnectionFactory",
    "QueueReceiver",
    "QueueSender",
    "QueueSession",
    "TopicConnection",
    "TopicConnectionFactory",
    "TopicPublisher",
    "TopicSession",
    "TopicSubscriber",
    "AcknowledgeMode",
    "CompletionListener",
    "Connection",
    "ConnectionFactory",
    "ConnectionListener",
    "ConnectionMetaData",
    "ExceptionListener",
    "JMSConsumer",
    "JMSContext",
    "JMSProducer",
    "MessageConsumer",
    "MessageListener",
    "MessageProducer",
    "QueueBrowser",
    "QueueRequestor",
    "Session",
    "TopicRequestor",
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


def __getattr__(name: str) -> _Any:
    """Load a client class on first use, so importing a sub-package never loads the client
    (every other name of ``__all__`` is bound above, so only the client's come here)."""
    if name in __all__:
        from . import client

        value = getattr(client, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the client classes included before their first use."""
    return sorted(set(globals()) | set(__all__))
