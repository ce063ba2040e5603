"""JMS application server facilities (JMS 2.0 chapter 8.2): ``ServerSession``,
``ServerSessionPool``, the session's ``set_message_listener`` / ``run``, and a ready pool.

A ``ConnectionConsumer`` (``client/connection_consumer.py``) receives on a consumer of its own,
takes a ``ServerSession`` from the pool, loads its ``Session`` with one or more messages
(``load``, the provider's private mechanism of 8.2.5) and starts it; the server session's thread
calls ``Session.run()``, which hands each loaded message to the session's ``MessageListener``.

The messages stay the connection consumer's deliveries: they are settled on its link, by the
rules of the *server session's* acknowledgement mode (``finish_loaded``):

* AUTO_ACKNOWLEDGE / DUPS_OK_ACKNOWLEDGE (and NO_ACKNOWLEDGE): accepted (or the
  ``JMS_AMQP_ACK_TYPE`` the listener chose) when the listener returns; a listener that raises
  gives the message back ``modified{delivery-failed}``, so the peer offers it again, counted
  (JMS 8.7: it is redelivered);
* CLIENT_ACKNOWLEDGE / INDIVIDUAL_ACKNOWLEDGE: ``message.acknowledge()`` in the listener settles
  that message (each message settles on its own link individually);
* a transacted server session is refused (``IllegalStateException`` at load): the deliveries
  belong to the connection consumer's session, whose work a transaction of another session
  cannot include (JTA and XA sessions are not provided; the listener container,
  ``amqp_jms.container``, gives a transaction per message or per batch instead).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

from .._logs import CLIENT
from ..exceptions import IllegalStateException, JMSException
from ..provider.base import MODIFIED_FAILED
from . import acknowledgement as ack

if TYPE_CHECKING:
    from ..message import Message
    from .connection import Connection
    from .session import Session

__all__ = ["ServerSession", "ServerSessionPool", "ServerSessionSupport", "ThreadServerSessionPool"]

_log = CLIENT


class ServerSession(Protocol):
    """Implemented by the application server (JMS 8.2.2)."""

    def get_session(self) -> Session: ...

    def start(self) -> None: ...


class ServerSessionPool(Protocol):
    """Implemented by the application server (JMS 8.2.3); ``get_server_session`` may block."""

    def get_server_session(self) -> ServerSession: ...


class ServerSessionSupport:
    """A session's side of the application server facilities (JMS 8.2.1): its MessageListener
    and the messages a connection consumer loaded into it. A collaborator of ``Session``, whose
    ``set_message_listener``, ``get_message_listener`` and ``run`` call it; a connection consumer
    and a server session pool reach the rest through ``session.internal.server``."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._lock = threading.Lock()
        self._listener: Any = None
        self._loaded: list[Message] | None = None

    def set_message_listener(self, listener: Any) -> None:
        """The listener ``run()`` hands loaded messages to (for application servers)."""
        self._session.internal.check_open()
        self._listener = listener

    def get_message_listener(self) -> Any:
        self._session.internal.check_open()
        return self._listener

    def load(self, messages: list[Message]) -> None:
        """A connection consumer loads messages for the next ``run()`` (not JMS API)."""
        if self._session.acknowledge_mode == ack.SESSION_TRANSACTED:
            raise IllegalStateException(
                "a connection consumer cannot load messages into a transacted session: they are "
                "settled by the connection consumer's own session")
        with self._lock:
            self._loaded = [*(self._loaded or ()), *messages]

    @property
    def loaded_count(self) -> int:
        """How many messages wait for the next ``run()`` (not JMS API)."""
        return len(self._loaded or ())

    def take_loaded(self) -> list[Message]:
        """The loaded messages, forgotten here (what ``run()`` processes; not JMS API)."""
        with self._lock:
            loaded, self._loaded = self._loaded or [], None
        return loaded

    def finish_loaded(self, msg: Message, error: BaseException | None) -> None:
        """Settle one loaded message after its listener ran, per this session's mode (module
        docstring); not JMS API."""
        if self._session.acknowledge_mode in (ack.CLIENT_ACKNOWLEDGE, ack.INDIVIDUAL_ACKNOWLEDGE):
            return  # the listener acknowledges
        if error is not None:
            _log.warning("a server session's message listener raised; the message is given back "
                         "(modified delivery-failed): %s: %s", type(error).__name__, error)
            msg.set_int_property(ack.ACK_TYPE, MODIFIED_FAILED)
        elif msg.property_exists(ack.ACK_TYPE):
            msg.set_int_property(ack.ACK_TYPE, ack.auto_outcome(msg))
        msg.acknowledge()

    def run(self) -> None:
        """Hand every loaded message to the session's listener, in order, then return (JMS 8.2.1)."""
        listener = self._listener
        if listener is None:
            raise IllegalStateException("run() needs a message listener: set_message_listener first")
        on_message: Callable[[Message], Any] = getattr(listener, "on_message", listener)
        for msg in self.take_loaded():
            try:
                on_message(msg)
            except Exception as e:
                self.finish_loaded(msg, e)
            else:
                self.finish_loaded(msg, None)


class _PooledServerSession:
    def __init__(self, pool: ThreadServerSessionPool, session: Session) -> None:
        self._pool = pool
        self._session = session

    def get_session(self) -> Session:
        return self._session

    def start(self) -> None:
        self._pool.submit(self)


class ThreadServerSessionPool:
    """A ready ``ServerSessionPool``: ``size`` sessions on ``connection``, each with the listener
    ``listener_factory(session)`` makes (one per session: a listener is single-threaded), run on
    a pool of ``size`` threads. ``get_server_session`` blocks while every one is busy."""

    def __init__(self, connection: Connection, listener_factory: Callable[[Session], Any], size: int = 4,
                 session_mode: int = ack.AUTO_ACKNOWLEDGE) -> None:
        if size < 1:
            raise ValueError(f"a server session pool needs at least one session, got {size}")
        self._free: queue.SimpleQueue[_PooledServerSession] = queue.SimpleQueue()
        self._sessions: list[Session] = []
        self._executor = ThreadPoolExecutor(size, thread_name_prefix="amqp-jms-server-session")
        self._closed = False
        for _ in range(size):
            s = connection.create_session(session_mode)
            s.set_message_listener(listener_factory(s))
            self._sessions.append(s)
            self._free.put(_PooledServerSession(self, s))

    def get_server_session(self) -> ServerSession:
        if self._closed:
            raise IllegalStateException("the server session pool is closed")
        return self._free.get()

    def submit(self, ss: _PooledServerSession) -> None:
        self._executor.submit(self._run, ss)

    def _run(self, ss: _PooledServerSession) -> None:
        try:
            ss.get_session().run()
        except JMSException as e:
            _log.warning("a server session failed: %s", e)
        finally:
            self._free.put(ss)

    def close(self) -> None:
        """Wait for running sessions, then close them."""
        self._closed = True
        self._executor.shutdown(wait=True)
        for s in self._sessions:
            try:
                s.close()
            except JMSException:
                pass

    def __enter__(self) -> ThreadServerSessionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
