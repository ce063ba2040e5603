"""The asyncio face of the standard API: connections, sessions, producers, consumers.

One core, two faces: each async object wraps the blocking object of ``amqp_jms.client`` and the
same provider. The hot paths await the provider's own futures through
``asyncio.wrap_future`` (a send's outcome, credit and drain requests); a receive waits for the
consumer's local queue to be fed by the I/O thread (woken with ``call_soon_threadsafe``).
Operations that are rare and already blocking in the core (opening a connection, creating a
session or link, commit, close) run in a worker thread (``asyncio.to_thread``) so the event
loop never blocks. No JMS logic (headers, acknowledgement, redelivery, selectors) is repeated
here: it is the core's ``MessageProducer._send`` and ``Session._prepare/_after_receive``.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..client.completion import RETURN_FUTURE
from ..client.connection import Connection
from ..client.factory import ConnectionFactory
from ..destination import Destination
from ..exceptions import IllegalStateException
from ._bridge import bridge_for
from ._listeners import OnLoop

if TYPE_CHECKING:
    from ..client.consumer import MessageConsumer
    from ..client.producer import MessageProducer
    from ..client.session import Session
    from ..message import Message

__all__ = ["AsyncConnection", "AsyncConnectionFactory", "AsyncConsumer", "AsyncProducer", "AsyncSession"]

T = TypeVar("T")
_POLL = 0.2  # seconds: how often a waiting receive re-checks start/stop/close
_SESSION_PASSTHROUGH = frozenset({
    "create_queue", "create_topic", "get_transacted", "get_acknowledge_mode", "transacted",
    "acknowledge_mode", "acknowledge", "recover",
})


async def _thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))


class AsyncConnectionFactory:
    """``AsyncConnectionFactory(url, **options)``: the options of ``ConnectionFactory``."""

    def __init__(self, url: str = "amqp://localhost:5672", **options: Any) -> None:
        self.factory = ConnectionFactory(url, **options)

    async def create_connection(
        self, username: str | None = None, password: str | None = None
    ) -> AsyncConnection:
        return AsyncConnection(await _thread(self.factory.create_connection, username, password))

    async def create_context(self, *args: Any) -> Any:
        from ._context import AsyncJMSContext

        return AsyncJMSContext(await _thread(self.factory.create_context, *args))


class AsyncConnection:
    """``async with await factory.create_connection() as conn:``."""

    def __init__(self, connection: Connection) -> None:
        self.sync = connection
        self._listeners: list[OnLoop] = []

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

    async def create_session(self, *args: Any, **kwargs: Any) -> AsyncSession:
        return AsyncSession(await _thread(self.sync.create_session, *args, **kwargs))

    async def start(self) -> None:
        await _thread(self.sync.start)

    async def stop(self) -> None:
        await _thread(self.sync.stop)

    async def close(self) -> None:
        await _thread(self.sync.close)

    def get_client_id(self) -> str | None:
        return self.sync.get_client_id()

    async def set_client_id(self, client_id: str) -> None:
        await _thread(self.sync.set_client_id, client_id)

    async def __aenter__(self) -> AsyncConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncSession:
    """A session; message factories stay synchronous (they do no I/O)."""

    def __init__(self, session: Session) -> None:
        self.sync = session

    def __getattr__(self, name: str) -> Any:
        # create_*_message, create_queue/topic, get_transacted, acknowledge_mode...: no I/O
        if (name.startswith("create_") and name.endswith("message")) or name in _SESSION_PASSTHROUGH:
            return getattr(self.sync, name)
        raise AttributeError(name)

    async def create_producer(self, destination: Destination | None) -> AsyncProducer:
        return AsyncProducer(await _thread(self.sync.create_producer, destination))

    async def create_consumer(self, destination: Destination, message_selector: str | None = None,
                              no_local: bool = False) -> AsyncConsumer:
        c = await _thread(self.sync.create_consumer, destination, message_selector, no_local)
        return AsyncConsumer(c)

    async def create_durable_consumer(self, topic: Any, name: str, message_selector: str | None = None,
                                      no_local: bool = False) -> AsyncConsumer:
        return AsyncConsumer(await _thread(self.sync.create_durable_consumer, topic, name, message_selector,
                                           no_local))

    async def create_shared_consumer(self, topic: Any, name: str, message_selector: str | None = None
                                     ) -> AsyncConsumer:
        return AsyncConsumer(await _thread(self.sync.create_shared_consumer, topic, name, message_selector))

    async def create_shared_durable_consumer(self, topic: Any, name: str, message_selector: str | None = None
                                             ) -> AsyncConsumer:
        return AsyncConsumer(await _thread(self.sync.create_shared_durable_consumer, topic, name,
                                           message_selector))

    async def create_temporary_queue(self) -> Any:
        return await _thread(self.sync.create_temporary_queue)

    async def create_temporary_topic(self) -> Any:
        return await _thread(self.sync.create_temporary_topic)

    async def unsubscribe(self, name: str) -> None:
        await _thread(self.sync.unsubscribe, name)

    async def commit(self) -> None:
        await _thread(self.sync.commit)

    async def rollback(self) -> None:
        await _thread(self.sync.rollback)

    async def close(self) -> None:
        await _thread(self.sync.close)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncProducer:
    """``await producer.send(message)`` / ``await producer.send(destination, message)``.

    Awaits the peer's outcome when the core would wait for it (PERSISTENT outside a
    transaction, or ``jms.forceSyncSend``), returns at once otherwise, exactly like the blocking
    ``send`` (docs/client.md, "Which sends wait")."""

    def __init__(self, producer: MessageProducer) -> None:
        self.sync = producer

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("set_", "get_")) or name in ("destination", "priority", "delivery_mode",
                                                         "time_to_live", "delivery_delay"):
            return getattr(self.sync, name)
        raise AttributeError(name)

    async def send(self, *args: Any, delivery_mode: int | None = None, priority: int | None = None,
                   time_to_live: int | None = None) -> None:
        """Send and wait for the outcome (when the core would): ``send(message)`` or, for an
        anonymous producer, ``send(destination, message)``."""
        af = self.send_nowait(*args, delivery_mode=delivery_mode, priority=priority,
                              time_to_live=time_to_live)
        cfg = self.sync._session._connection._config
        timeout = cfg.seconds(cfg.send_timeout_ms)
        await (af if timeout is None else asyncio.wait_for(af, timeout))

    def send_nowait(self, *args: Any, delivery_mode: int | None = None, priority: int | None = None,
                    time_to_live: int | None = None) -> asyncio.Future[None]:
        """Send now (in order, on the calling task) and return a future for the outcome, to
        pipeline many sends: ``await asyncio.gather(*(p.send_nowait(m) for m in batch))``."""
        p = self.sync
        if args and isinstance(args[0], Destination):
            if p.destination is not None:
                raise TypeError(f"this producer was created for {p.destination}: send(message)")
            destination, message = args[0], (args[1] if len(args) > 1 else None)
        else:
            if p.destination is None:
                raise TypeError("this producer has no destination: use send(destination, message)")
            destination, message = p.destination, (args[0] if args else None)
        fut = p._send(
            destination, message,
            p.delivery_mode if delivery_mode is None else delivery_mode,
            p.priority if priority is None else priority,
            p.time_to_live if time_to_live is None else time_to_live,
            RETURN_FUTURE,
        )
        loop = asyncio.get_running_loop()
        if fut is None:  # presettled / asynchronous producer: nothing to wait for
            done: asyncio.Future[None] = loop.create_future()
            done.set_result(None)
            return done
        return bridge_for(loop).wrap(fut)

    async def close(self) -> None:
        await _thread(self.sync.close)

    async def __aenter__(self) -> AsyncProducer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncConsumer:
    """``await consumer.receive(timeout_ms)`` and ``async for message in consumer``."""

    def __init__(self, consumer: MessageConsumer) -> None:
        self.sync = consumer
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: receives parked in ``_wait``: only then is an arrival worth waking the loop for (a
        #: self-pipe write per prefetched message otherwise), and once per parking
        self._parked = 0
        self._woken = False
        consumer._queue.on_arrival = self._arrived  # called on the I/O thread

    def _arrived(self) -> None:
        loop, ev = self._loop, self._event
        if self._parked and not self._woken and loop is not None and ev is not None:
            self._woken = True
            try:
                loop.call_soon_threadsafe(ev.set)
            except RuntimeError:  # the waiting loop is gone
                pass

    def get_message_selector(self) -> str | None:
        return self.sync.get_message_selector()

    def receive_no_wait(self) -> Message | None:
        """A message already here, or None: never waits, so it never asks the peer (that would
        block the event loop); ``await receive(t)`` asks it when ``t`` runs out."""
        return self.sync._receive(0.0, ask_peer=False)

    async def receive(self, timeout_ms: int | None = None) -> Message | None:
        """The next message; None after ``timeout_ms`` (None or 0: wait) or once closed."""
        return await self._receive(timeout_ms)

    async def receive_body(self, cls: type, timeout_ms: int | None = None) -> Any:
        """The next message's body as ``cls`` (see ``MessageConsumer._receive_body``)."""
        body: list[Any] = []
        m = await self._receive(timeout_ms, lambda msg: body.append(msg.get_body(cls)))
        return None if m is None else body[0]

    async def _receive(self, timeout_ms: int | None, vet: Callable[[Message], None] | None = None
                       ) -> Message | None:
        c = self.sync
        c._check_open()
        if c._listener is not None:
            raise IllegalStateException("cannot receive: the consumer has a message listener")
        deadline = None if not timeout_ms else time.monotonic() + timeout_ms / 1000.0
        q, sess = c._queue, c._session
        pulled = False
        stops = q.stops
        while True:
            if c._closed or q.closed:
                return None
            inbound = q.pop_nowait()
            if inbound is None:
                if q.stops != stops:
                    stops, pulled = q.stops, False  # stop() took the credit back: pull again
                if c._prefetch <= 0 and not pulled and q.running:
                    await asyncio.wrap_future(c._p.pull(drain=False))
                    pulled = True
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    if c._prefetch <= 0 and pulled:
                        await asyncio.wrap_future(c._p.drain())
                        inbound = q.pop_nowait()
                    elif c._prefetch > 0 and c._check_remote(timeout_ms or 0):
                        await asyncio.wrap_future(c._p.drain())  # as the sync receive(t): ask first
                        inbound = q.pop_nowait()
                        if inbound is None:
                            c._p.taken()  # the drain used up the credit: top it up again
                    if inbound is None:
                        return None
                else:
                    await self._wait(left)
                    continue
            if c._prefetch > 0:
                c._p.taken()
            msg = sess._prepare(c, inbound)
            if msg is not None:
                c._hand_over(inbound, msg, vet)
                return msg
            pulled = False

    async def _wait(self, left: float | None) -> None:
        if self._event is None:
            self._event = asyncio.Event()
            self._loop = asyncio.get_running_loop()
        ev = self._event
        ev.clear()
        self._woken = False
        self._parked += 1  # before the check: an arrival after it sees the count and wakes us
        try:
            q = self.sync._queue
            if q.running and len(q):  # arrived between the check and the clear
                return
            await asyncio.wait_for(ev.wait(), _POLL if left is None else min(left, _POLL))
        except TimeoutError:
            pass
        finally:
            self._parked -= 1

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Message]:
        while not self.sync._closed:
            m = await self.receive()
            if m is None:
                return
            yield m

    async def close(self) -> None:
        await _thread(self.sync.close)

    async def __aenter__(self) -> AsyncConsumer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
