"""The asyncio face of ``MessageProducer``: ``await producer.send(message)``.

A send's arguments are parsed by the core's ``resolve_send_args`` and the send is made by its
``send_resolved``, which hands back the wait for the outcome (``ProviderWait``: the peer's
outcome, up to ``jms.sendTimeout``) instead of blocking on it; ``aio._wait.wait`` awaits it, so
a send fails exactly as the blocking one does (a timeout is the same ``JMSException``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, overload

from ..client.completion import RETURN_FUTURE
from ..client.waits import ProviderWait
from ._base import Closing
from ._bridge import bridge_for
from ._wait import wait

if TYPE_CHECKING:
    from ..client.producer import MessageProducer
    from ..destination import Destination
    from ..message import Message

__all__ = ["AsyncProducer"]


class AsyncProducer(Closing):
    """``await producer.send(message)`` / ``await producer.send(destination, message)``.

    Awaits the peer's outcome when the core would wait for it (PERSISTENT outside a
    transaction, or ``jms.forceSyncSend``), returns at once otherwise, exactly like the blocking
    ``send`` (docs/client.md, "Which sends wait"). Getters and setters are plain calls."""

    sync: MessageProducer

    def __init__(self, producer: MessageProducer) -> None:
        self.sync = producer

    # -- sending -------------------------------------------------------------------------------
    @overload
    async def send(self, message: Message, delivery_mode: int = ..., priority: int = ...,
                   time_to_live: int = ...) -> None: ...

    @overload
    async def send(self, destination: Destination, message: Message, delivery_mode: int = ...,
                   priority: int = ..., time_to_live: int = ...) -> None: ...

    async def send(self, *args: Any, **kwargs: Any) -> None:
        """Send and wait for the outcome (when the core would): ``send(message)`` or, for an
        anonymous producer, ``send(destination, message)``; ``delivery_mode``, ``priority`` and
        ``time_to_live`` as in the blocking ``send``. Waits up to ``jms.sendTimeout``, then
        raises the blocking face's ``JMSException`` (``send timed out after ...``)."""
        await wait(self._send(args, kwargs))

    def send_nowait(self, *args: Any, **kwargs: Any) -> asyncio.Future[None]:
        """Send now (in order, on the calling task) and return a future for the outcome, to
        pipeline many sends: ``await asyncio.gather(*(p.send_nowait(m) for m in batch))``.
        The arguments are the blocking ``send``'s (one parser, ``resolve_send_args``), but for a
        completion listener: await the future instead. The future carries the peer's outcome
        with no deadline of its own (``jms.sendTimeout`` is ``send``'s): bound it with
        ``asyncio.wait_for`` if need be."""
        w = self._send(args, kwargs)
        loop = asyncio.get_running_loop()
        if w is None:  # presettled / asynchronous producer: nothing to wait for
            done: asyncio.Future[None] = loop.create_future()
            done.set_result(None)
            return done
        return bridge_for(loop).wrap(w.future)

    def _send(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ProviderWait | None:
        producer = self.sync
        destination, message, mode, priority, ttl, listener = producer.internal.resolve_send_args(
            args, {k: v for k, v in kwargs.items() if v is not None})
        if listener is not None:
            raise TypeError("the asyncio producer takes no completion listener: await the send")
        w: ProviderWait | None = producer.internal.send_resolved(destination, message, mode, priority, ttl,
                                                        RETURN_FUTURE)
        return w

    # -- settings (no I/O) ---------------------------------------------------------------------
    def get_destination(self) -> Destination | None:
        return self.sync.get_destination()

    @property
    def destination(self) -> Destination | None:
        return self.sync.destination

    def set_delivery_mode(self, mode: int) -> None:
        self.sync.set_delivery_mode(mode)

    def get_delivery_mode(self) -> int:
        return self.sync.get_delivery_mode()

    def set_priority(self, priority: int) -> None:
        self.sync.set_priority(priority)

    def get_priority(self) -> int:
        return self.sync.get_priority()

    def set_time_to_live(self, ttl_ms: int) -> None:
        self.sync.set_time_to_live(ttl_ms)

    def get_time_to_live(self) -> int:
        return self.sync.get_time_to_live()

    def set_delivery_delay(self, delay_ms: int) -> None:
        self.sync.set_delivery_delay(delay_ms)

    def get_delivery_delay(self) -> int:
        return self.sync.get_delivery_delay()

    def set_disable_message_id(self, value: bool) -> None:
        self.sync.set_disable_message_id(value)

    def get_disable_message_id(self) -> bool:
        return self.sync.get_disable_message_id()

    def set_disable_message_timestamp(self, value: bool) -> None:
        self.sync.set_disable_message_timestamp(value)

    def get_disable_message_timestamp(self) -> bool:
        return self.sync.get_disable_message_timestamp()

    def set_message_id_prefix(self, prefix: str) -> None:
        self.sync.set_message_id_prefix(prefix)

    @property
    def delivery_mode(self) -> int:
        return self.sync.delivery_mode

    @property
    def priority(self) -> int:
        return self.sync.priority

    @property
    def time_to_live(self) -> int:
        return self.sync.time_to_live

    @property
    def delivery_delay(self) -> int:
        return self.sync.delivery_delay

    @property
    def disable_message_id(self) -> bool:
        return self.sync.disable_message_id

    @property
    def disable_message_timestamp(self) -> bool:
        return self.sync.disable_message_timestamp
