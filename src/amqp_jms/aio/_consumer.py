"""The asyncio face of ``MessageConsumer``: ``await consumer.receive(timeout_ms)`` and
``async for message in consumer``.

A receive is the receive policy (``client.receive_policy``) driven by ``AsyncConsumer._receive``:
it awaits the provider's requests (``ProviderWait``, through ``aio._wait.wait``) and the
consumer's local queue, fed by the I/O thread (woken with ``call_soon_threadsafe``); vetting
and acknowledgement are the consumer's ``deliver``. No JMS rule is written here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..client.consumer import EncodedMessage, MessageConsumer
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
from ._base import Closing, in_thread
from ._listeners import ListenerOnLoop
from ._wait import wait

if TYPE_CHECKING:
    from ..destination import Destination
    from ..message import Message

__all__ = ["AsyncConsumer"]

T = TypeVar("T")
_POLL = 0.2  # seconds: how often a waiting receive re-checks start/stop/close


class AsyncConsumer(Closing):
    """``await consumer.receive(timeout_ms)`` and ``async for message in consumer``."""

    sync: MessageConsumer

    def __init__(self, consumer: MessageConsumer) -> None:
        self.sync = consumer
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: receives parked in ``_wait``: only then is an arrival worth waking the loop for (a
        #: self-pipe write per prefetched message otherwise), and once per parking
        self._parked = 0
        self._woken = False
        self._queue = consumer.internal.local_queue
        consumer.internal.local_queue.on_arrival = self._arrived  # called on the I/O thread
        self._listener: ListenerOnLoop | None = None
        # the consumer's steps, looked up once (a receive is a hot path)
        self._top_up = consumer.internal.top_up
        self._deliver = consumer.internal.deliver

    def _arrived(self) -> None:
        loop, ev = self._loop, self._event
        if self._parked and not self._woken and loop is not None and ev is not None:
            self._woken = True
            try:
                loop.call_soon_threadsafe(ev.set)
            except RuntimeError:  # the waiting loop is gone
                pass

    # -- JMS API -------------------------------------------------------------------------------
    def get_message_selector(self) -> str | None:
        return self.sync.get_message_selector()

    @property
    def destination(self) -> Destination:
        return self.sync.destination

    def get_no_local(self) -> bool:
        return self.sync.get_no_local()

    @property
    def closed(self) -> bool:
        return self.sync.closed

    def get_message_listener(self) -> Any:
        adapter = self._listener
        return None if adapter is None else adapter.listener

    def set_message_listener(self, listener: Any) -> None:
        """As ``MessageConsumer.set_message_listener``; ``on_message`` (or the callable, plain
        or ``async def``) runs on the running event loop, one message at a time, and the
        message is acknowledged (AUTO_ACKNOWLEDGE) once it returns."""
        adapter = None if listener is None else ListenerOnLoop(
            listener, "on_message", asyncio.get_running_loop(), lambda: self.set_message_listener(None))
        self.sync.set_message_listener(adapter)
        self._listener = adapter
        if adapter is None:  # the session took the arrivals back: a receive waits on them again
            self._queue.on_arrival = self._arrived

    def receive_no_wait(self) -> Message | None:
        """A message already here, or None: never waits, so it never asks the peer (that would
        block the event loop); ``await receive(t)`` asks it when ``t`` runs out."""
        return self.sync.internal.receive_local()

    async def receive(self, timeout_ms: int | None = None) -> Message | None:
        """The next message; None after ``timeout_ms`` (None or 0: wait) or once closed."""
        got = await self._receive(timeout_ms)
        return None if got is None else got[1]

    async def receive_body(self, cls: type[T], timeout_ms: int | None = None) -> T | None:
        """The next message's body as ``cls`` (see ``MessageConsumer.receive_body_within``)."""
        body: list[T | None] = []
        got = await self._receive(timeout_ms, lambda msg: body.append(msg.get_body(cls)))
        return None if got is None else body[0]

    async def receive_encoded(self, timeout_ms: int | None = None, *, decode_body: bool = True
                              ) -> EncodedMessage | None:
        """``receive``, also handing back the bytes the message arrived as (see
        ``MessageConsumer.receive_encoded``)."""
        got = await self._receive(timeout_ms, body=decode_body)
        return None if got is None else self.sync.internal.encoded(*got)

    def receive_encoded_no_wait(self, *, decode_body: bool = True) -> EncodedMessage | None:
        """A message already here with its bytes, or None (never asks the peer, as
        ``receive_no_wait``)."""
        return self.sync.internal.receive_encoded_local(decode_body=decode_body)

    async def drain(self) -> bool:
        """As ``MessageConsumer.drain``: everything the peer had for this consumer is local."""
        return await in_thread(self.sync.drain)

    # -- the asyncio driver of the receive policy ------------------------------------------------
    async def _receive(self, timeout_ms: int | None, vet: Callable[[Message], None] | None = None,
                       body: bool = True) -> tuple[Any, Message] | None:
        """The asyncio driver of the receive policy (``client.receive_policy``), the twin of the
        blocking ``MessageConsumer._receive_inbound``: it awaits the provider's requests and the
        arrivals the I/O thread signals, and never blocks the event loop."""
        c = self.sync
        timeout = receive_timeout(timeout_ms)  # one rule for every face: its type and sign
        c.internal.check_can_receive()
        q = self._queue
        inbound = ready_prefetched(q, c.internal.prefetch)  # the common case, without the flow
        if inbound is not None:
            self._top_up()
            msg = self._deliver(inbound, vet, body)
            if msg is not None:
                return inbound, msg
        flow = c.internal.receive_flow(timeout)
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
                    msg = self._deliver(arg, vet, body)
                    if msg is not None:
                        return arg, msg
                    got = None
                elif op is TOP_UP:
                    self._top_up()
                    got = None
                elif op is TAKE_SINCE:
                    got = await self._take(arg[1], arg[0])
                elif op is WAIT_RUNNING:
                    got = await self._wait_running(arg)
                else:  # PULL, PULL_DRAIN, DRAIN
                    got = await wait(c.internal.request(op, arg))
                step = flow.send(got)
        except StopIteration:
            return None

    async def _take(self, wait_s: float | None, stops: int | None = None) -> Any:
        """A ``TAKE`` (or, given ``stops``, a ``TAKE_SINCE``) step that waits."""
        q = self._queue
        deadline = None if wait_s is None else time.monotonic() + wait_s
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

    async def _wait_running(self, wait_s: float | None) -> bool:
        """A ``WAIT_RUNNING`` step: True once the connection is started, False on timeout/close."""
        q = self._queue
        deadline = None if wait_s is None else time.monotonic() + wait_s
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
