"""Listener dispatch: message listeners run on a per-session thread, one at a time (JMS 4.4.14).

Never on the provider's I/O thread. The ``Dispatcher`` thread takes one token per queued
message; it pauses while the connection is stopped, and ``wait_idle`` lets
``Connection.stop``/consumer close wait for a listener call in progress, as the spec requires.
``ListenerDispatch`` is the session's side (a collaborator of ``Session``): setting a listener, keeping
a pull consumer's credit out for it, and handing one message to it with the acknowledgement
policy's rules (a listener that raises under AUTO/DUPS_OK gets the message again at once).
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any

from .._logs import CLIENT
from .acknowledgement import delivered_before_listener, hands_back_refused

if TYPE_CHECKING:
    from .connection import Connection
    from .consumer import MessageConsumer
    from .session import Session

__all__ = ["Dispatcher", "ListenerDispatch"]

_log = CLIENT

_STOP = object()


class Dispatcher:
    def __init__(self, session: ListenerDispatch, name: str) -> None:
        self._session = session
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._busy = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def notify(self, consumer: Any) -> None:
        self._q.put(consumer)

    def resume(self) -> None:
        self._q.put(None)  # re-check after start

    def on_own_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def wait_idle(self) -> None:
        """Return once no listener call is running (no-op on the dispatcher thread)."""
        if self.on_own_thread():
            return
        with self._busy:
            pass

    def stop(self) -> None:
        self._stopped = True
        self._q.put(_STOP)
        if not self.on_own_thread():
            self._thread.join(10)

    def _main(self) -> None:
        conn = self._session.connection.internal
        while True:
            item = self._q.get()
            if item is _STOP or self._stopped:
                return
            if item is None:
                continue
            while not conn.started and not self._stopped:
                conn.wait_started(0.5)
            if self._stopped:
                return
            with self._busy:
                try:
                    self._session.dispatch_one(item)
                except Exception:  # keep dispatching; the error is the listener's or logged
                    _log.exception("message dispatch failed")


class ListenerDispatch:
    """A session's message listeners (set, fed, called): a collaborator of ``Session``, which
    holds one and asks it what runs now (``current``, for ``recover`` and ``close`` from a
    listener) and for its thread (``dispatcher``)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._lock = threading.Lock()
        #: the listener thread, once a listener was set
        self.dispatcher: Dispatcher | None = None
        #: the (consumer, inbound) a listener is handling right now (dispatcher thread only)
        self.current: tuple[MessageConsumer, Any] | None = None
        #: ``recover()`` was called from the listener handling ``current``
        self.recovered_current = False

    @property
    def connection(self) -> Connection:
        return self._session.internal.connection

    def listener_changed(self, consumer: MessageConsumer) -> None:
        """``consumer`` set (or cleared) its message listener: feed it from its queue."""
        listener = consumer.get_message_listener()
        with self._lock:
            if listener is None:
                consumer.internal.local_queue.on_arrival = None
                return
            if self.dispatcher is None:
                self.dispatcher = Dispatcher(self, f"amqp-jms-session-{self._session.internal.index}")
            d = self.dispatcher
            consumer.internal.local_queue.on_arrival = lambda: d.notify(consumer)
            for _ in range(len(consumer.internal.local_queue)):
                d.notify(consumer)
        self.pull_for_listener(consumer)

    def pull_for_listener(self, consumer: MessageConsumer) -> None:
        """Prefetch 0 with a listener: keep one credit out while the listener is ready."""
        c = consumer.internal
        if c.prefetch == 0 and consumer.get_message_listener() is not None and not consumer.closed \
                and c.local_queue.running and self._session.internal.connection.internal.provider_alive():
            consumer.internal.provider_consumer.pull(drain=False)

    def dispatch_one(self, consumer: MessageConsumer) -> None:
        """On the dispatcher thread: hand one queued message to the consumer's listener."""
        listener = consumer.get_message_listener()
        if listener is None or consumer.closed:
            return
        inbound = consumer.internal.local_queue.pop_nowait()
        if inbound is None:
            return
        if consumer.internal.prefetch > 0:
            consumer.internal.provider_consumer.taken()
        msg = self._session.internal.prepare_delivery(consumer, inbound)
        if msg is None:
            self.pull_for_listener(consumer)
            return
        mode = self._session.acknowledge_mode
        on_message: Any = getattr(listener, "on_message", listener)
        self.current = (consumer, inbound)
        self.recovered_current = False
        recorded = delivered_before_listener(mode)
        if recorded:  # acknowledge()/recover() inside the listener include this message
            self._session.internal.after_receive(consumer, inbound, msg)
        try:
            inbound.dispatch(on_message, msg)  # the provider may wrap it (the delivery's span)
        except Exception:
            self.current = None
            if self.recovered_current:
                return
            if hands_back_refused(mode):
                inbound.local_redeliveries += 1
                consumer.internal.local_queue.push_front([inbound])
                if self.dispatcher is not None:
                    self.dispatcher.notify(consumer)
                return
            _log.exception("message listener raised")
        self.current = None
        if self.recovered_current:
            return  # recover() inside the listener already queued it again
        if not self._session.closed:
            if not recorded:
                self._session.internal.after_receive(consumer, inbound, msg)
            self.pull_for_listener(consumer)
