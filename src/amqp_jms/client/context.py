"""The JMS 2.0 simplified API (chapter 11): JMSContext, JMSProducer, JMSConsumer.

A ``JMSContext`` is a connection plus one session; it starts the connection by itself when
the first consumer is created (``autostart``), and every error it raises is the unchecked twin
of the checked one (``JMSRuntimeException`` and family, via ``exceptions.to_runtime``), so a
failed commit raises ``TransactionRolledBackRuntimeException``. ``context.create_context(mode)``
makes another context on the same connection; the connection closes with the last of them.

``JMSProducer`` is a light, fluent object (``context.create_producer().set_priority(7)
.set_property("k", 1).send(queue, "body")``): all producers of a context share one anonymous
``MessageProducer``, and the producer's settings, properties and header values are applied to
each message as it is sent. ``send`` takes a ``Message`` or a body: ``str`` (TextMessage),
``bytes`` (BytesMessage), ``dict`` (MapMessage), anything else (ObjectMessage).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from ..destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from ..exceptions import (
    IllegalStateRuntimeException,
    JMSRuntimeException,
)
from ..message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from ._runtime import runtime as _runtime
from .acknowledgement import AcknowledgeMode
from .acknowledgement import session_mode as as_session_mode
from .completion import refuse_in_callback
from .jms_producer import JMSProducer

if TYPE_CHECKING:
    from .browser import QueueBrowser
    from .connection import Connection, ConnectionMetaData, ExceptionListenerLike
    from .consumer import ListenerLike, MessageConsumer
    from .factory import ConnectionFactory
    from .producer import MessageProducer
    from .session import Session

__all__ = ["JMSConsumer", "JMSContext", "JMSProducer", "create_context"]

T = TypeVar("T")


class _Shared:
    """The connection behind one or more contexts, closed with the last of them."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.users = 0
        self.lock = threading.Lock()
        self.autostart_done = False


def create_context(
    factory: ConnectionFactory,
    username: str | int | None = None,
    password: str | None = None,
    session_mode: int | None = None,
) -> JMSContext:
    """``create_context()``, ``create_context(mode)``, ``create_context(user, password[, mode])``."""
    if isinstance(username, int) and not isinstance(username, bool):
        session_mode, username = username, None
    with _runtime():
        conn = factory.create_connection(username, password)  # type: ignore[arg-type]
    return JMSContext(_Shared(conn), JMSContext.AUTO_ACKNOWLEDGE if session_mode is None else session_mode)


class JMSContext:
    """A connection and a session in one object (JMS 2.0 simplified API)."""

    SESSION_TRANSACTED = AcknowledgeMode.SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = AcknowledgeMode.AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = AcknowledgeMode.CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = AcknowledgeMode.DUPS_OK_ACKNOWLEDGE

    def __init__(self, shared: _Shared, session_mode: int) -> None:
        #: what the client's own objects use of this one (not JMS API)
        self.internal = ContextInternal(self)
        self._shared = shared
        mode = as_session_mode(session_mode)
        if mode is None:
            raise JMSRuntimeException(f"invalid session mode {session_mode!r}")
        self._mode = mode
        self._autostart = True
        self._closed = False
        self._producer: MessageProducer | None = None
        self._lock = threading.Lock()
        self._session_lock = threading.Lock()
        #: created on first use (Qpid JMS): until then set_client_id may still name the connection
        self._session_obj: Session | None = None
        with shared.lock:
            shared.users += 1

    @property
    def _session(self) -> Session:
        s = self._session_obj
        if s is not None:
            return s
        with self._session_lock:
            if self._session_obj is None:
                try:
                    with _runtime():
                        self._session_obj = self._shared.connection.create_session(self._mode)
                except BaseException:
                    if self._shared.connection.closed:
                        self._closed = True
                    raise
            return self._session_obj

    # -- contexts, connection-level ------------------------------------------------------------
    def create_context(self, session_mode: int) -> JMSContext:
        """Another context (own session) on this context's connection."""
        self._check_open()
        return JMSContext(self._shared, session_mode)

    def get_client_id(self) -> str | None:
        with _runtime():
            return self._shared.connection.get_client_id()

    def set_client_id(self, client_id: str) -> None:
        with _runtime():
            self._shared.connection.set_client_id(client_id)

    def get_meta_data(self) -> ConnectionMetaData:
        with _runtime():
            return self._shared.connection.get_meta_data()

    def set_exception_listener(self, listener: ExceptionListenerLike | None) -> None:
        with _runtime():
            self._shared.connection.set_exception_listener(listener)

    def get_exception_listener(self) -> ExceptionListenerLike | None:
        with _runtime():
            return self._shared.connection.get_exception_listener()

    def get_autostart(self) -> bool:
        return self._autostart

    def set_autostart(self, autostart: bool) -> None:
        self._autostart = bool(autostart)

    def get_session_mode(self) -> AcknowledgeMode:
        return self._mode

    def get_transacted(self) -> bool:
        return self._mode == self.SESSION_TRANSACTED

    def start(self) -> None:
        self._check_open()
        with _runtime():
            self._shared.connection.start()

    def stop(self) -> None:
        self._check_open()
        with _runtime():
            self._shared.connection.stop()

    def close(self) -> None:
        """Close the session; the connection too if no other context uses it. Idempotent.

        From a message listener (or completion listener) of this connection it raises
        ``IllegalStateRuntimeException`` and leaves the context open (JMS 2.0), so that a
        ``close()`` from another thread later really closes it."""
        if self._closed:
            return
        sh = self._shared
        with _runtime():
            sh.connection.internal.refuse_on_dispatcher("close")
            refuse_in_callback(sh.connection.internal.sessions, "close")
        self._closed = True
        with sh.lock:
            sh.users -= 1
            last = sh.users <= 0
        with _runtime():
            if last:
                # closing the connection closes the session too, and rolls back its
                # transaction without a separate discharge round trip
                sh.connection.close()
            elif self._session_obj is not None:
                self._session_obj.close()

    def __enter__(self) -> JMSContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- session-level ---------------------------------------------------------------------------
    def commit(self) -> None:
        self._check_open()
        with _runtime():
            self._session.commit()

    def rollback(self) -> None:
        self._check_open()
        with _runtime():
            self._session.rollback()

    def recover(self) -> None:
        self._check_open()
        with _runtime():
            self._session.recover()

    def acknowledge(self) -> None:
        """Acknowledge every message consumed by this context (CLIENT_ACKNOWLEDGE)."""
        self._check_open()
        with _runtime():
            self._session.acknowledge()

    def create_queue(self, name: str) -> Queue:
        return Queue(name)

    def create_topic(self, name: str) -> Topic:
        return Topic(name)

    def create_temporary_queue(self) -> TemporaryQueue:
        self._check_open()
        with _runtime():
            return self._session.create_temporary_queue()

    def create_temporary_topic(self) -> TemporaryTopic:
        self._check_open()
        with _runtime():
            return self._session.create_temporary_topic()

    def create_message(self) -> Message:
        self._check_open()
        with _runtime():
            return self._session.create_message()

    def create_text_message(self, text: str | None = None) -> TextMessage:
        self._check_open()
        with _runtime():
            return self._session.create_text_message(text)

    def create_bytes_message(self) -> BytesMessage:
        self._check_open()
        with _runtime():
            return self._session.create_bytes_message()

    def create_map_message(self) -> MapMessage:
        self._check_open()
        with _runtime():
            return self._session.create_map_message()

    def create_stream_message(self) -> StreamMessage:
        self._check_open()
        with _runtime():
            return self._session.create_stream_message()

    def create_object_message(self, obj: Any = None) -> ObjectMessage:
        self._check_open()
        with _runtime():
            return self._session.create_object_message(obj)

    # -- producers and consumers ---------------------------------------------------------------
    def create_producer(self) -> JMSProducer:
        self._check_open()
        return JMSProducer(self)

    def _message_producer(self) -> MessageProducer:
        with self._lock:
            if self._producer is None:
                with _runtime():
                    self._producer = self._session.create_producer(None)
            return self._producer

    def create_consumer(
        self, destination: Destination, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        return self._consumer(lambda s: s.create_consumer(destination, message_selector, no_local))

    def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        return self._consumer(lambda s: s.create_durable_consumer(topic, name, message_selector, no_local))

    def create_shared_consumer(
        self, topic: Topic, shared_subscription_name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        return self._consumer(lambda s: s.create_shared_consumer(topic, shared_subscription_name,
                                                                 message_selector))

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        return self._consumer(lambda s: s.create_shared_durable_consumer(topic, name, message_selector))

    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        self._check_open()
        with _runtime():
            return self._session.create_browser(queue, message_selector)

    def unsubscribe(self, name: str) -> None:
        self._check_open()
        with _runtime():
            self._session.unsubscribe(name)

    def _consumer(self, create: Callable[[Session], MessageConsumer]) -> JMSConsumer:
        self._check_open()
        with _runtime():
            cons = create(self._session)
            if self._autostart:
                self._shared.connection.start()
        return JMSConsumer(cons)

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateRuntimeException("the JMSContext is closed")


class JMSConsumer:
    """Receives for a ``JMSContext`` (JMS 2.0 section 11.4); iterable like ``MessageConsumer``."""

    def __init__(self, consumer: MessageConsumer) -> None:
        self._c = consumer

    @property
    def consumer(self) -> MessageConsumer:
        return self._c

    def get_message_selector(self) -> str | None:
        return self._c.get_message_selector()

    def get_message_listener(self) -> ListenerLike | None:
        return self._c.get_message_listener()

    def set_message_listener(self, listener: ListenerLike | None) -> None:
        with _runtime():
            self._c.set_message_listener(listener)

    def receive(self, timeout_ms: int | None = None) -> Message | None:
        with _runtime():
            return self._c.receive(timeout_ms)

    def receive_no_wait(self) -> Message | None:
        with _runtime():
            return self._c.receive_no_wait()

    def receive_body(self, cls: type[T], timeout_ms: int | None = None) -> T | None:
        """The next message's body as ``cls`` (str, bytes, dict, object...); None on timeout.

        A body that cannot be returned as ``cls`` raises ``MessageFormatRuntimeException``; under
        AUTO/DUPS_OK the message is then not acknowledged and the next receive returns it."""
        with _runtime():
            return self._c.receive_body(cls, timeout_ms)

    def receive_body_no_wait(self, cls: type[T]) -> T | None:
        with _runtime():
            body: T | None = self._c.internal.receive_body_within(cls, 0.0)
            return body

    def close(self) -> None:
        with _runtime():
            self._c.close()

    def __iter__(self) -> Iterator[Message]:
        with _runtime():
            yield from self._c

    def __enter__(self) -> JMSConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ContextInternal:
    """The context's side for its JMSProducer and the asyncio face: not JMS API. ``JMSContext.internal``."""

    __slots__ = ("_owner",)

    def __init__(self, owner: JMSContext) -> None:
        self._owner = owner

    @property
    def connection(self) -> Connection:
        return self._owner._shared.connection

    @property
    def session(self) -> Session:
        return self._owner._session

    def message_producer(self) -> MessageProducer:
        return self._owner._message_producer()

    def check_open(self) -> None:
        self._owner._check_open()
