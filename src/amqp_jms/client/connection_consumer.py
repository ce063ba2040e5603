"""``ConnectionConsumer`` (JMS 2.0 8.2.4, 8.2.5): consume a destination or subscription for an
application server, through a ``ServerSessionPool``.

How it goes, as the spec's 8.2.5: a thread of the connection consumer waits for a message on a
consumer of its own (a session in INDIVIDUAL_ACKNOWLEDGE mode, so that each message is settled
on its own when its server session is done with it), gets a ``ServerSession`` from the pool
(which may block: meanwhile messages keep arriving into the prefetch), loads its session with
that message and up to ``max_messages - 1`` more *that have already arrived* (light traffic: one
message per session; a backlog: up to ``max_messages``, fewer context switches), and starts it.
The shared, durable and shared-durable forms consume a subscription of that name; several
connection consumers on one shared subscription share its messages out, as consumers do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._logs import CLIENT
from ..exceptions import IllegalStateException, JMSException
from . import acknowledgement as ack

if TYPE_CHECKING:
    from .connection import Connection
    from .consumer import MessageConsumer
    from .server_session import ServerSessionPool
    from .session import Session

__all__ = ["ConnectionConsumer"]

_log = CLIENT
_POLL_MS = 200  # how often the waiting thread looks at close()


class ConnectionConsumer:
    """JMS ``ConnectionConsumer``: ``get_server_session_pool()``, ``close()``."""

    def __init__(self, connection: Connection, pool: ServerSessionPool, max_messages: int,
                 subscribe: Callable[[Session], MessageConsumer]) -> None:
        if not isinstance(max_messages, int) or max_messages < 1:
            raise JMSException(f"max_messages must be a positive int, got {max_messages!r}")
        if pool is None or not callable(getattr(pool, "get_server_session", None)):
            raise JMSException(f"not a ServerSessionPool: {pool!r}")
        self._pool = pool
        self._max = max_messages
        self._session = connection.create_session(ack.INDIVIDUAL_ACKNOWLEDGE)
        try:
            self._consumer = subscribe(self._session)
        except BaseException:
            self._session.close()
            raise
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._deliver, name="amqp-jms-connection-consumer",
                                        daemon=True)
        self._thread.start()

    def get_server_session_pool(self) -> ServerSessionPool:
        self._check_open()
        return self._pool

    @property
    def max_messages(self) -> int:
        return self._max

    def close(self) -> None:
        """Stop loading sessions and close the consumer; messages loaded and not yet settled go
        back to the peer with the link (unsettled)."""
        if self._closed.is_set():
            return
        self._closed.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(10)
        try:
            self._session.close()
        except JMSException:
            pass

    def __enter__(self) -> ConnectionConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed.is_set():
            raise IllegalStateException("the connection consumer is closed")

    def _deliver(self) -> None:
        consumer = self._consumer
        try:
            while not self._closed.is_set():
                first = consumer.receive(_POLL_MS)
                if first is None:
                    if consumer.closed:
                        return
                    continue
                server_session = self._pool.get_server_session()
                batch = [first]
                while len(batch) < self._max:
                    more = consumer.internal.receive_local()
                    if more is None:
                        break
                    batch.append(more)
                server_session.get_session().internal.server.load(batch)
                server_session.start()
        except JMSException as e:
            if not self._closed.is_set():
                _log.warning("connection consumer on %s stopped: %s", consumer.destination, e)
        except Exception:
            _log.exception("connection consumer on %s failed", consumer.destination)
