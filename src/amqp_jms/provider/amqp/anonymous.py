"""Anonymous producers without ANONYMOUS-RELAY: a bounded cache of per-destination links.

When the peer offers ``ANONYMOUS-RELAY`` an anonymous producer is one link with a null target
address and each message's ``to`` says where it goes. Peers without it (RabbitMQ) would end the
session on such an attach, so, as Qpid JMS does, the producer opens an ordinary link per
destination on demand and keeps at most ``amqp.anonymousFallbackCacheSize`` of them, closing
the least recently used one beyond that and any idle for ``amqp.anonymousFallbackCacheTimeout``
ms (checked at each send). With a cache size of 0 each link is closed once its send completes.
A cached link the peer closed fails the sends it had under way and is replaced at the next send
to its destination (as Qpid JMS: one destination's trouble is not the producer's end).

This is Qpid JMS's ``AmqpAnonymousFallbackProducer``: the session hands it out for
``ProducerSpec(None)`` when the peer lacks ``ANONYMOUS-RELAY``, so an anonymous producer always
works and the JMS layer does not know which kind it holds. A link is created on the sending
thread (it waits up to ``jms.requestTimeout`` for the attach, as a ``create_producer`` does).
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING

from ...exceptions import IllegalStateException, InvalidDestinationException
from ...message import MessageData
from ..base import ProducerSpec, ProviderProducer

if TYPE_CHECKING:
    from ...destination import Destination
    from .producer import AmqpProducer
    from .session import AmqpSession

__all__ = ["AnonymousFallbackProducer"]


class _Entry:
    __slots__ = ("last", "pending", "producer")

    def __init__(self, producer: AmqpProducer) -> None:
        self.producer = producer
        self.last = time.monotonic()
        self.pending: concurrent.futures.Future[None] | None = None


class AnonymousFallbackProducer(ProviderProducer):
    def __init__(self, session: AmqpSession, presettle: bool) -> None:
        self._ps = session
        self._presettle = presettle
        cfg = session.provider.config
        self._size = cfg.anonymous_fallback_cache_size
        self._timeout = cfg.anonymous_fallback_cache_timeout_ms / 1000.0
        self._links: OrderedDict[Destination, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def cached_destinations(self) -> list[Destination]:
        """Destinations with an open link, least recently used first (for tests and tools)."""
        with self._lock:
            return list(self._links)

    def send(
        self, message: MessageData, sync: bool, time_to_live: int = 0
    ) -> concurrent.futures.Future[None] | None:
        dest = message.destination
        if dest is None:
            raise InvalidDestinationException("an anonymous producer needs a destination for each send")
        entry = self._link(dest)
        fut = entry.producer.send(message, sync, time_to_live)
        entry.pending = fut
        if self._size <= 0:
            self._retire(dest, entry)
        return fut

    def _link(self, dest: Destination) -> _Entry:
        now = time.monotonic()
        stale: list[tuple[Destination, _Entry]] = []
        with self._lock:
            if self._closed:
                raise IllegalStateException("the producer is closed")
            for d, e in list(self._links.items()):
                if d != dest and self._timeout > 0 and now - e.last > self._timeout:
                    stale.append((d, e))
                    del self._links[d]
            entry = self._links.get(dest)
            if entry is not None and (entry.producer.failure is not None or entry.producer.closed):
                del self._links[dest]  # the peer closed it: a new link for this send
                entry = None
            if entry is not None:
                self._links.move_to_end(dest)
                entry.last = now
        for _d, e in stale:
            self._close_entry(e)
        if entry is not None:
            return entry
        provider = self._ps.provider
        pprod = provider.wait(self._ps.create_producer(ProducerSpec(dest, self._presettle)),
                              provider.request_timeout(), f"create a link to {dest}")
        entry = _Entry(pprod)
        evicted: list[_Entry] = []
        with self._lock:
            self._links[dest] = entry
            while self._size > 0 and len(self._links) > self._size:
                _, old = self._links.popitem(last=False)
                evicted.append(old)
        for e in evicted:
            self._close_entry(e)
        return entry

    def _retire(self, dest: Destination, entry: _Entry) -> None:
        with self._lock:
            if self._links.get(dest) is entry:
                del self._links[dest]
        self._close_entry(entry)

    @staticmethod
    def _close_entry(entry: _Entry) -> None:
        """Close once its last send has its outcome (closing earlier would fail that send)."""
        pending = entry.pending
        if pending is None or pending.done():
            entry.producer.close()
        else:
            pending.add_done_callback(lambda _f: entry.producer.close())

    def close(self) -> concurrent.futures.Future[None]:
        with self._lock:
            self._closed = True
            entries = list(self._links.values())
            self._links.clear()
        futs = [e.producer.close() for e in entries]
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not futs:
            done.set_result(None)
            return done
        left = [len(futs)]
        lock = threading.Lock()

        def one(_f: concurrent.futures.Future[None]) -> None:
            with lock:
                left[0] -= 1
                last = left[0] == 0
            if last and not done.done():
                done.set_result(None)

        for f in futs:
            f.add_done_callback(one)
        return done
