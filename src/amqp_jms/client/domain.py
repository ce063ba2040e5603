"""The JMS 1.0 domain-specific interfaces (JMS 2.0 section 4.11): queue and topic flavours.

``QueueConnectionFactory(url).create_queue_connection()`` → ``QueueConnection`` →
``create_queue_session(transacted, acknowledge_mode)`` → ``QueueSession`` with
``create_sender``/``create_receiver``/``create_browser``; the topic side mirrors it with
``create_publisher``/``create_subscriber``. They are views over the one unified implementation:
a domain session delegates to a plain ``Session`` and refuses, with ``IllegalStateException``,
the methods table 4.11 forbids in its domain (a ``QueueSession`` has no topics, durable or
shared subscriptions or ``unsubscribe``; a ``TopicSession`` has no queues or browsers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..destination import Destination, Queue, Topic
from ..exceptions import IllegalStateException, InvalidDestinationException
from .connection import Connection
from .factory import ConnectionFactory

if TYPE_CHECKING:
    from ..message import Message
    from .consumer import MessageConsumer
    from .producer import MessageProducer
    from .session import Session

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
]

_QUEUE_FORBIDDEN = frozenset({
    "create_durable_subscriber", "create_durable_consumer", "create_shared_consumer",
    "create_shared_durable_consumer", "create_temporary_topic", "create_topic", "unsubscribe",
})
_TOPIC_FORBIDDEN = frozenset({"create_browser", "create_queue", "create_temporary_queue"})


class _DomainSession:
    """Delegates to a ``Session``; the names in ``_forbidden`` raise IllegalStateException."""

    _forbidden: frozenset[str] = frozenset()
    _domain = ""

    def __init__(self, session: Session) -> None:
        self._session = session

    @property
    def session(self) -> Session:
        return self._session

    def __getattr__(self, name: str) -> Any:
        if name in self._forbidden:
            def refuse(*args: Any, **kwargs: Any) -> Any:
                raise IllegalStateException(
                    f"{name}() is not allowed on a {type(self).__name__}: it belongs to the other "
                    f"messaging domain (JMS 2.0 section 4.11)"
                )

            return refuse
        return getattr(self._session, name)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self._session.close()


class QueueSession(_DomainSession):
    _forbidden = _QUEUE_FORBIDDEN

    def create_sender(self, queue: Queue | None) -> QueueSender:
        if queue is not None and not isinstance(queue, Queue):
            raise InvalidDestinationException(f"a QueueSender needs a Queue, got {queue!r}")
        return QueueSender(self._session.create_producer(queue))

    def create_receiver(self, queue: Queue, message_selector: str | None = None) -> QueueReceiver:
        if not isinstance(queue, Queue):
            raise InvalidDestinationException(f"a QueueReceiver needs a Queue, got {queue!r}")
        return QueueReceiver(self._session.create_consumer(queue, message_selector))


class TopicSession(_DomainSession):
    _forbidden = _TOPIC_FORBIDDEN

    def create_publisher(self, topic: Topic | None) -> TopicPublisher:
        if topic is not None and not isinstance(topic, Topic):
            raise InvalidDestinationException(f"a TopicPublisher needs a Topic, got {topic!r}")
        return TopicPublisher(self._session.create_producer(topic))

    def create_subscriber(self, topic: Topic, message_selector: str | None = None,
                          no_local: bool = False) -> TopicSubscriber:
        if not isinstance(topic, Topic):
            raise InvalidDestinationException(f"a TopicSubscriber needs a Topic, got {topic!r}")
        return TopicSubscriber(self._session.create_consumer(topic, message_selector, no_local))

    def create_durable_subscriber(self, topic: Topic, name: str, message_selector: str | None = None,
                                  no_local: bool = False) -> TopicSubscriber:
        c = self._session.create_durable_subscriber(topic, name, message_selector, no_local)
        return TopicSubscriber(c)


class _Wrapper:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()


class QueueSender(_Wrapper):
    _inner: MessageProducer

    def get_queue(self) -> Destination | None:
        return self._inner.get_destination()


class TopicPublisher(_Wrapper):
    _inner: MessageProducer

    def get_topic(self) -> Destination | None:
        return self._inner.get_destination()

    def publish(self, *args: Any, **kwargs: Any) -> None:
        """``publish(message[, ...])`` or ``publish(topic, message[, ...])``: JMS 1.0's ``send``."""
        self._inner.send(*args, **kwargs)


class QueueReceiver(_Wrapper):
    _inner: MessageConsumer

    def get_queue(self) -> Destination:
        return self._inner.destination

    def __iter__(self) -> Any:
        return iter(self._inner)


class TopicSubscriber(_Wrapper):
    _inner: MessageConsumer

    def get_topic(self) -> Destination:
        return self._inner.destination

    def __iter__(self) -> Any:
        return iter(self._inner)

    def receive(self, timeout_ms: int | None = None) -> Message | None:
        return self._inner.receive(timeout_ms)


class QueueConnection(Connection):
    def create_queue_session(
        self, transacted: bool = False, acknowledge_mode: int | None = None
    ) -> QueueSession:
        return QueueSession(self.create_session(transacted, acknowledge_mode))

    def create_durable_connection_consumer(self, *args: Any) -> Any:
        raise IllegalStateException("create_durable_connection_consumer is not allowed on a QueueConnection")

    def create_shared_durable_connection_consumer(self, *args: Any) -> Any:
        raise IllegalStateException(
            "create_shared_durable_connection_consumer is not allowed on a QueueConnection")

    def __enter__(self) -> QueueConnection:
        return self


class TopicConnection(Connection):
    def create_topic_session(
        self, transacted: bool = False, acknowledge_mode: int | None = None
    ) -> TopicSession:
        return TopicSession(self.create_session(transacted, acknowledge_mode))

    def __enter__(self) -> TopicConnection:
        return self


class QueueConnectionFactory(ConnectionFactory):
    def create_queue_connection(
        self, username: str | None = None, password: str | None = None
    ) -> QueueConnection:
        cfg = self.config if username is None else self.config.replace(username=username, password=password)
        return QueueConnection(cfg, self._provider_factory)


class TopicConnectionFactory(ConnectionFactory):
    def create_topic_connection(
        self, username: str | None = None, password: str | None = None
    ) -> TopicConnection:
        cfg = self.config if username is None else self.config.replace(username=username, password=password)
        return TopicConnection(cfg, self._provider_factory)
