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

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from ..destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from ..exceptions import (
    IllegalStateRuntimeException,
    JMSException,
    JMSRuntimeException,
    MessageFormatRuntimeException,
    to_runtime,
)
from ..message import DeliveryMode, Message

if TYPE_CHECKING:
    from .browser import QueueBrowser
    from .connection import Connection, ConnectionMetaData
    from .consumer import MessageConsumer
    from .factory import ConnectionFactory
    from .producer import MessageProducer
    from .session import Session

__all__ = ["JMSConsumer", "JMSContext", "JMSProducer", "create_context"]

T = TypeVar("T")


@contextlib.contextmanager
def _runtime() -> Iterator[None]:
    """Checked JMS exceptions leave the simplified API as their unchecked twins."""
    try:
        yield
    except JMSException as e:
        raise to_runtime(e) from e


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

    SESSION_TRANSACTED = 0
    AUTO_ACKNOWLEDGE = 1
    CLIENT_ACKNOWLEDGE = 2
    DUPS_OK_ACKNOWLEDGE = 3

    def __init__(self, shared: _Shared, session_mode: int) -> None:
        self._shared = shared
        self._mode = session_mode
        self._autostart = True
        self._closed = False
        self._producer: MessageProducer | None = None
        self._lock = threading.Lock()
        with shared.lock:
            shared.users += 1
        try:
            with _runtime():
                self._session: Session = shared.connection.create_session(session_mode)
        except BaseException:
            self._release_connection()
            raise

    # -- contexts, connection-level ------------------------------------------------------------
    def create_context(self, session_mode: int) -> JMSContext:
        """Another context (own session) on this context's connection."""
        self._check_open()
        return JMSContext(self._shared, session_mode)

    @property
    def connection(self) -> Connection:
        return self._shared.connection

    @property
    def session(self) -> Session:
        return self._session

    def get_client_id(self) -> str | None:
        with _runtime():
            return self._shared.connection.get_client_id()

    def set_client_id(self, client_id: str) -> None:
        with _runtime():
            self._shared.connection.set_client_id(client_id)

    def get_meta_data(self) -> ConnectionMetaData:
        with _runtime():
            return self._shared.connection.get_meta_data()

    def set_exception_listener(self, listener: Any) -> None:
        with _runtime():
            self._shared.connection.set_exception_listener(listener)

    def get_exception_listener(self) -> Any:
        with _runtime():
            return self._shared.connection.get_exception_listener()

    def get_autostart(self) -> bool:
        return self._autostart

    def set_autostart(self, autostart: bool) -> None:
        self._autostart = bool(autostart)

    def get_session_mode(self) -> int:
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
        """Close the session; the connection too if no other context uses it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        sh = self._shared
        with sh.lock:
            sh.users -= 1
            last = sh.users <= 0
        with _runtime():
            if last:
                # closing the connection closes the session too, and rolls back its
                # transaction without a separate discharge round trip
                sh.connection.close()
            else:
                self._session.close()

    def _release_connection(self) -> None:
        sh = self._shared
        with sh.lock:
            sh.users -= 1
            last = sh.users <= 0
        if last:
            with _runtime():
                sh.connection.close()

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
        return self._session_call("create_message")

    def create_text_message(self, text: str | None = None) -> Any:
        return self._session_call("create_text_message", text)

    def create_bytes_message(self) -> Any:
        return self._session_call("create_bytes_message")

    def create_map_message(self) -> Any:
        return self._session_call("create_map_message")

    def create_stream_message(self) -> Any:
        return self._session_call("create_stream_message")

    def create_object_message(self, obj: Any = None) -> Any:
        return self._session_call("create_object_message", obj)

    def _session_call(self, name: str, *args: Any) -> Any:
        self._check_open()
        with _runtime():
            return getattr(self._session, name)(*args)

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
        return self._consumer("create_consumer", destination, message_selector, no_local)

    def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> JMSConsumer:
        return self._consumer("create_durable_consumer", topic, name, message_selector, no_local)

    def create_shared_consumer(
        self, topic: Topic, shared_subscription_name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        return self._consumer("create_shared_consumer", topic, shared_subscription_name, message_selector)

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> JMSConsumer:
        return self._consumer("create_shared_durable_consumer", topic, name, message_selector)

    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        self._check_open()
        with _runtime():
            return self._session.create_browser(queue, message_selector)

    def unsubscribe(self, name: str) -> None:
        self._check_open()
        with _runtime():
            self._session.unsubscribe(name)

    def _consumer(self, method: str, *args: Any) -> JMSConsumer:
        self._check_open()
        with _runtime():
            cons = getattr(self._session, method)(*args)
            if self._autostart:
                self._shared.connection.start()
        return JMSConsumer(cons)

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateRuntimeException("the JMSContext is closed")


class JMSProducer:
    """Fluent message sender of a ``JMSContext`` (JMS 2.0 section 11.3)."""

    def __init__(self, context: JMSContext) -> None:
        self._ctx = context
        self._delivery_mode: int = DeliveryMode.PERSISTENT
        self._priority = Message.DEFAULT_PRIORITY
        self._ttl = 0
        self._delay = 0
        self._disable_id = False
        self._disable_ts = False
        self._listener: Any = None
        self._props: dict[str, Any] = {}
        self._correlation_id: str | None = None
        self._type: str | None = None
        self._reply_to: Destination | None = None

    # -- sending -------------------------------------------------------------------------------
    def send(self, destination: Destination, body: Any) -> JMSProducer:
        """Send a ``Message`` or a body (str, bytes, dict, other object) to ``destination``."""
        p, message = self._prepare(destination, body)
        with _runtime():
            kw: dict[str, Any] = {}
            if self._listener is not None:
                kw["completion_listener"] = self._listener
            p.send(destination, message, self._delivery_mode, self._priority, self._ttl, **kw)
        return self

    def _prepare(self, destination: Destination, body: Any) -> tuple[MessageProducer, Message]:
        """The context's producer, configured, and the message with this producer's values."""
        ctx = self._ctx
        ctx._check_open()
        if destination is None:
            from ..exceptions import InvalidDestinationRuntimeException

            raise InvalidDestinationRuntimeException("send needs a destination, got None")
        message = body if isinstance(body, Message) else self._wrap(body)
        with _runtime():
            for name, value in self._props.items():
                message.set_object_property(name, value)
            if self._correlation_id is not None:
                message.set_jms_correlation_id(self._correlation_id)
            if self._type is not None:
                message.set_jms_type(self._type)
            if self._reply_to is not None:
                message.set_jms_reply_to(self._reply_to)
            p = ctx._message_producer()
            p.set_delivery_delay(self._delay)
            p.set_disable_message_id(self._disable_id)
            p.set_disable_message_timestamp(self._disable_ts)
        return p, message

    def _wrap(self, body: Any) -> Message:
        s = self._ctx._session
        with _runtime():
            if body is None:
                return s.create_message()
            if isinstance(body, str):
                return s.create_text_message(body)
            if isinstance(body, bytes | bytearray | memoryview):
                m = s.create_bytes_message()
                m.write_bytes(bytes(body))
                return m
            if isinstance(body, dict):
                mm = s.create_map_message()
                for k, v in body.items():
                    if not isinstance(k, str):
                        raise MessageFormatRuntimeException(f"a map body needs str keys, got {k!r}")
                    mm.set_object(k, v)
                return mm
            return s.create_object_message(body)

    # -- fluent settings -----------------------------------------------------------------------
    def set_delivery_mode(self, mode: int) -> JMSProducer:
        if mode not in (DeliveryMode.PERSISTENT, DeliveryMode.NON_PERSISTENT):
            raise JMSRuntimeException(f"invalid delivery mode {mode!r}")
        self._delivery_mode = mode
        return self

    def get_delivery_mode(self) -> int:
        return self._delivery_mode

    def set_priority(self, priority: int) -> JMSProducer:
        if type(priority) is bool or not isinstance(priority, int) or not 0 <= priority <= 9:
            raise JMSRuntimeException(f"invalid priority {priority!r}: must be an int from 0 to 9")
        self._priority = priority
        return self

    def get_priority(self) -> int:
        return self._priority

    def set_time_to_live(self, ttl_ms: int) -> JMSProducer:
        self._ttl = int(ttl_ms)
        return self

    def get_time_to_live(self) -> int:
        return self._ttl

    def set_delivery_delay(self, delay_ms: int) -> JMSProducer:
        self._delay = int(delay_ms)
        return self

    def get_delivery_delay(self) -> int:
        return self._delay

    def set_disable_message_id(self, value: bool) -> JMSProducer:
        self._disable_id = bool(value)
        return self

    def get_disable_message_id(self) -> bool:
        return self._disable_id

    def set_disable_message_timestamp(self, value: bool) -> JMSProducer:
        self._disable_ts = bool(value)
        return self

    def get_disable_message_timestamp(self) -> bool:
        return self._disable_ts

    def set_async(self, completion_listener: Any) -> JMSProducer:
        """A CompletionListener makes later sends asynchronous; None makes them synchronous."""
        self._listener = completion_listener
        return self

    def get_async(self) -> Any:
        return self._listener

    def set_property(self, name: str, value: Any) -> JMSProducer:
        """A message property for every later send (validated now, as the message would)."""
        probe = Message()
        probe._validate_names = self._ctx._session._validate_names  # jms.validatePropertyNames
        with _runtime():
            probe.set_object_property(name, value)
        self._props[name] = value
        return self

    def clear_properties(self) -> JMSProducer:
        self._props.clear()
        return self

    def property_exists(self, name: str) -> bool:
        return name in self._props

    def get_property_names(self) -> list[str]:
        return list(self._props)

    def get_object_property(self, name: str) -> Any:
        return self._props.get(name)

    def set_jms_correlation_id(self, correlation_id: str | None) -> JMSProducer:
        self._correlation_id = correlation_id
        return self

    def get_jms_correlation_id(self) -> str | None:
        return self._correlation_id

    def set_jms_type(self, jms_type: str | None) -> JMSProducer:
        self._type = jms_type
        return self

    def get_jms_type(self) -> str | None:
        return self._type

    def set_jms_reply_to(self, destination: Destination | None) -> JMSProducer:
        self._reply_to = destination
        return self

    def get_jms_reply_to(self) -> Destination | None:
        return self._reply_to


class JMSConsumer:
    """Receives for a ``JMSContext`` (JMS 2.0 section 11.4); iterable like ``MessageConsumer``."""

    def __init__(self, consumer: MessageConsumer) -> None:
        self._c = consumer

    @property
    def consumer(self) -> MessageConsumer:
        return self._c

    def get_message_selector(self) -> str | None:
        return self._c.get_message_selector()

    def get_message_listener(self) -> Any:
        return self._c.get_message_listener()

    def set_message_listener(self, listener: Any) -> None:
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

        A body that cannot be returned as ``cls`` raises ``MessageFormatRuntimeException``."""
        with _runtime():
            m = self._c.receive(timeout_ms)
            return None if m is None else m.get_body(cls)

    def receive_body_no_wait(self, cls: type[T]) -> T | None:
        with _runtime():
            m = self._c.receive_no_wait()
            return None if m is None else m.get_body(cls)

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
