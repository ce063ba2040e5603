"""Connection: client ID, start/stop, sessions, exception listener, metadata (JMS 4.3, 6.1).

The AMQP connection is opened on first use (``create_session``, ``start``, ``get_meta_data``),
not in the constructor, so that ``set_client_id`` can still name the container, as JMS
requires; a client ID given to the factory opens the connection at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .._version import __version__
from ..destination import Destination, TemporaryQueue, TemporaryTopic
from ..exceptions import IllegalStateException, InvalidClientIDException, JMSException
from ..provider.base import Capabilities, Provider
from ..provider.config import ConnectionConfig
from ..provider.metrics import ConnectionMetrics
from .acknowledgement import session_mode
from .completion import refuse_in_callback
from .connection_events import ConnectionEvents
from .session import Session
from .subscriptions import SubscriptionTracker

__all__ = ["Connection", "ConnectionMetaData", "ExceptionListener"]


class ExceptionListener(Protocol):
    def on_exception(self, exception: JMSException) -> None: ...


@dataclass(frozen=True, slots=True)
class ConnectionMetaData:
    """JMS 2.0 ``ConnectionMetaData``: the JMS version, this provider, the JMSX names supported."""

    provider_version: str
    jms_version: str = "2.0"
    jms_major_version: int = 2
    jms_minor_version: int = 0
    jms_provider_name: str = "amqp-jms"
    jmsx_property_names: tuple[str, ...] = ("JMSXUserID", "JMSXGroupID", "JMSXGroupSeq", "JMSXDeliveryCount")

    @classmethod
    def current(cls) -> ConnectionMetaData:
        return cls(provider_version=__version__)

    @property
    def provider_major_version(self) -> int:
        return int(self.provider_version.split(".")[0])

    @property
    def provider_minor_version(self) -> int:
        return int(self.provider_version.split(".")[1])

    def get_jms_version(self) -> str:
        return self.jms_version

    def get_jms_major_version(self) -> int:
        return self.jms_major_version

    def get_jms_minor_version(self) -> int:
        return self.jms_minor_version

    def get_jms_provider_name(self) -> str:
        return self.jms_provider_name

    def get_provider_version(self) -> str:
        return self.provider_version

    def get_provider_major_version(self) -> int:
        return self.provider_major_version

    def get_provider_minor_version(self) -> int:
        return self.provider_minor_version

    def get_jmsx_property_names(self) -> tuple[str, ...]:
        return self.jmsx_property_names


ExceptionListenerLike = ExceptionListener | Callable[[JMSException], None]


class Connection:
    """An active connection to an AMQP peer. Use it as a context manager to close it."""

    def __init__(
        self, config: ConnectionConfig, provider_factory: Callable[[ConnectionConfig], Provider]
    ) -> None:
        #: what the client's own objects use of this one (not JMS API)
        self.internal = ConnectionInternal(self)
        self._config = config
        self._provider_factory = provider_factory
        self._provider: Provider | None = None
        self._lock = threading.RLock()
        self._client_id: str | None = config.client_id
        self._client_id_locked = config.client_id is not None
        self._started = False
        self._started_cond = threading.Condition()
        self._closed = False
        self._failure: JMSException | None = None
        self._sessions: list[Session] = []
        self._session_index = 0
        self._exception_listener: ExceptionListenerLike | None = None
        self._events = ConnectionEvents()
        #: which subscriptions this connection has consumers on (JMS 6.3: one consumer on an
        #: unshared durable subscription per client ID)
        self._subscriptions = SubscriptionTracker()
        self._temporaries: set[Destination] = set()  # created here, not yet deleted
        self._temporaries_lock = threading.Lock()
        if config.client_id is not None:
            self._connect()

    # -- client id / metadata / listener -------------------------------------------------------
    def get_client_id(self) -> str | None:
        self._check_open()
        return self._client_id

    def set_client_id(self, client_id: str) -> None:
        self._check_open()
        if not isinstance(client_id, str) or not client_id:
            raise InvalidClientIDException(f"invalid client ID {client_id!r}: must be a non-empty str")
        with self._lock:
            if self._client_id_locked:
                raise IllegalStateException(
                    "set_client_id must be called before the connection is used (and only once)"
                )
            self._client_id = client_id
            self._client_id_locked = True
            self._config = self._config.replace(client_id=client_id)
        self._connect()

    @property
    def client_id(self) -> str | None:
        return self._client_id

    def get_meta_data(self) -> ConnectionMetaData:
        self._check_open()
        return ConnectionMetaData.current()

    def metrics(self) -> ConnectionMetrics:
        """A frozen snapshot of this connection's counters: messages and bytes sent and received,
        outcomes, redeliveries, failures (``amqp_jms.provider.metrics``); readable after close."""
        p = self._provider
        return p.metrics() if p is not None else ConnectionMetrics()

    def get_exception_listener(self) -> ExceptionListenerLike | None:
        self._check_open()
        return self._exception_listener

    def set_exception_listener(self, listener: ExceptionListenerLike | None) -> None:
        """Called (on a thread of its own) when the connection is lost for good: with failover,
        only once reconnecting gave up (Qpid JMS)."""
        self._check_open()
        self._exception_listener = listener

    def add_connection_listener(self, listener: Any) -> None:
        """Tell ``listener`` what happens to the connection: ``on_connection_established(uri)``,
        ``on_connection_interrupted(uri)``, ``on_connection_restored(uri)``,
        ``on_connection_failure(exc)`` (see ``amqp_jms.client.connection_events``; subclass
        ``ConnectionListener`` or give an object with some of them). Called in order on a
        thread of the connection's, never the I/O thread. Add it before the connection is first
        used to hear ``on_connection_established``."""
        self._events.add(listener)

    def remove_connection_listener(self, listener: Any) -> None:
        self._events.remove(listener)

    # -- sessions ------------------------------------------------------------------------------
    def create_session(self, transacted: bool | int = False, acknowledge_mode: int | None = None) -> Session:
        """``create_session(transacted, acknowledge_mode)`` or JMS 2.0 ``create_session(session_mode)``."""
        self._check_open()
        if isinstance(transacted, bool):
            mode = Session.SESSION_TRANSACTED if transacted else (
                Session.AUTO_ACKNOWLEDGE if acknowledge_mode is None else acknowledge_mode)
        elif isinstance(transacted, int) and acknowledge_mode is None:
            mode = transacted
        else:
            raise TypeError(
                "create_session(transacted: bool, acknowledge_mode: int) or create_session(mode: int)"
            )
        checked = session_mode(mode)
        if checked is None:
            raise JMSException(
                f"invalid session mode {mode!r}: expected one of {[int(m) for m in Session.MODES]}")
        mode = checked
        prov = self._connect()
        psession = self._wait_provider(
            prov.create_session(mode == Session.SESSION_TRANSACTED), self._request_timeout(), "create_session"
        )
        with self._lock:
            self._session_index += 1
            s = Session(self, psession, mode, self._session_index)
            self._sessions.append(s)
        if self._started:
            s.internal.set_running(True)
        return s

    # -- application server facilities (JMS 2.0 8.2; client/connection_consumer.py) ------------
    def create_connection_consumer(self, destination: Destination, message_selector: str | None,
                                   session_pool: Any, max_messages: int) -> Any:
        """A ``ConnectionConsumer`` loading up to ``max_messages`` at a time into the pool's sessions."""
        return self._connection_consumer(session_pool, max_messages,
                                         lambda s: s.create_consumer(destination, message_selector))

    def create_shared_connection_consumer(self, topic: Any, subscription_name: str,
                                          message_selector: str | None, session_pool: Any,
                                          max_messages: int) -> Any:
        return self._connection_consumer(session_pool, max_messages, lambda s: s.create_shared_consumer(
            topic, subscription_name, message_selector))

    def create_durable_connection_consumer(self, topic: Any, subscription_name: str,
                                           message_selector: str | None, session_pool: Any,
                                           max_messages: int) -> Any:
        return self._connection_consumer(session_pool, max_messages, lambda s: s.create_durable_consumer(
            topic, subscription_name, message_selector))

    def create_shared_durable_connection_consumer(self, topic: Any, subscription_name: str,
                                                  message_selector: str | None, session_pool: Any,
                                                  max_messages: int) -> Any:
        return self._connection_consumer(session_pool, max_messages,
                                         lambda s: s.create_shared_durable_consumer(
                                             topic, subscription_name, message_selector))

    def _connection_consumer(self, pool: Any, max_messages: int, subscribe: Callable[[Session], Any]) -> Any:
        from .connection_consumer import ConnectionConsumer

        self._check_open()
        return ConnectionConsumer(self, pool, max_messages, subscribe)

    # -- start / stop / close ------------------------------------------------------------------
    def start(self) -> None:
        self._check_open()
        self._connect()
        with self._started_cond:
            self._started = True
            self._started_cond.notify_all()
        for s in list(self._sessions):
            s.internal.set_running(True)

    def stop(self) -> None:
        """Pause delivery; returns once running listeners have finished (JMS 4.3.4)."""
        self._check_open()
        self._refuse_on_dispatcher("stop")
        with self._started_cond:
            self._started = False
        for s in list(self._sessions):
            s.internal.set_running(False)
        for s in list(self._sessions):
            d = s.internal.dispatcher
            if d is not None:
                d.wait_idle()
        for s in list(self._sessions):
            s.internal.after_stop()

    def close(self) -> None:
        """Close every session, then the AMQP connection; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._refuse_on_dispatcher("close")
            refuse_in_callback(self._sessions, "close")  # JMS 4.6.2: not from a CompletionListener
            self._closed = True
        with self._started_cond:
            self._started = False
            self._started_cond.notify_all()
        try:
            for s in list(self._sessions):
                try:
                    s.close()
                except JMSException:
                    pass
            prov = self._provider
            if prov is not None:
                try:
                    if prov.failure is None:
                        self._wait_provider(prov.close(), self._close_timeout(), "close")
                except JMSException:
                    pass
                finally:
                    prov.shutdown()
        finally:
            self._sessions.clear()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- provider callbacks (ProviderListener; I/O thread) ---------------------------------------
    def _on_connection_established(self, uri: str) -> None:
        self._events.post("on_connection_established", uri)

    def _on_connection_interrupted(self, uri: str) -> None:
        """Unsettled prefetched messages are void (their link is gone): the peer redelivers them,
        flagged, to whichever consumer then asks (Qpid JMS ``JmsMessageConsumer.onConnectionInterrupted``).
        A presettled consumer's are kept (``LocalQueue.clear``): nobody would redeliver them."""
        for s in list(self._sessions):
            for c in list(s.internal.consumers):
                c.internal.local_queue.clear()
        self._events.post("on_connection_interrupted", uri)

    def _on_connection_restored(self, uri: str) -> None:
        self._events.post("on_connection_restored", uri)

    def _on_connection_failure(self, exc: JMSException) -> None:
        self._failure = exc
        for s in list(self._sessions):
            s.internal.connection_failed(exc)
        self._events.post("on_connection_failure", exc)
        listener = self._exception_listener
        if listener is not None:
            call: Any = getattr(listener, "on_exception", listener)
            t = threading.Thread(target=call, args=(exc,), name="amqp-jms-exception-listener", daemon=True)
            t.start()

    def _on_async_exception(self, exc: JMSException) -> None:
        """An error nobody waits for (a send the application did not wait for failed, a
        listener's consumer closed by the peer): its ExceptionListener hears of it (Qpid JMS),
        on a thread of its own; the connection stays usable."""
        listener = self._exception_listener
        if listener is None:
            from .._logs import CLIENT, with_ids

            log = with_ids(CLIENT, connection=self.connection_id())
            log.warning("no ExceptionListener to tell: %s", exc)
            return
        call: Any = getattr(listener, "on_exception", listener)
        threading.Thread(target=call, args=(exc,), name="amqp-jms-exception-listener", daemon=True).start()

    # -- internals -----------------------------------------------------------------------------
    def _connect(self) -> Provider:
        with self._lock:
            if self._provider is not None:
                return self._provider
            self._client_id_locked = True
            prov = self._provider_factory(self._config)
            try:
                prov.wait(prov.connect(self.internal), None, "connect")
            except BaseException:
                prov.shutdown()
                raise
            self._provider = prov
            if self._client_id is None and self._config.client_id is None:
                self._client_id = None
            return prov

    # -- the connection's side for its own objects: ConnectionInternal (below) exposes these ----

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("the connection is closed")
        failure = self._failure
        if failure is not None:  # the connection died: every further use says why
            raise type(failure)(failure.reason, failure.error_code, failure)

    def _refuse_on_dispatcher(self, what: str) -> None:
        for s in list(self._sessions):
            d = s.internal.dispatcher
            if d is not None and d.on_own_thread():
                raise IllegalStateException(
                    f"a message listener must not call {what}() on its own connection"
                )

    def _wait_started(self, timeout: float) -> None:
        with self._started_cond:
            if not self._started:
                self._started_cond.wait(timeout)

    def _opened_provider(self) -> Provider:
        """The provider of an opened connection (every caller opened it first)."""
        p = self._provider
        if p is None:
            raise IllegalStateException("the connection is not open")
        return p

    def _wait_provider(self, fut: Any, timeout: float | None, what: str) -> Any:
        return self._opened_provider().wait(fut, timeout, what)

    def _provider_alive(self) -> bool:
        p = self._provider
        return p is not None and p.failure is None

    def _request_timeout(self) -> float | None:
        return self._config.seconds(self._config.request_timeout_ms)

    def _close_timeout(self) -> float | None:
        return self._config.seconds(self._config.close_timeout_ms)

    def _sent_user_id(self) -> str | None:
        """A sent message's JMSXUserID, as Qpid JMS decides it: the connection's user name with
        ``jms.populateJMSXUserID=true``, else none at all (an application's own value is dropped,
        so a message cannot claim to come from another user)."""
        return self._config.username if self._config.populate_jmsx_user_id else None

    def _capabilities(self) -> Capabilities:
        """What the peer connected now supports (asked each time: a failover may change it)."""
        return self._opened_provider().capabilities

    def connection_id(self) -> str:
        """The id that names this connection in the client's logs, frame traces and metrics
        (``[connection=ID:...]``): to find one connection's lines (not JMS API)."""
        return self._opened_provider().connection_id

    # -- temporary destinations (the connection owns them: JMS 6.2.2) --------------------------
    def _own_temporary(self, dest: TemporaryQueue | TemporaryTopic) -> None:
        dest.bind_deleter(self._delete_temporary)
        with self._temporaries_lock:
            self._temporaries.add(dest)

    def _owns_temporary(self, dest: Destination) -> bool:
        with self._temporaries_lock:
            return dest in self._temporaries

    def _delete_temporary(self, dest: Destination) -> None:
        """``TemporaryQueue.delete()``: refused while one of this connection's consumers uses it."""
        self._check_open()
        for s in list(self._sessions):
            for c in list(s.internal.consumers):
                if not c.closed and c.destination == dest:
                    raise IllegalStateException(f"cannot delete {dest}: it has an active consumer")
        if self._provider_alive():
            self._wait_provider(self._opened_provider().delete_temporary(dest.name), self._request_timeout(),
                                "delete temporary destination")
        with self._temporaries_lock:
            self._temporaries.discard(dest)

    def _forget_session(self, s: Session) -> None:
        with self._lock:
            if s in self._sessions:
                self._sessions.remove(s)


class ConnectionInternal:
    """The connection's side for its sessions, consumers, producers, the asyncio face and its provider (the
    provider's ``ProviderListener``): not JMS API. ``Connection.internal``."""

    __slots__ = ("_owner",)

    def __init__(self, owner: Connection) -> None:
        self._owner = owner

    def on_connection_established(self, uri: str) -> None:
        self._owner._on_connection_established(uri)

    def on_connection_interrupted(self, uri: str) -> None:
        """Unsettled prefetched messages are void (their link is gone): the peer redelivers them,
        flagged, to whichever consumer then asks (Qpid JMS ``JmsMessageConsumer.onConnectionInterrupted``).
        A presettled consumer's are kept (``LocalQueue.clear``): nobody would redeliver them."""
        self._owner._on_connection_interrupted(uri)

    def on_connection_restored(self, uri: str) -> None:
        self._owner._on_connection_restored(uri)

    def on_connection_failure(self, exc: JMSException) -> None:
        self._owner._on_connection_failure(exc)

    def on_async_exception(self, exc: JMSException) -> None:
        """An error nobody waits for (a send the application did not wait for failed, a
        listener's consumer closed by the peer): its ExceptionListener hears of it (Qpid JMS),
        on a thread of its own; the connection stays usable."""
        self._owner._on_async_exception(exc)

    @property
    def config(self) -> ConnectionConfig:
        """The options this connection was made with (``jms.*`` URL options)."""
        return self._owner._config

    @property
    def started(self) -> bool:
        return self._owner._started

    @property
    def sessions(self) -> list[Session]:
        """The open sessions (the list itself: callers copy it to iterate)."""
        return self._owner._sessions

    @property
    def subscriptions(self) -> SubscriptionTracker:
        return self._owner._subscriptions

    def check_open(self) -> None:
        self._owner._check_open()

    def refuse_on_dispatcher(self, what: str) -> None:
        self._owner._refuse_on_dispatcher(what)

    def wait_started(self, timeout: float) -> None:
        self._owner._wait_started(timeout)

    def opened_provider(self) -> Provider:
        """The provider of an opened connection (every caller opened it first)."""
        return self._owner._opened_provider()

    def wait_provider(self, fut: Any, timeout: float | None, what: str) -> Any:
        return self._owner._wait_provider(fut, timeout, what)

    def provider_alive(self) -> bool:
        return self._owner._provider_alive()

    def request_timeout(self) -> float | None:
        return self._owner._request_timeout()

    def close_timeout(self) -> float | None:
        return self._owner._close_timeout()

    def sent_user_id(self) -> str | None:
        """A sent message's JMSXUserID, as Qpid JMS decides it: the connection's user name with
        ``jms.populateJMSXUserID=true``, else none at all (an application's own value is dropped,
        so a message cannot claim to come from another user)."""
        return self._owner._sent_user_id()

    def capabilities(self) -> Capabilities:
        """What the peer connected now supports (asked each time: a failover may change it)."""
        return self._owner._capabilities()

    def own_temporary(self, dest: TemporaryQueue | TemporaryTopic) -> None:
        self._owner._own_temporary(dest)

    def owns_temporary(self, dest: Destination) -> bool:
        return self._owner._owns_temporary(dest)

    def forget_session(self, s: Session) -> None:
        self._owner._forget_session(s)
