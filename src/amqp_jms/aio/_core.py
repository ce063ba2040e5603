"""The asyncio face of the standard API: the factory, connections and sessions.

One core, two faces: each async object wraps the blocking object of ``amqp_jms.client`` and the
same provider, and only waits differently. Operations that are rare and already blocking in the
core (opening a connection, creating a session or link, commit, close) run in a worker thread
(``in_thread``) so the event loop never blocks; those that do no I/O (message factories,
getters) are plain calls. Listeners (exception, connection, message) run on the event loop
they were set from. No JMS rule is written here; ``test_aio_parity.py`` holds every public
method of the blocking classes to a twin here.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..client.connection import Connection, ConnectionMetaData
from ..client.factory import ConnectionFactory
from ..client.session import Session
from ..destination import Destination, Queue, Topic
from ._base import Closing, SessionLike, in_thread
from ._browser import AsyncQueueBrowser
from ._consumer import AsyncConsumer
from ._listeners import ListenerOnLoop, OnLoop
from ._producer import AsyncProducer

if TYPE_CHECKING:
    from ..client.connection_consumer import ConnectionConsumer
    from ..provider.metrics import ConnectionMetrics
    from ._context import AsyncJMSContext

__all__ = ["AsyncConnection", "AsyncConnectionFactory", "AsyncSession"]


class AsyncConnectionFactory:
    """``AsyncConnectionFactory(url, **options)``: the options of ``ConnectionFactory``."""

    def __init__(self, url: str = "amqp://localhost:5672", **options: Any) -> None:
        self.factory = ConnectionFactory(url, **options)

    async def create_connection(
        self, username: str | None = None, password: str | None = None
    ) -> AsyncConnection:
        return AsyncConnection(await in_thread(self.factory.create_connection, username, password))

    async def create_context(
        self, username: str | int | None = None, password: str | None = None, session_mode: int | None = None
    ) -> AsyncJMSContext:
        """``create_context()``, ``create_context(mode)``, ``create_context(user, password[, mode])``."""
        from ._context import AsyncJMSContext

        return AsyncJMSContext(await in_thread(self.factory.create_context, username, password, session_mode))


class AsyncConnection(Closing):
    """``async with await factory.create_connection() as conn:``."""

    sync: Connection

    def __init__(self, connection: Connection) -> None:
        self.sync = connection
        self._listeners: list[OnLoop] = []
        self._exception_listener: ListenerOnLoop | None = None

    # -- client id, metadata, listeners (no I/O, but set_client_id opens the connection) -----
    def get_client_id(self) -> str | None:
        return self.sync.get_client_id()

    async def set_client_id(self, client_id: str) -> None:
        await in_thread(self.sync.set_client_id, client_id)

    @property
    def client_id(self) -> str | None:
        return self.sync.client_id

    @property
    def closed(self) -> bool:
        return self.sync.closed

    def get_meta_data(self) -> ConnectionMetaData:
        return self.sync.get_meta_data()

    def connection_id(self) -> str:
        """As ``Connection.connection_id``: the id in the client's logs and metrics."""
        return self.sync.connection_id()

    def metrics(self) -> ConnectionMetrics:
        """The connection's counters (``Connection.metrics``): a snapshot, no I/O, no await."""
        return self.sync.metrics()

    def get_exception_listener(self) -> Any:
        self.sync.get_exception_listener()  # refuses on a closed connection, as the blocking face
        adapter = self._exception_listener
        return None if adapter is None else adapter.listener

    def set_exception_listener(self, listener: Any) -> None:
        """As ``Connection.set_exception_listener``; ``on_exception`` (or the callable, plain or
        ``async def``) runs on the running event loop."""
        adapter = None if listener is None else ListenerOnLoop(listener, "on_exception",
                                                               asyncio.get_running_loop())
        self.sync.set_exception_listener(adapter)
        self._exception_listener = adapter

    def add_connection_listener(self, listener: Any) -> None:
        """As ``Connection.add_connection_listener``; the listener's methods (plain or
        ``async def``) run on the running event loop."""
        adapter = OnLoop(listener, asyncio.get_running_loop())
        self._listeners.append(adapter)
        self.sync.add_connection_listener(adapter)

    def remove_connection_listener(self, listener: Any) -> None:
        for adapter in [a for a in self._listeners if a.listener is listener]:
            self._listeners.remove(adapter)
            self.sync.remove_connection_listener(adapter)

    # -- sessions, start / stop ----------------------------------------------------------------
    async def create_session(self, transacted: bool | int = False, acknowledge_mode: int | None = None
                             ) -> AsyncSession:
        """``create_session(transacted, acknowledge_mode)`` or ``create_session(session_mode)``."""
        return AsyncSession(await in_thread(self.sync.create_session, transacted, acknowledge_mode))

    async def start(self) -> None:
        await in_thread(self.sync.start)

    async def create_connection_consumer(self, destination: Destination, message_selector: str | None,
                                         session_pool: Any, max_messages: int) -> ConnectionConsumer:
        """``Connection.create_connection_consumer`` (and its shared and durable twins below),
        typically with an ``AsyncServerSessionPool``; the connection consumer is the blocking
        face's (it runs on a thread of its own)."""
        return await in_thread(self.sync.create_connection_consumer, destination, message_selector,
                               session_pool, max_messages)

    async def create_shared_connection_consumer(self, topic: Topic, subscription_name: str,
                                                message_selector: str | None, session_pool: Any,
                                                max_messages: int) -> ConnectionConsumer:
        return await in_thread(self.sync.create_shared_connection_consumer, topic, subscription_name,
                               message_selector, session_pool, max_messages)

    async def create_durable_connection_consumer(self, topic: Topic, subscription_name: str,
                                                 message_selector: str | None, session_pool: Any,
                                                 max_messages: int) -> ConnectionConsumer:
        return await in_thread(self.sync.create_durable_connection_consumer, topic, subscription_name,
                               message_selector, session_pool, max_messages)

    async def create_shared_durable_connection_consumer(self, topic: Topic, subscription_name: str,
                                                        message_selector: str | None, session_pool: Any,
                                                        max_messages: int) -> ConnectionConsumer:
        return await in_thread(self.sync.create_shared_durable_connection_consumer, topic, subscription_name,
                               message_selector, session_pool, max_messages)

    async def stop(self) -> None:
        await in_thread(self.sync.stop)


class AsyncSession(SessionLike):
    """A session; message and destination factories stay plain calls (they do no I/O)."""

    sync: Session

    SESSION_TRANSACTED = Session.SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = Session.AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = Session.CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = Session.DUPS_OK_ACKNOWLEDGE
    NO_ACKNOWLEDGE = Session.NO_ACKNOWLEDGE
    INDIVIDUAL_ACKNOWLEDGE = Session.INDIVIDUAL_ACKNOWLEDGE
    MODES = Session.MODES

    def __init__(self, session: Session) -> None:
        self.sync = session

    # -- properties ----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self.sync.closed

    def get_transacted(self) -> bool:
        return self.sync.get_transacted()

    @property
    def transacted(self) -> bool:
        return self.sync.transacted

    def get_acknowledge_mode(self) -> int:
        return self.sync.get_acknowledge_mode()

    @property
    def acknowledge_mode(self) -> int:
        return self.sync.acknowledge_mode

    # -- producers, consumers, browsers --------------------------------------------------------
    async def create_producer(self, destination: Destination | None) -> AsyncProducer:
        return AsyncProducer(await in_thread(self.sync.create_producer, destination))

    async def create_consumer(self, destination: Destination, message_selector: str | None = None,
                              no_local: bool = False) -> AsyncConsumer:
        return AsyncConsumer(await in_thread(self.sync.create_consumer, destination, message_selector,
                                             no_local))

    async def create_durable_subscriber(self, topic: Topic, name: str, message_selector: str | None = None,
                                        no_local: bool = False) -> AsyncConsumer:
        return AsyncConsumer(await in_thread(self.sync.create_durable_subscriber, topic, name,
                                             message_selector, no_local))

    async def create_durable_consumer(self, topic: Topic, name: str, message_selector: str | None = None,
                                      no_local: bool = False) -> AsyncConsumer:
        return AsyncConsumer(await in_thread(self.sync.create_durable_consumer, topic, name,
                                             message_selector, no_local))

    async def create_shared_consumer(self, topic: Topic, shared_subscription_name: str,
                                     message_selector: str | None = None) -> AsyncConsumer:
        return AsyncConsumer(await in_thread(self.sync.create_shared_consumer, topic,
                                             shared_subscription_name, message_selector))

    async def create_shared_durable_consumer(self, topic: Topic, name: str,
                                             message_selector: str | None = None) -> AsyncConsumer:
        return AsyncConsumer(await in_thread(self.sync.create_shared_durable_consumer, topic, name,
                                             message_selector))

    async def create_browser(self, queue: Queue, message_selector: str | None = None) -> AsyncQueueBrowser:
        return AsyncQueueBrowser(await in_thread(self.sync.create_browser, queue, message_selector))
