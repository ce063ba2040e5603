"""QueueBrowser: look at a queue's messages without consuming them (JMS 4.9).

Each enumeration attaches its own receiver with distribution-mode ``copy`` (the peer sends
copies and keeps the messages) and the browser prefetch (``jms.prefetchPolicy.queueBrowserPrefetch``).
When the local queue runs dry the browser drains the link's credit: once the peer has answered
the drain with nothing more, the snapshot is exhausted and the iteration ends cleanly, then the
link is closed. A browser does not depend on the connection being started.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..exceptions import IllegalStateException, JMSException
from ..message._seam import mark_received
from ..provider.base import ACCEPTED, BROWSERS, ConsumerSpec, ProviderConsumer
from .acknowledgement import POISON, decode_or_poison
from .local_queue import LocalQueue

if TYPE_CHECKING:
    from ..destination import Queue
    from ..message import Message
    from .session import Session

__all__ = ["QueueBrowser"]


class QueueBrowser:
    """``for message in session.create_browser(queue): ...`` or ``get_enumeration()``."""

    def __str__(self) -> str:
        return f"browser on {self._queue}"

    def __init__(self, session: Session, queue: Queue, selector: str | None) -> None:
        self._session = session
        self._queue = queue
        self._selector = selector
        self._closed = False
        self._open: list[ProviderConsumer] = []  # provider consumers of enumerations still running
        session.internal.connection.internal.capabilities().check(BROWSERS)  # a browser must be able to drain

    def get_queue(self) -> Queue:
        self._check_open()
        return self._queue

    @property
    def queue(self) -> Queue:
        return self._queue

    def get_message_selector(self) -> str | None:
        self._check_open()
        return self._selector

    def get_enumeration(self) -> Iterator[Message]:
        """A fresh snapshot of the queue, as an iterator that ends when it is exhausted."""
        self._check_open()
        pcons, sink, local = self._attach()
        return self._enumerate(pcons, sink, local)

    def __iter__(self) -> Iterator[Message]:
        return self.get_enumeration()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for pcons in list(self._open):
            self._close_link(pcons)

    def __enter__(self) -> QueueBrowser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("the browser is closed")
        self._session.internal.check_open()

    def _attach(self) -> tuple[ProviderConsumer, LocalQueue, Any]:
        conn = self._session.internal.connection.internal
        cfg = conn.config
        prefetch = cfg.prefetch.for_destination(False, browser=True)
        spec = ConsumerSpec(self._queue, self._selector, False, prefetch, False, browser=True)
        sink = LocalQueue()
        sink.running = True
        pcons = conn.wait_provider(self._session.internal.provider_session.create_consumer(spec, sink),
                                   conn.request_timeout(), "create_browser")
        if not pcons.copy_honoured:
            try:
                conn.wait_provider(pcons.close(), conn.close_timeout(), "close browser")
            finally:
                raise JMSException(
                    f"the peer cannot browse {self._queue}: it did not answer distribution-mode "
                    "copy, so browsing would consume the messages"
                )
        local = None  # applied here to messages the peer did not filter (asked per message)
        if self._selector is not None:
            from ..selector import Selector

            local = Selector(self._selector)
        self._open.append(pcons)
        return pcons, sink, local

    def _enumerate(self, pcons: ProviderConsumer, sink: LocalQueue, local: Any) -> Iterator[Message]:
        conn = self._session.internal.connection.internal
        drain_timeout = conn.config.seconds(conn.config.drain_timeout_ms)
        prefetch = pcons.prefetch
        try:
            while not self._closed and not self._session.closed:
                inbound = sink.get(0)
                if inbound is None:
                    # one credit if none is left, then drain: the peer sends what it has or
                    # says it has nothing more
                    conn.wait_provider(pcons.pull(drain=True), drain_timeout, "browse (drain)")
                    inbound = sink.get(0)
                    if inbound is None:
                        return  # the peer had nothing more: the snapshot is exhausted
                if prefetch > 0:
                    pcons.taken()
                msg = decode_or_poison(inbound, self)
                # settles the copy; the message stays queued (an unreadable one is skipped)
                pcons.acknowledge(inbound, ACCEPTED if msg is not None else POISON)
                if msg is None:
                    continue
                if local is not None and not pcons.selector_applied_remotely and not local.matches(msg):
                    continue
                mark_received(msg)
                yield msg
        finally:
            self._close_link(pcons)

    def _close_link(self, pcons: ProviderConsumer) -> None:
        if pcons not in self._open:
            return
        self._open.remove(pcons)
        conn = self._session.internal.connection.internal
        if conn.provider_alive() and not self._session.closed:
            try:
                conn.wait_provider(pcons.close(), conn.close_timeout(), "close browser")
            except Exception:  # closing a finished snapshot must not mask the caller's error
                pass
