"""The asyncio face of the standard API: connections, sessions, producers, consumers.

One core, two faces: each async object wraps the blocking object of ``amqp_jms.client`` and the
same provider, and only waits differently. A receive is the receive policy
(``client.receive_policy``) driven by ``AsyncConsumer._receive``: it awaits the provider's
futures (credit, drain) and the consumer's local queue, fed by the I/O thread (woken with
``call_soon_threadsafe``); vetting and acknowledgement are the consumer's ``deliver``. A send
is parsed by the producer's ``resolve_send_args`` and made by its ``send_resolved``, whose
future is awaited. Operations that are rare and already blocking in the core (opening a
connection, creating a session or link, commit, close) run in a worker thread
(``asyncio.to_thread``) so the event loop never blocks. No JMS rule (headers, credit,
acknowledgement, redelivery, selectors) is written here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Self, TypeVar

from ..client.completion import RETURN_FUTURE
from ..client.connection import Connection
from ..client.factory import ConnectionFactory
from ..client.receive_policy import (
    DELIVER,
    DELIVER_PREFETCHED,
    STOPPED,
    TAKE,
    TAKE_SINCE,
    TOP_UP,
    WAIT_RUNNING,
    ready_prefetched,
    receive_timeout,
)
from ..destination import Destination
from ..exceptions import JMSException
from ._bridge import bridge_for
from ._listeners import OnLoop

if TYPE_CHECKING:
    from ..client.consumer import MessageConsumer
    from ..client.producer import MessageProducer
    from ..client.session import Session
    from ..message import Message
    from ..provider.metrics import ConnectionMetrics

__all__ = ["AsyncConnection", "AsyncConnectionFactory", "AsyncConsumer", "AsyncProducer", "AsyncSession"]

T = TypeVar("T")
_POLL = 0.2  # seconds: how often a waiting receive re-checks start/stop/close
_SESSION_PASSTHROUGH = frozenset({
    "create_queue", "create_topic", "get_transacted", "get_acknowledge_mode", "transacted",
    "acknowledge_mode", "acknowledge", "recover",
})


async def _thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))


class Closing:
    """What every asyncio object does the same way: ``close`` (in a worker thread: closing
    waits for the peer) and ``async with``."""

    sync: Any

    async def close(self) -> None:
        await _thread(self.sync.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class Transacting(Closing):
    """What a session and a context share: transactions and unsubscribing."""

    async def commit(self) -> None:
        await _thread(self.sync.commit)

    async def rollback(self) -> None:
        await _thread(self.sync.rollback)

    async def unsubscribe(self, name: str) -> None:
        await _thread(self.sync.unsubscribe, name)


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


class AsyncConnection(Closing):
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


    def get_client_id(self) -> str | None:
        return self.sync.get_client_id()

    def metrics(self) -> ConnectionMetrics:
        """The connection's counters (``Connection.metrics``): a snapshot, no I/O, no await."""
        return self.sync.metrics()

    async def set_client_id(self, client_id: str) -> None:
        await _thread(self.sync.set_client_id, client_id)



class AsyncSession(Transacting):
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



class AsyncProducer(Closing):
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

    async def send(self, *args: Any, **kwargs: Any) -> None:
        """Send and wait for the outcome (when the core would): ``send(message)`` or, for an
        anonymous producer, ``send(destination, message)``; ``delivery_mode``, ``priority`` and
        ``time_to_live`` as in the blocking ``send``."""
        af = self.send_nowait(*args, **kwargs)
        timeout = self.sync.send_timeout
        await (af if timeout is None else asyncio.wait_for(af, timeout))

    def send_nowait(self, *args: Any, **kwargs: Any) -> asyncio.Future[None]:
        """Send now (in order, on the calling task) and return a future for the outcome, to
        pipeline many sends: ``await asyncio.gather(*(p.send_nowait(m) for m in batch))``.
        The arguments are the blocking ``send``'s (one parser, ``resolve_send_args``), but for a
        completion listener: await the future instead."""
        producer = self.sync
        destination, message, mode, priority, ttl, listener = producer.resolve_send_args(
            args, {k: v for k, v in kwargs.items() if v is not None})
        if listener is not None:
            raise TypeError("the asyncio producer takes no completion listener: await the send")
        fut = producer.send_resolved(destination, message, mode, priority, ttl, RETURN_FUTURE)
        loop = asyncio.get_running_loop()
        if fut is None:  # presettled / asynchronous producer: nothing to wait for
            done: asyncio.Future[None] = loop.create_future()
            done.set_result(None)
            return done
        return bridge_for(loop).wrap(fut)



class AsyncConsumer(Closing):
    """``await consumer.receive(timeout_ms)`` and ``async for message in consumer``."""

    def __init__(self, consumer: MessageConsumer) -> None:
        self.sync = consumer
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: receives parked in ``_wait``: only then is an arrival worth waking the loop for (a
        #: self-pipe write per prefetched message otherwise), and once per parking
        self._parked = 0
        self._woken = False
        self._queue = consumer.local_queue
        consumer.local_queue.on_arrival = self._arrived  # called on the I/O thread
        # the consumer's steps, looked up once (a receive is a hot path)
        self._top_up = consumer.top_up
        self._deliver = consumer.deliver

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
        return self.sync.receive_local()

    async def receive(self, timeout_ms: int | None = None) -> Message | None:
        """The next message; None after ``timeout_ms`` (None or 0: wait) or once closed."""
        return await self._receive(timeout_ms)

    async def receive_body(self, cls: type, timeout_ms: int | None = None) -> Any:
        """The next message's body as ``cls`` (see ``MessageConsumer.receive_body_within``)."""
        body: list[Any] = []
        m = await self._receive(timeout_ms, lambda msg: body.append(msg.get_body(cls)))
        return None if m is None else body[0]

    async def _receive(self, timeout_ms: int | None, vet: Callable[[Message], None] | None = None
                       ) -> Message | None:
        """The asyncio driver of the receive policy (``client.receive_policy``), the twin of the
        blocking ``MessageConsumer._receive_inbound``: it awaits the provider's futures and the
        arrivals the I/O thread signals, and never blocks the event loop."""
        c = self.sync
        timeout = receive_timeout(timeout_ms)
        c.check_can_receive()
        q = self._queue
        inbound = ready_prefetched(q, c.prefetch)  # the common case, without the flow
        if inbound is not None:
            self._top_up()
            msg = self._deliver(inbound, vet)
            if msg is not None:
                return msg
        flow = c.receive_flow(timeout)
        try:
            step = next(flow)
            while True:
                op, arg = step
                if op is TAKE:
                    got = q.pop_nowait()
                    if got is None and arg != 0:
                        got = await self._take(arg)
                elif op is DELIVER_PREFETCHED or op is DELIVER:
                    if op is DELIVER_PREFETCHED:
                        self._top_up()
                    msg = self._deliver(arg, vet)
                    if msg is not None:
                        return msg
                    got = None
                elif op is TOP_UP:
                    self._top_up()
                    got = None
                elif op is TAKE_SINCE:
                    got = await self._take(arg[1], arg[0])
                elif op is WAIT_RUNNING:
                    got = await self._wait_running(arg)
                else:  # PULL, PULL_DRAIN, DRAIN
                    await self._provider(c.request(op), c.drain_timeout, arg)
                    got = None
                step = flow.send(got)
        except StopIteration:
            return None

    @staticmethod
    async def _provider(fut: concurrent.futures.Future[Any], timeout: float | None, what: str) -> None:
        """Await a provider request, failing as the blocking wait (the provider's ``wait``) does."""
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            return
        try:
            await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
        except TimeoutError:
            fut.cancel()
            raise JMSException(f"{what} timed out after {timeout} s") from None
        except asyncio.CancelledError:
            if not fut.cancelled():
                raise  # our own task was cancelled
            raise JMSException(f"{what} was cancelled: the connection closed") from None

    async def _take(self, wait: float | None, stops: int | None = None) -> Any:
        """A ``TAKE`` (or, given ``stops``, a ``TAKE_SINCE``) step that waits."""
        q = self._queue
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            inbound = q.pop_nowait()
            if inbound is not None:
                return inbound
            if q.closed:
                return None
            if stops is not None and (not q.running or q.stops != stops):
                return STOPPED
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            await self._wait(left)

    async def _wait_running(self, wait: float | None) -> bool:
        """A ``WAIT_RUNNING`` step: True once the connection is started, False on timeout/close."""
        q = self._queue
        deadline = None if wait is None else time.monotonic() + wait
        while not q.closed:
            if q.running:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            await self._wait(left)
        return False

    async def _wait(self, left: float | None) -> None:
        if self._event is None:
            self._event = asyncio.Event()
            self._loop = asyncio.get_running_loop()
        ev = self._event
        ev.clear()
        self._woken = False
        self._parked += 1  # before the check: an arrival after it sees the count and wakes us
        try:
            q = self._queue
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
        while not self.sync.closed:
            m = await self.receive()
            if m is None:
                return
            yield m

