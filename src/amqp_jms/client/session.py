"""Session: message and destination factories, producers/consumers, acknowledgement and
local transactions (JMS 2.0 chapter 6 and 4.4), with listener dispatch on one thread.

The session carries out the acknowledgement policy (``client.acknowledgement``: what each mode
settles and when, which outcome a settlement carries, what vetting settles away); the provider
only settles what it is told to.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, TypeVar

from ..destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from ..exceptions import IllegalStateException, InvalidDestinationException, JMSException
from ..message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from ..message._seam import mark_received, set_ack_callback, trust_property_names
from ..provider.base import ConsumerSpec, Inbound, ProducerSpec
from . import acknowledgement as ack
from .acknowledgement import (
    POISON,
    AcknowledgeMode,
    count_local_redelivery,
    decode_or_poison,
    settle_away_outcome,
)
from .completion import Completions, wait_for_completions
from .consumer import MessageConsumer
from .dispatch import Dispatcher, ListenerDispatch
from .local_queue import LocalQueue
from .producer import MessageProducer
from .server_session import ServerSessionSupport
from .session_features import SessionFeatures, SubscriptionLink

if TYPE_CHECKING:
    from ..provider.base import ProviderSession
    from .browser import QueueBrowser
    from .connection import Connection

__all__ = ["Session"]

M = TypeVar("M", bound="Message")


class Session:
    """A single-threaded context for producing and consuming messages."""

    SESSION_TRANSACTED = ack.SESSION_TRANSACTED
    AUTO_ACKNOWLEDGE = ack.AUTO_ACKNOWLEDGE
    CLIENT_ACKNOWLEDGE = ack.CLIENT_ACKNOWLEDGE
    DUPS_OK_ACKNOWLEDGE = ack.DUPS_OK_ACKNOWLEDGE
    NO_ACKNOWLEDGE = ack.NO_ACKNOWLEDGE
    INDIVIDUAL_ACKNOWLEDGE = ack.INDIVIDUAL_ACKNOWLEDGE
    MODES = ack.MODES

    def __init__(self, connection: Connection, psession: ProviderSession, mode: AcknowledgeMode,
                 index: int) -> None:
        #: what the client's own objects use of this one (not JMS API)
        self.internal = SessionInternal(self)
        self._connection = connection
        self._provider_session = psession
        self._mode = mode
        self._index = index
        self._closed = False
        self._lock = threading.RLock()
        self._consumers: list[MessageConsumer] = []
        self._producers: list[MessageProducer] = []
        #: delivered, not yet settled (CLIENT/INDIVIDUAL/transacted), in order
        self._delivered = ack.DeliveredLedger(mode)
        #: CLIENT/INDIVIDUAL consumers closed with delivered, unacknowledged messages: their links
        #: stay until those are acknowledged (or recovered) or the session ends (Qpid JMS)
        self._deferred: list[MessageConsumer] = []
        #: the message listeners (their thread, what one handles now)
        self._listeners = ListenerDispatch(self)
        #: durable and shared subscriptions, temporary destinations, browsers
        self._features = SessionFeatures(self)
        #: the application server facilities: the session's listener, what a connection consumer loaded
        self._server = ServerSessionSupport(self)
        self._producer_ids = 0
        #: the thread that reports asynchronous sends (``client.completion``), from the first one
        self._completions: Completions | None = None
        cfg = connection.internal.config
        self._redelivery_max = cfg.redelivery.max_redeliveries
        self._redelivery_outcome = ack.OUTCOME_BY_NAME[cfg.redelivery.outcome]
        self._local_expiry = cfg.local_message_expiry
        self._application_acknowledges = mode in (ack.CLIENT_ACKNOWLEDGE, ack.INDIVIDUAL_ACKNOWLEDGE)
        self._validate_names = cfg.validate_property_names

    # -- properties ----------------------------------------------------------------------------
    def get_transacted(self) -> bool:
        return self._mode == self.SESSION_TRANSACTED

    @property
    def transacted(self) -> bool:
        return self._mode == self.SESSION_TRANSACTED

    def get_acknowledge_mode(self) -> AcknowledgeMode:
        return self._mode

    @property
    def acknowledge_mode(self) -> AcknowledgeMode:
        return self._mode

    # -- message factories ---------------------------------------------------------------------
    def create_message(self) -> Message:
        self._check_open()
        return self._configured(Message())

    def create_text_message(self, text: str | None = None) -> TextMessage:
        self._check_open()
        return self._configured(TextMessage(text))

    def create_bytes_message(self) -> BytesMessage:
        self._check_open()
        return self._configured(BytesMessage())

    def create_map_message(self) -> MapMessage:
        self._check_open()
        return self._configured(MapMessage())

    def create_stream_message(self) -> StreamMessage:
        self._check_open()
        return self._configured(StreamMessage())

    def create_object_message(self, obj: Any = None) -> ObjectMessage:
        self._check_open()
        return self._configured(ObjectMessage(obj))

    def _configured(self, msg: M) -> M:
        """Apply connection options to a message this session creates or delivers."""
        if not self._validate_names:
            trust_property_names(msg)  # jms.validatePropertyNames=false (Qpid JMS)
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
        conn = self._connection.internal
        if destination is not None and not isinstance(destination, Destination):
            raise InvalidDestinationException(f"not a Destination: {destination!r}")
        is_topic = destination is not None and destination.is_topic
        presettle = conn.config.presettle.producer(is_topic, self.transacted)
        spec = ProducerSpec(destination, presettle)
        pprod = conn.wait_provider(self._provider_session.create_producer(spec), conn.request_timeout(),
                                   "create_producer")
        with self._lock:
            self._producer_ids += 1
            pid = f"{self._connection.connection_id()}:{self._index}:{self._producer_ids}"
            prod = MessageProducer(self, destination, pprod, pid, presettle)
            self._producers.append(prod)
        return prod

    def create_consumer(
        self, destination: Destination, message_selector: str | None = None, no_local: bool = False
    ) -> MessageConsumer:
        return self._open_consumer(destination, message_selector, no_local)

    # -- durable and shared subscriptions, temporary destinations, browsers (SessionFeatures) ---
    def create_durable_subscriber(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> MessageConsumer:
        """An unshared durable subscription (needs a client ID); its consumer (JMS 6.3)."""
        return self._features.subscribe(topic, name, message_selector, no_local, shared=False, durable=True)

    def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> MessageConsumer:
        """JMS 2.0 name of ``create_durable_subscriber``."""
        return self._features.subscribe(topic, name, message_selector, no_local, shared=False, durable=True)

    def create_shared_consumer(
        self, topic: Topic, shared_subscription_name: str, message_selector: str | None = None
    ) -> MessageConsumer:
        """A consumer on a shared non-durable subscription (JMS 2.0): messages are shared out."""
        return self._features.subscribe(topic, shared_subscription_name, message_selector, False,
                                        shared=True, durable=False)

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> MessageConsumer:
        """A consumer on a shared durable subscription (no client ID needed)."""
        return self._features.subscribe(topic, name, message_selector, False, shared=True, durable=True)

    def unsubscribe(self, name: str) -> None:
        """Delete durable subscription ``name``; it must have no active consumer."""
        self._features.unsubscribe(name)

    def create_temporary_queue(self) -> TemporaryQueue:
        """A queue that lives as long as this connection; only this connection may consume."""
        return self._features.create_temporary_queue()

    def create_temporary_topic(self) -> TemporaryTopic:
        return self._features.create_temporary_topic()

    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        """Look at the messages on ``queue`` without consuming them (JMS 4.9)."""
        return self._features.create_browser(queue, message_selector)

    # -- application server facilities (JMS 2.0 8.2.1; client/server_session.py) ----------------
    def set_message_listener(self, listener: Any) -> None:
        """The listener ``run()`` hands loaded messages to (for application servers)."""
        self._server.set_message_listener(listener)

    def get_message_listener(self) -> Any:
        return self._server.get_message_listener()

    def run(self) -> None:
        """Hand every message a connection consumer loaded to the session's listener, in order,
        then return (JMS 8.2.1)."""
        self._server.run()

    # -- what the session's collaborators use: SessionInternal (below) exposes these -----------
    def _open_consumer(
        self,
        destination: Destination,
        message_selector: str | None = None,
        no_local: bool = False,
        subscription: SubscriptionLink | None = None,
    ) -> MessageConsumer:
        """``create_consumer``, or (``subscription``) a durable or shared subscription's consumer."""
        self._check_open()
        if destination is None:
            raise InvalidDestinationException("create_consumer needs a destination, got None")
        if not isinstance(destination, Destination):
            raise InvalidDestinationException(f"not a Destination: {destination!r}")
        self._features.check_consumer_destination(destination)  # temporary: only its connection consumes
        selector_obj = None
        if message_selector is not None and message_selector.strip() == "":
            message_selector = None
        if message_selector is not None:
            from ..selector import Selector

            selector_obj = Selector(message_selector)  # InvalidSelectorException before any frame
        conn = self._connection.internal
        cfg = conn.config
        durable = subscription is not None and subscription.durable
        prefetch = cfg.prefetch.for_destination(destination.is_topic, durable)
        # (a transacted session's consumers are never presettled: their acks are the transaction)
        presettle = self._mode == self.NO_ACKNOWLEDGE or (
            not self.transacted and cfg.presettle.consumer(destination.is_topic))
        spec = ConsumerSpec(destination, message_selector, no_local, prefetch, presettle,
                            *(() if subscription is None else subscription))
        queue = LocalQueue(settled=presettle)
        queue.running = conn.started
        pcons = conn.wait_provider(self._provider_session.create_consumer(spec, queue),
                                   conn.request_timeout(), "create_consumer")
        if selector_obj is not None and not pcons.selector_applied_remotely and not destination.is_topic:
            # filtering a shared queue locally would take messages from other consumers
            conn.wait_provider(pcons.close(), conn.close_timeout(), "close consumer")
            raise JMSException(
                f"the peer does not apply message selectors, and on a queue ({destination}) the "
                "client cannot filter without taking other consumers' messages; selectors on "
                "topics are evaluated by the client instead"
            )
        queue.read_here = pcons.read_here
        cons = MessageConsumer(self, destination, message_selector, no_local, queue, pcons, selector_obj)
        with self._lock:
            if self._closed:
                pcons.close()
                raise IllegalStateException("the session is closed")
            self._consumers.append(cons)
        return cons

    def _listener_changed(self, consumer: MessageConsumer) -> None:
        """``consumer`` set (or cleared) its message listener (``ListenerDispatch``)."""
        self._listeners.listener_changed(consumer)

    # -- delivery (called on the receiving thread) ---------------------------------------------
    def _prepare_delivery(
        self, consumer: MessageConsumer, inbound: Inbound, body: bool = True
    ) -> Message | None:
        """Decode and vet one inbound message; None if it was unreadable/expired/over-delivered/
        filtered (and settled as such). ``body=False``: from its headers and properties only."""
        msg = decode_or_poison(inbound, consumer, body)
        if msg is None:
            consumer.internal.provider_consumer.acknowledge(inbound, POISON)
            return None
        if inbound.local_redeliveries:
            count_local_redelivery(inbound, msg)
        selector = consumer.internal.local_selector
        # per message: a re-attach may move the consumer to a peer that filters or does not
        if selector is not None and consumer.internal.provider_consumer.selector_applied_remotely:
            selector = None
        outcome = settle_away_outcome(msg, time.time, self._local_expiry, self._redelivery_max,
                                      self._redelivery_outcome, selector, consumer)
        if outcome is not None:
            consumer.internal.provider_consumer.acknowledge(inbound, outcome)
            return None
        mark_received(msg)
        if not self._validate_names:
            trust_property_names(msg)  # writable again after clear_properties()
        if self._application_acknowledges:  # CLIENT / INDIVIDUAL: acknowledge() settles
            set_ack_callback(msg, self._delivered.acknowledge_callback(
                self._acknowledge_delivered, lambda: self._ack_one(consumer, inbound, msg), msg))
        return msg

    def _after_receive(self, consumer: MessageConsumer, inbound: Inbound, msg: Message) -> None:
        """The message was handed to the application: settle it now or remember it, per mode."""
        outcome = self._delivered.delivered(consumer, inbound, msg)
        if outcome is not None:
            consumer.internal.provider_consumer.acknowledge(inbound, outcome)

    def _ack_one(self, consumer: MessageConsumer, inbound: Inbound, msg: Message) -> None:
        self._check_open()
        outcome = ack.ack_type_of(msg)  # an invalid JMS_AMQP_ACK_TYPE refuses before anything settles
        self._delivered.take_one(inbound)
        consumer.internal.provider_consumer.acknowledge(inbound, outcome)
        self._close_deferred()

    # -- acknowledgement, recovery, transactions -----------------------------------------------
    def acknowledge(self) -> None:
        """CLIENT_ACKNOWLEDGE: accept every message this session has delivered so far."""
        self._acknowledge_delivered(ack.ACCEPTED)

    def _acknowledge_delivered(self, outcome: int) -> None:
        """Settle every message delivered so far with ``outcome`` (``message.acknowledge()``
        passes the ``JMS_AMQP_ACK_TYPE`` of the message it was called on, as Qpid JMS does)."""
        self._check_open()
        if self._mode not in (self.CLIENT_ACKNOWLEDGE, self.INDIVIDUAL_ACKNOWLEDGE):
            return
        for consumer, inbounds in ack.DeliveredLedger.by_consumer(self._delivered.take_all()):
            consumer.internal.provider_consumer.acknowledge_many(inbounds, outcome)  # one hand-off each
        self._close_deferred()

    def _close_deferred(self) -> None:
        """Detach the links of closed consumers that have nothing left to acknowledge."""
        with self._lock:
            if not self._deferred:
                return
            pending = self._delivered.pending_consumers()
            done = [c for c in self._deferred if id(c) not in pending]
            self._deferred = [c for c in self._deferred if id(c) in pending]
        conn = self._connection.internal
        for c in done:
            if conn.provider_alive():
                try:
                    conn.wait_provider(c.internal.provider_consumer.close(), conn.close_timeout(),
                                       "close consumer")
                except JMSException:
                    pass

    def recover(self) -> None:
        """Stop, redeliver every unacknowledged message (JMSRedelivered true), in order."""
        self._check_open()
        if self.transacted:
            raise IllegalStateException("recover() is not allowed on a transacted session")
        delivered = self._delivered.take_all()
        current = self._listeners.current
        d = self._listeners.dispatcher
        if current is not None and d is not None and d.on_own_thread():
            # called from a listener: the message it is handling is redelivered too (last; it is
            # already among the delivered ones where the application acknowledges)
            if current not in delivered:
                delivered.append(current)
            self._listeners.recovered_current = True
        for consumer, items in ack.DeliveredLedger.recover(delivered):
            if consumer.closed:  # a closed consumer's link waited for these: give them back
                for inbound in items:
                    consumer.internal.provider_consumer.acknowledge(inbound, ack.MODIFIED_FAILED)
                continue
            consumer.internal.local_queue.push_front(items)
            if consumer.get_message_listener() is not None and self._listeners.dispatcher is not None:
                for _ in items:
                    self._listeners.dispatcher.notify(consumer)
        self._close_deferred()

    def commit(self) -> None:
        self._check_open()
        if not self.transacted:
            raise IllegalStateException("commit() called on a session that is not transacted")
        wait_for_completions(self, "commit")
        conn = self._connection.internal
        self._delivered.clear()
        conn.wait_provider(self._provider_session.commit(), conn.request_timeout(), "commit")

    def rollback(self) -> None:
        self._check_open()
        if not self.transacted:
            raise IllegalStateException("rollback() called on a session that is not transacted")
        wait_for_completions(self, "rollback")
        conn = self._connection.internal
        self._delivered.clear()
        consumers = list(self._consumers)

        def prefetched() -> list[Any]:
            out: list[Any] = []
            for c in consumers:
                out.extend(c.internal.local_queue.take_all())
            return out

        conn.wait_provider(self._provider_session.rollback(prefetched), conn.request_timeout(), "rollback")

    # -- the session's side for its consumers, producers, connection: SessionInternal --------

    @property
    def closed(self) -> bool:
        return self._closed

    # -- lifecycle -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("the session is closed")
        self._connection.internal.check_open()

    def _set_running(self, running: bool) -> None:
        for c in list(self._consumers):
            c.internal.local_queue.set_running(running)
        if running and self._listeners.dispatcher is not None:
            self._listeners.dispatcher.resume()
        if running:
            for c in list(self._consumers):
                self._listeners.pull_for_listener(c)

    def _after_stop(self) -> None:
        """After stop (listeners idle): pull consumers give their credit and messages back."""
        for c in list(self._consumers):
            if c.internal.prefetch == 0:
                self._take_back_pull(c)

    def _take_back_pull(self, consumer: MessageConsumer) -> None:
        """Stopped with a pull (prefetch 0) consumer: take its credit back and release what it
        brought, so other consumers get those messages while this one is stopped (a receive
        waiting across the stop pulls again on start)."""
        conn = self._connection.internal
        if consumer.closed or not conn.provider_alive():
            return
        try:
            conn.wait_provider(consumer.internal.provider_consumer.drain(), consumer.internal.drain_timeout,
                               "stop (drain)")
        except JMSException:
            pass  # the credit stays out; what arrives waits for start or is released at close
        self._return_unseen(consumer)

    def _return_unseen(self, consumer: MessageConsumer) -> None:
        """Give back what the consumer prefetched and the application never saw (released; a
        message recover() queued again counts its earlier delivery: modified-failed)."""
        for inbound, outcome in consumer.internal.local_queue.give_back():
            consumer.internal.provider_consumer.acknowledge(inbound, outcome)

    def _close_consumer(self, consumer: MessageConsumer) -> None:
        if consumer.closed:
            return
        d = self._listeners.dispatcher
        current = self._listeners.current
        if d is not None and d.on_own_thread() and current is not None and current[0] is consumer:
            # JMS 2.0 MessageConsumer.close: it would wait for the very listener call it is in
            raise IllegalStateException("a message listener must not close its own consumer")
        consumer.internal.mark_closed()
        consumer.internal.local_queue.close()
        d = self._listeners.dispatcher
        if d is not None and not d.on_own_thread():
            d.wait_idle()
        conn = self._connection.internal
        if self._defer_close(consumer):
            return
        try:
            if conn.provider_alive():  # the link gives back what was never seen (LocalQueue.give_back)
                conn.wait_provider(consumer.internal.provider_consumer.close(), conn.close_timeout(),
                                   "close consumer")
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
        conn = self._connection.internal
        with self._lock:
            if not self._delivered.pending(consumer) or not conn.provider_alive():
                return False
            self._deferred.append(consumer)
            if consumer in self._consumers:
                self._consumers.remove(consumer)
        try:
            conn.wait_provider(consumer.internal.provider_consumer.stop(), conn.close_timeout(),
                               "close consumer (stop)")
        except JMSException:
            pass  # what still arrives is released when the link goes
        self._return_unseen(consumer)
        return True

    def _close_producer(self, producer: MessageProducer) -> None:
        conn = self._connection.internal
        try:
            if conn.provider_alive():
                conn.wait_provider(producer.internal.provider_producer.close(), conn.close_timeout(),
                                   "close producer")
        finally:
            with self._lock:
                if producer in self._producers:
                    self._producers.remove(producer)

    def close(self) -> None:
        """Close consumers and producers, roll back an open transaction, end the session."""
        if self._closed:
            return
        d = self._listeners.dispatcher
        if d is not None and d.on_own_thread():
            raise IllegalStateException("a message listener must not close its own session")
        wait_for_completions(self, "close")  # JMS 4.6.2: incomplete async sends complete first
        for c in list(self._consumers):
            c.internal.mark_closed()
            c.internal.local_queue.close()
        if d is not None:
            d.stop()
        self._closed = True
        conn = self._connection
        consumers = list(self._consumers)
        self._delivered.clear()
        with self._lock:
            self._deferred.clear()  # their links go with the session

        def prefetched() -> list[Any]:
            out: list[Any] = []
            for c in consumers:
                out.extend(c.internal.local_queue.take_all())
            return out

        try:
            for c in consumers:
                self._close_consumer_quiet(c)
            for p in list(self._producers):
                p.internal.mark_closed()
            if conn.internal.provider_alive():
                # transacted (JMS 2.0 Session.close): the provider releases prefetched messages
                # and rolls back the open transaction (discharge fail=true) before detaching the
                # links. Not when the whole connection is closing: its close rolls back anyway.
                rollback = self.transacted and not conn.closed
                conn.internal.wait_provider(self._provider_session.close(prefetched if rollback else None),
                                    conn.internal.close_timeout(), "close session")
        finally:
            conn.internal.forget_session(self)

    def _close_consumer_quiet(self, c: MessageConsumer) -> None:
        with self._lock:
            if c in self._consumers:
                self._consumers.remove(c)

    def _connection_failed(self, exc: JMSException) -> None:
        for c in list(self._consumers):
            c.internal.local_queue.close(exc)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SessionInternal:
    """The session's side for its connection, consumers, producers, collaborators and the asyncio face: not
    JMS API. ``Session.internal``."""

    __slots__ = ("_owner",)

    def __init__(self, owner: Session) -> None:
        self._owner = owner

    def open_consumer(
        self,
        destination: Destination,
        message_selector: str | None = None,
        no_local: bool = False,
        subscription: SubscriptionLink | None = None,
    ) -> MessageConsumer:
        """``create_consumer``, or (``subscription``) a durable or shared subscription's consumer."""
        return self._owner._open_consumer(destination, message_selector, no_local, subscription)

    def listener_changed(self, consumer: MessageConsumer) -> None:
        """``consumer`` set (or cleared) its message listener (``ListenerDispatch``)."""
        self._owner._listener_changed(consumer)

    def prepare_delivery(
        self, consumer: MessageConsumer, inbound: Inbound, body: bool = True
    ) -> Message | None:
        """Decode and vet one inbound message; None if it was unreadable/expired/over-delivered/
        filtered (and settled as such). ``body=False``: from its headers and properties only."""
        return self._owner._prepare_delivery(consumer, inbound, body)

    def after_receive(self, consumer: MessageConsumer, inbound: Inbound, msg: Message) -> None:
        """The message was handed to the application: settle it now or remember it, per mode."""
        self._owner._after_receive(consumer, inbound, msg)

    @property
    def connection(self) -> Connection:
        return self._owner._connection

    @property
    def server(self) -> ServerSessionSupport:
        """What a connection consumer and a server session pool use (``load``, ``take_loaded``,
        ``finish_loaded``, ``loaded_count``: ``client/server_session.py``)."""
        return self._owner._server

    @property
    def completions(self) -> Completions | None:
        """The thread that reports this session's asynchronous sends (``client.completion``),
        made by the first one."""
        return self._owner._completions

    @completions.setter
    def completions(self, completions: Completions) -> None:
        self._owner._completions = completions

    @property
    def index(self) -> int:
        """This session's number in its connection (names its threads)."""
        return self._owner._index

    @property
    def provider_session(self) -> ProviderSession:
        return self._owner._provider_session

    @property
    def dispatcher(self) -> Dispatcher | None:
        """The listener thread, once a listener was set."""
        return self._owner._listeners.dispatcher

    @property
    def consumers(self) -> list[MessageConsumer]:
        """The open consumers (the list itself: callers copy it to iterate)."""
        return self._owner._consumers

    def check_open(self) -> None:
        self._owner._check_open()

    def set_running(self, running: bool) -> None:
        self._owner._set_running(running)

    def after_stop(self) -> None:
        """After stop (listeners idle): pull consumers give their credit and messages back."""
        self._owner._after_stop()

    def close_consumer(self, consumer: MessageConsumer) -> None:
        self._owner._close_consumer(consumer)

    def close_producer(self, producer: MessageProducer) -> None:
        self._owner._close_producer(producer)

    def connection_failed(self, exc: JMSException) -> None:
        self._owner._connection_failed(exc)
