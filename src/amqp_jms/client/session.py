"""Session: message and destination factories, producers/consumers, acknowledgement and
local transactions (JMS 2.0 chapter 6 and 4.4), with listener dispatch on one thread.

The session owns the acknowledgement rules; the provider only settles what it is told to. The
rules, per mode:

* AUTO / DUPS_OK: a message is accepted as ``receive`` returns it, or when its listener
  returns (a listener that raises gets the message redelivered at once, JMS 8.7).
* CLIENT: ``message.acknowledge()`` (or ``session.acknowledge()``) accepts every message the
  session has delivered so far.
* INDIVIDUAL_ACKNOWLEDGE (101, Qpid JMS): ``acknowledge()`` accepts that one message.
* NO_ACKNOWLEDGE (100, Qpid JMS): consumers' links are presettled; nothing to do.
* SESSION_TRANSACTED: each delivered message is accepted inside the current transaction;
  ``commit``/``rollback`` discharge it.

Which outcome a settlement carries (``JMS_AMQP_ACK_TYPE``, poison messages, prefetched messages
never seen) is the policy of ``client.acknowledgement``.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, TypeVar

from ..destination import Destination, Queue, Topic
from ..exceptions import IllegalStateException, InvalidDestinationException, JMSException
from ..provider.base import (
    ACCEPTED,
    MODIFIED_FAILED,
    MODIFIED_FAILED_UNDELIVERABLE,
    ConsumerSpec,
    ProducerSpec,
)
from .acknowledgement import OUTCOME_BY_NAME, POISON, ack_type_of, decode_or_poison
from .completion import wait_for_completions
from .consumer import ListenerLike, LocalQueue, MessageConsumer
from .dispatch import Dispatcher
from .producer import MessageProducer
from .session_features import SessionFeatures

if TYPE_CHECKING:
    from ..message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
    from ..provider.base import ProviderSession
    from .connection import Connection

__all__ = ["Session"]

M = TypeVar("M", bound="Message")


class Session(SessionFeatures):
    """A single-threaded context for producing and consuming messages."""

    SESSION_TRANSACTED = 0
    AUTO_ACKNOWLEDGE = 1
    CLIENT_ACKNOWLEDGE = 2
    DUPS_OK_ACKNOWLEDGE = 3
    NO_ACKNOWLEDGE = 100
    INDIVIDUAL_ACKNOWLEDGE = 101
    MODES = (0, 1, 2, 3, 100, 101)

    def __init__(self, connection: Connection, psession: ProviderSession, mode: int, index: int) -> None:
        self._connection = connection
        self._p = psession
        self._mode = mode
        self._index = index
        self._closed = False
        self._lock = threading.RLock()
        self._consumers: list[MessageConsumer] = []
        self._producers: list[MessageProducer] = []
        self._delivered: list[tuple[MessageConsumer, Any]] = []  # CLIENT/transacted: in order
        #: CLIENT/INDIVIDUAL consumers closed with delivered, unacknowledged messages: their links
        #: stay until those are acknowledged (or recovered) or the session ends (Qpid JMS)
        self._deferred: list[MessageConsumer] = []
        self._dispatcher: Dispatcher | None = None
        #: the (consumer, inbound) a listener is handling right now (dispatcher thread only)
        self._current: tuple[MessageConsumer, Any] | None = None
        self._recovered_current = False
        self._producer_ids = 0
        cfg = connection._config
        self._redelivery_max = cfg.redelivery.max_redeliveries
        self._redelivery_outcome = OUTCOME_BY_NAME[cfg.redelivery.outcome]
        self._validate_names = cfg.validate_property_names

    # -- properties ----------------------------------------------------------------------------
    def get_transacted(self) -> bool:
        return self._mode == self.SESSION_TRANSACTED

    @property
    def transacted(self) -> bool:
        return self._mode == self.SESSION_TRANSACTED

    def get_acknowledge_mode(self) -> int:
        return self._mode

    @property
    def acknowledge_mode(self) -> int:
        return self._mode

    # -- message factories ---------------------------------------------------------------------
    def create_message(self) -> Message:
        from ..message import Message

        self._check_open()
        return self._configured(Message())

    def create_text_message(self, text: str | None = None) -> TextMessage:
        from ..message import TextMessage

        self._check_open()
        return self._configured(TextMessage(text))

    def create_bytes_message(self) -> BytesMessage:
        from ..message import BytesMessage

        self._check_open()
        return self._configured(BytesMessage())

    def create_map_message(self) -> MapMessage:
        from ..message import MapMessage

        self._check_open()
        return self._configured(MapMessage())

    def create_stream_message(self) -> StreamMessage:
        from ..message import StreamMessage

        self._check_open()
        return self._configured(StreamMessage())

    def create_object_message(self, obj: Any = None) -> ObjectMessage:
        from ..message import ObjectMessage

        self._check_open()
        return self._configured(ObjectMessage(obj))

    def _configured(self, msg: M) -> M:
        """Apply connection options to a message this session creates or delivers."""
        if not self._validate_names:
            msg._validate_names = False  # jms.validatePropertyNames=false (Qpid JMS)
        return msg

    def create_queue(self, name: str) -> Queue:
        self._check_open()
        return Queue(name)

    def create_topic(self, name: str) -> Topic:
        self._check_open()
        return Topic(name)

    # -- producers and consumers ---------------------------------------------------------------
    def create_producer(self, destination: Destination | None) -> MessageProducer:
        self._check_open()
        conn = self._connection
        if destination is not None and not isinstance(destination, Destination):
            raise InvalidDestinationException(f"not a Destination: {destination!r}")
        is_topic = destination is not None and destination.is_topic
        presettle = conn._config.presettle.producer(is_topic, self.transacted)
        if destination is None and "ANONYMOUS-RELAY" not in conn._remote_caps():
            from .anonymous import AnonymousFallbackProducer  # per-destination link cache

            pprod: Any = AnonymousFallbackProducer(self._p, presettle, conn)
        else:
            pprod = conn._provider_wait(self._p.create_producer(ProducerSpec(destination, presettle)),
                                        conn._request_timeout(), "create_producer")
        with self._lock:
            self._producer_ids += 1
            pid = f"{conn._connection_id()}:{self._index}:{self._producer_ids}"
            prod = MessageProducer(self, destination, pprod, pid, presettle)
            self._producers.append(prod)
        return prod

    def create_consumer(
        self,
        destination: Destination,
        message_selector: str | None = None,
        no_local: bool = False,
        *,
        _spec: dict[str, Any] | None = None,
    ) -> MessageConsumer:
        self._check_open()
        if destination is None:
            raise InvalidDestinationException("create_consumer needs a destination, got None")
        if not isinstance(destination, Destination):
            raise InvalidDestinationException(f"not a Destination: {destination!r}")
        self._check_consumer_destination(destination)  # temporary: only its connection consumes
        selector_obj = None
        if message_selector is not None and message_selector.strip() == "":
            message_selector = None
        if message_selector is not None:
            from ..selector import Selector

            selector_obj = Selector(message_selector)  # InvalidSelectorException before any frame
        conn = self._connection
        cfg = conn._config
        prefetch = cfg.prefetch.for_destination(destination.is_topic, bool(_spec and _spec.get("durable")))
        # (a transacted session's consumers are never presettled: their acks are the transaction)
        presettle = self._mode == self.NO_ACKNOWLEDGE or (
            not self.transacted and cfg.presettle.consumer(destination.is_topic))
        spec = ConsumerSpec(destination, message_selector, no_local, prefetch, presettle, **(_spec or {}))
        queue = LocalQueue()
        queue.running = conn._started
        pcons = conn._provider_wait(self._p.create_consumer(spec, queue), conn._request_timeout(),
                                    "create_consumer")
        local = selector_obj if not getattr(pcons, "selector_applied_remotely", True) else None
        if local is not None and not destination.is_topic:
            # filtering a shared queue locally would take messages from other consumers
            conn._provider_wait(pcons.close(), conn._close_timeout(), "close consumer")
            raise JMSException(
                f"the peer does not apply message selectors, and on a queue ({destination}) the "
                "client cannot filter without taking other consumers' messages; selectors on "
                "topics are evaluated by the client instead"
            )
        cons = MessageConsumer(self, destination, message_selector, no_local, queue, pcons, local)
        with self._lock:
            if self._closed:
                pcons.close()
                raise IllegalStateException("the session is closed")
            self._consumers.append(cons)
        return cons

    # -- delivery (called on the receiving thread) ---------------------------------------------
    def _prepare(self, consumer: MessageConsumer, inbound: Any, body: bool = True) -> Message | None:
        """Decode and vet one inbound message; None if it was unreadable/expired/over-delivered/
        filtered (and settled as such). ``body=False``: from its headers and properties only."""
        msg = decode_or_poison(inbound, f"consumer on {consumer.destination}", body)
        if msg is None:
            consumer._p.acknowledge(inbound, POISON)
            return None
        props = msg._props
        if inbound.local_redeliveries:
            msg._redelivered = True
            base = props.get("JMSXDeliveryCount")
            props["JMSXDeliveryCount"] = _int_like(base, (int(base) if base else 1) + 1)
            inbound.local_redeliveries = 0  # counted into the message now
        cfg = self._connection._config
        if cfg.local_message_expiry and msg._expiration and msg._expiration <= time.time() * 1000:
            consumer._p.acknowledge(inbound, MODIFIED_FAILED_UNDELIVERABLE)
            return None
        if self._redelivery_max >= 0:
            count = props.get("JMSXDeliveryCount")
            if count is not None and int(count) - 1 > self._redelivery_max:
                consumer._p.acknowledge(inbound, self._redelivery_outcome)
                return None
        sel = consumer._local_selector
        if sel is not None and not sel.matches(msg):
            consumer._p.acknowledge(inbound, ACCEPTED if consumer.destination.is_topic
                                    else MODIFIED_FAILED_UNDELIVERABLE)
            return None
        msg._mark_received()
        if not self._validate_names:
            msg._validate_names = False  # writable again after clear_properties()
        mode = self._mode
        if mode == self.CLIENT_ACKNOWLEDGE:
            # the outcome chosen on the message acknowledged applies to all the session settles
            msg._ack_callback = lambda: self._acknowledge_delivered(ack_type_of(msg))
        elif mode == self.INDIVIDUAL_ACKNOWLEDGE:
            msg._ack_callback = lambda: self._ack_one(consumer, inbound, msg)
        return msg

    def _after_receive(self, consumer: MessageConsumer, inbound: Any, msg: Message) -> None:
        mode = self._mode
        if mode in (self.AUTO_ACKNOWLEDGE, self.DUPS_OK_ACKNOWLEDGE, self.SESSION_TRANSACTED):
            consumer._p.acknowledge(inbound, _auto_outcome(msg))
            if mode == self.SESSION_TRANSACTED:
                with self._lock:
                    self._delivered.append((consumer, inbound))
        elif mode in (self.CLIENT_ACKNOWLEDGE, self.INDIVIDUAL_ACKNOWLEDGE):
            with self._lock:
                self._delivered.append((consumer, (inbound, msg)))

    def _ack_one(self, consumer: MessageConsumer, inbound: Any, msg: Message) -> None:
        self._check_open()
        outcome = ack_type_of(msg)  # an invalid JMS_AMQP_ACK_TYPE refuses before anything settles
        with self._lock:
            self._delivered = [d for d in self._delivered if d[1][0] is not inbound]
        consumer._p.acknowledge(inbound, outcome)
        self._close_deferred()

    # -- listeners -----------------------------------------------------------------------------
    def _set_listener(self, consumer: MessageConsumer, listener: ListenerLike | None) -> None:
        with self._lock:
            consumer._listener = listener
            if listener is None:
                consumer._queue.on_arrival = None
                return
            if self._dispatcher is None:
                self._dispatcher = Dispatcher(self, f"amqp-jms-session-{self._index}")
            d = self._dispatcher
            consumer._queue.on_arrival = lambda: d.notify(consumer)
            for _ in range(len(consumer._queue)):
                d.notify(consumer)
        self._pull_for_listener(consumer)

    def _pull_for_listener(self, consumer: MessageConsumer) -> None:
        """Prefetch 0 with a listener: keep one credit out while the listener is ready."""
        if consumer._prefetch == 0 and consumer._listener is not None and not consumer._closed \
                and consumer._queue.running and self._connection._provider_alive():
            consumer._p.pull(drain=False)

    def _dispatch_one(self, consumer: MessageConsumer) -> None:
        """On the dispatcher thread: hand one queued message to the consumer's listener."""
        listener = consumer._listener
        if listener is None or consumer._closed:
            return
        inbound = consumer._queue.pop_nowait()
        if inbound is None:
            return
        if consumer._prefetch > 0:
            consumer._p.taken()
        msg = self._prepare(consumer, inbound)
        if msg is None:
            self._pull_for_listener(consumer)
            return
        mode = self._mode
        on_message: Any = getattr(listener, "on_message", listener)
        self._current = (consumer, inbound)
        self._recovered_current = False
        try:
            on_message(msg)
        except Exception:
            self._current = None
            if self._recovered_current:
                return
            if mode in (self.AUTO_ACKNOWLEDGE, self.DUPS_OK_ACKNOWLEDGE):
                inbound.local_redeliveries += 1
                consumer._queue.push_front([inbound])
                if self._dispatcher is not None:
                    self._dispatcher.notify(consumer)
                return
            import logging

            logging.getLogger(__name__).exception("message listener raised")
        self._current = None
        if self._recovered_current:
            return  # recover() inside the listener already queued it again
        if not self._closed:
            self._after_receive(consumer, inbound, msg)
            self._pull_for_listener(consumer)

    # -- acknowledgement, recovery, transactions -----------------------------------------------
    def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: accept every message this session has delivered so far."""
        self._acknowledge_delivered(ACCEPTED)

    def _acknowledge_delivered(self, outcome: int) -> None:
        """Settle every message delivered so far with ``outcome`` (``message.acknowledge()``
        passes the ``JMS_AMQP_ACK_TYPE`` of the message it was called on, as Qpid JMS does)."""
        self._check_open()
        if self._mode not in (self.CLIENT_ACKNOWLEDGE, self.INDIVIDUAL_ACKNOWLEDGE):
            return
        with self._lock:
            delivered, self._delivered = self._delivered, []
        for consumer, (inbound, _msg) in delivered:
            consumer._p.acknowledge(inbound, outcome)
        self._close_deferred()

    def _close_deferred(self) -> None:
        """Detach the links of closed consumers that have nothing left to acknowledge."""
        with self._lock:
            if not self._deferred:
                return
            pending = {id(c) for c, _ in self._delivered}
            done = [c for c in self._deferred if id(c) not in pending]
            self._deferred = [c for c in self._deferred if id(c) in pending]
        conn = self._connection
        for c in done:
            if conn._provider_alive():
                try:
                    conn._provider_wait(c._p.close(), conn._close_timeout(), "close consumer")
                except JMSException:
                    pass

    def recover(self) -> None:
        """Stop, redeliver every unacknowledged message (JMSRedelivered true), in order."""
        self._check_open()
        if self.transacted:
            raise IllegalStateException("recover() is not allowed on a transacted session")
        with self._lock:
            delivered, self._delivered = self._delivered, []
        current = self._current
        d = self._dispatcher
        if current is not None and d is not None and d.on_own_thread():
            # called from a listener: the message it is handling is redelivered too (last)
            delivered.append(current)
            self._recovered_current = True
        by_consumer: dict[int, tuple[MessageConsumer, list[Any]]] = {}
        for consumer, item in delivered:
            inbound = item[0] if isinstance(item, tuple) else item
            inbound.local_redeliveries += 1
            inbound._msg = None  # decode again: a fresh, read-only copy
            by_consumer.setdefault(id(consumer), (consumer, []))[1].append(inbound)
        for consumer, items in by_consumer.values():
            if consumer._closed:  # a closed consumer's link waited for these: give them back
                for inbound in items:
                    consumer._p.acknowledge(inbound, MODIFIED_FAILED)
                continue
            consumer._queue.push_front(items)
            if consumer._listener is not None and self._dispatcher is not None:
                for _ in items:
                    self._dispatcher.notify(consumer)
        self._close_deferred()

    def commit(self) -> None:
        self._check_open()
        if not self.transacted:
            raise IllegalStateException("commit() called on a session that is not transacted")
        wait_for_completions(self, "commit")
        conn = self._connection
        with self._lock:
            self._delivered.clear()
        conn._provider_wait(self._p.commit(), conn._request_timeout(), "commit")

    def rollback(self) -> None:
        self._check_open()
        if not self.transacted:
            raise IllegalStateException("rollback() called on a session that is not transacted")
        wait_for_completions(self, "rollback")
        conn = self._connection
        with self._lock:
            self._delivered.clear()
        consumers = list(self._consumers)

        def prefetched() -> list[Any]:
            out: list[Any] = []
            for c in consumers:
                out.extend(c._queue.take_all())
            return out

        conn._provider_wait(self._p.rollback(prefetched), conn._request_timeout(), "rollback")

    # -- lifecycle -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("the session is closed")
        self._connection._check_open()

    def _set_running(self, running: bool) -> None:
        for c in list(self._consumers):
            c._queue.set_running(running)
        if running and self._dispatcher is not None:
            self._dispatcher.resume()
        if running:
            for c in list(self._consumers):
                self._pull_for_listener(c)

    def _stopped(self) -> None:
        """After stop (listeners idle): pull consumers give their credit and messages back."""
        for c in list(self._consumers):
            if c._prefetch == 0:
                self._take_back_pull(c)

    def _take_back_pull(self, consumer: MessageConsumer) -> None:
        """Stopped with a pull (prefetch 0) consumer: take its credit back and release what it
        brought, so other consumers get those messages while this one is stopped (a receive
        waiting across the stop pulls again on start)."""
        conn = self._connection
        if consumer._closed or not conn._provider_alive():
            return
        try:
            conn._provider_wait(consumer._p.drain(), conn._config.seconds(conn._config.drain_timeout_ms),
                                "stop (drain)")
        except JMSException:
            pass  # the credit stays out; what arrives waits for start or is released at close
        self._return_unseen(consumer)

    def _return_unseen(self, consumer: MessageConsumer) -> None:
        """Give back what the consumer prefetched and the application never saw (released; a
        message recover() queued again counts its earlier delivery: modified-failed)."""
        for inbound, outcome in consumer._queue.give_back():
            consumer._p.acknowledge(inbound, outcome)

    def _close_consumer(self, consumer: MessageConsumer) -> None:
        if consumer._closed:
            return
        d = self._dispatcher
        current = self._current
        if d is not None and d.on_own_thread() and current is not None and current[0] is consumer:
            # JMS 2.0 MessageConsumer.close: it would wait for the very listener call it is in
            raise IllegalStateException("a message listener must not close its own consumer")
        consumer._closed = True
        consumer._queue.close()
        d = self._dispatcher
        if d is not None and not d.on_own_thread():
            d.wait_idle()
        conn = self._connection
        if self._defer_close(consumer):
            return
        try:
            if conn._provider_alive():  # the link gives back what was never seen (LocalQueue.give_back)
                conn._provider_wait(consumer._p.close(), conn._close_timeout(), "close consumer")
        finally:
            with self._lock:
                if consumer in self._consumers:
                    self._consumers.remove(consumer)

    def _defer_close(self, consumer: MessageConsumer) -> bool:
        """CLIENT/INDIVIDUAL_ACKNOWLEDGE: a consumer closed with delivered, unacknowledged
        messages keeps its link (no more credit; the unseen messages given back) so that a later
        ``acknowledge()`` still settles them, as in Qpid JMS. True when deferred."""
        if self._mode not in (self.CLIENT_ACKNOWLEDGE, self.INDIVIDUAL_ACKNOWLEDGE):
            return False
        conn = self._connection
        with self._lock:
            if not any(c is consumer for c, _ in self._delivered) or not conn._provider_alive():
                return False
            self._deferred.append(consumer)
            if consumer in self._consumers:
                self._consumers.remove(consumer)
        try:
            conn._provider_wait(consumer._p.stop(), conn._close_timeout(), "close consumer (stop)")
        except JMSException:
            pass  # what still arrives is released when the link goes
        self._return_unseen(consumer)
        return True

    def _close_producer(self, producer: MessageProducer) -> None:
        conn = self._connection
        try:
            if conn._provider_alive():
                conn._provider_wait(producer._p.close(), conn._close_timeout(), "close producer")
        finally:
            with self._lock:
                if producer in self._producers:
                    self._producers.remove(producer)

    def close(self) -> None:
        """Close consumers and producers, roll back an open transaction, end the session."""
        if self._closed:
            return
        d = self._dispatcher
        if d is not None and d.on_own_thread():
            raise IllegalStateException("a message listener must not close its own session")
        wait_for_completions(self, "close")  # JMS 4.6.2: incomplete async sends complete first
        for c in list(self._consumers):
            c._closed = True
            c._queue.close()
        if d is not None:
            d.stop()
        self._closed = True
        conn = self._connection
        consumers = list(self._consumers)
        with self._lock:
            self._delivered.clear()
            self._deferred.clear()  # their links go with the session

        def prefetched() -> list[Any]:
            out: list[Any] = []
            for c in consumers:
                out.extend(c._queue.take_all())
            return out

        try:
            for c in consumers:
                self._close_consumer_quiet(c)
            for p in list(self._producers):
                p._closed = True
            if conn._provider_alive():
                # transacted (JMS 2.0 Session.close): the provider releases prefetched messages
                # and rolls back the open transaction (discharge fail=true) before detaching the
                # links. Not when the whole connection is closing: its close rolls back anyway.
                rollback = self.transacted and not conn._closed
                conn._provider_wait(self._p.close(prefetched if rollback else None),
                                    conn._close_timeout(), "close session")
        finally:
            conn._forget_session(self)

    def _close_consumer_quiet(self, c: MessageConsumer) -> None:
        with self._lock:
            if c in self._consumers:
                self._consumers.remove(c)

    def _connection_failed(self, exc: JMSException) -> None:
        for c in list(self._consumers):
            c._queue.close(exc)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _auto_outcome(msg: Any) -> int:
    """The outcome of a message the session acknowledges by itself: its ``JMS_AMQP_ACK_TYPE``
    if a listener chose a valid one, else accepted (nobody is there to refuse an invalid one to)."""
    try:
        return ack_type_of(msg)
    except JMSException:
        return ACCEPTED


def _int_like(template: Any, value: int) -> Any:
    """``value`` with the typed-int class of ``template`` (JMSXDeliveryCount is an Int)."""
    from ..types import Int

    return type(template)(value) if template is not None and type(template) is not bool else Int(value)

