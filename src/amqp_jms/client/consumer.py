"""MessageConsumer: receive/receive_no_wait/listener, iteration (its local prefetch queue is
:mod:`amqp_jms.client.local_queue`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from ..destination import Destination
from ..exceptions import IllegalStateException, JMSException
from .acknowledgement import hands_back_refused
from .local_queue import LocalQueue
from .receive_policy import (
    DELIVER,
    DELIVER_PREFETCHED,
    DRAIN,
    PULL,
    PULL_DRAIN,
    TAKE,
    TAKE_SINCE,
    TOP_UP,
    WAIT_RUNNING,
    Op,
    ReceiveFlow,
    ready_prefetched,
    receive_flow,
    receive_timeout,
)
from .waits import ProviderWait

if TYPE_CHECKING:
    from ..message import Message
    from ..provider.base import Inbound, ProviderConsumer
    from .session import Session

T = TypeVar("T")

__all__ = ["EncodedMessage", "MessageConsumer", "MessageListener"]


class MessageListener(Protocol):
    def on_message(self, message: Message) -> None: ...


ListenerLike = MessageListener | Callable[["Message"], None]


class EncodedMessage(NamedTuple):
    """A received message and the exact bytes it arrived as (``receive_encoded``)."""

    message: Message
    #: the message as the peer sent it (for AMQP: the encoded sections of the transfer)
    data: bytes


class MessageConsumer:
    """Receives messages from one destination (JMS 4.5 / 8.7).

    ``receive(timeout_ms)`` blocks (None or 0 = forever, as in JMS), ``receive_no_wait()`` does
    not; or ``set_message_listener`` for asynchronous delivery on the session's thread. A
    consumer is iterable: ``for message in consumer`` receives until the consumer is closed.
    """

    def __init__(
        self,
        session: Session,
        destination: Destination,
        selector: str | None,
        no_local: bool,
        queue: LocalQueue,
        pconsumer: ProviderConsumer,
        local_selector: Any,
    ) -> None:
        #: what the client's own objects use of this one (not JMS API)
        self.internal = ConsumerInternal(self)
        self._session = session
        self._destination = destination
        self._selector = selector
        self._no_local = no_local
        self._queue = queue
        self._provider_consumer = pconsumer
        #: the selector, evaluated here for messages whose peer did not apply it
        #: (``ProviderConsumer.selector_applied_remotely``, read per message)
        self._local_selector = local_selector
        self._listener: ListenerLike | None = None
        self._closed = False
        self._prefetch: int = pconsumer.prefetch
        cfg = session.internal.connection.internal.config
        #: jms.receiveLocalOnly / jms.receiveNoWaitLocalOnly: never ask the peer when empty
        self._local_only_wait = cfg.receive_local_only
        self._local_only_nowait = cfg.receive_no_wait_local_only
        self._drain_timeout = cfg.seconds(cfg.drain_timeout_ms)
        queue.on_closed_alone = self._closed_by_peer

    # -- JMS API -------------------------------------------------------------------------------
    def get_message_selector(self) -> str | None:
        return self._selector

    @property
    def destination(self) -> Destination:
        return self._destination

    def get_no_local(self) -> bool:
        return self._no_local

    def get_message_listener(self) -> ListenerLike | None:
        return self._listener

    def set_message_listener(self, listener: ListenerLike | None) -> None:
        self._check_open()
        self._listener = listener
        self._session.internal.listener_changed(self)

    def receive(self, timeout_ms: int | None = None) -> Message | None:
        """The next message, waiting up to ``timeout_ms`` (None or 0: until one arrives or close)."""
        return self._receive(receive_timeout(timeout_ms))

    def receive_no_wait(self) -> Message | None:
        return self._receive(0.0)

    def receive_body(self, cls: type[T], timeout_ms: int | None = None) -> T | None:
        """The next message's body as ``cls`` (``str``, ``bytes``, ``dict``, ``list``...), waiting
        up to ``timeout_ms`` (None or 0: until one arrives); None when none arrived.

        JMS 2.0 puts ``receiveBody`` on JMSConsumer only; it is here too because it is the typed
        path: ``receive`` returns ``Message | None`` and a ``mypy --strict`` caller must narrow it
        to a TextMessage, ``receive_body(str, 5000)`` is a ``str | None``. A body of another
        type raises ``MessageFormatException``; under AUTO/DUPS_OK the message is then not
        acknowledged and the next receive returns it."""
        body: T | None = self._receive_body(cls, receive_timeout(timeout_ms))
        return body

    def _receive_local(self) -> Message | None:
        """``receive_no_wait`` that never asks the peer: a message that has already arrived, or
        None (a pull consumer still pulls, with drain: it has nothing local). For the asyncio
        face, whose ``receive_no_wait`` must not wait on the event loop."""
        return self._receive(0.0, ask_peer=False)

    def _receive_encoded_local(self, *, decode_body: bool = True) -> EncodedMessage | None:
        """``receive_encoded_no_wait`` that never asks the peer (see ``receive_local``)."""
        return self._receive_encoded(0.0, decode_body, ask_peer=False)

    @property
    def closed(self) -> bool:
        return self._closed

    def receive_encoded(
        self, timeout_ms: int | None = None, *, decode_body: bool = True
    ) -> EncodedMessage | None:
        """``receive``, also handing back the bytes the message arrived as.

        Why: a pipeline that must keep what it received before acknowledging it (a write-ahead
        log, an archive) needs the message exactly as the broker sent it; re-encoding the decoded
        message would cost as much again and could differ (annotations the client does not
        model). Everything else is ``receive``: same vetting (expiry, redelivery limit, local
        selector), and the message counts as delivered to the session (acknowledged per its
        mode; a transacted session accepts it on commit). A message that cannot be read as a JMS
        message (a poison message) is never returned: it is settled
        ``modified(delivery-failed, undeliverable-here)``, logged once at WARNING, and the
        receive goes on to the next one, exactly as ``receive`` does.

        ``decode_body=False``: the message is vetted from its headers and properties only (its
        body's framing checked, its body-type annotation vetted, its content not decoded), and
        ``message`` is a plain ``Message`` carrying them: for a pipeline that stores the bytes
        and decodes them elsewhere (the Spark source's executors), which then meets a body that
        does not decode (text not in its charset) itself.
        """
        return self._receive_encoded(receive_timeout(timeout_ms), decode_body)

    def receive_encoded_no_wait(self, *, decode_body: bool = True) -> EncodedMessage | None:
        """``receive_no_wait``, also handing back the bytes (see ``receive_encoded``)."""
        return self._receive_encoded(0.0, decode_body)

    def drain(self) -> bool:
        """Ask the peer to send now everything it has for this consumer, and wait for its answer.

        Why: with ``jms.receiveNoWaitLocalOnly`` (which pipelines set, so that polling costs no
        round trip) ``receive_no_wait`` only looks at what has already arrived, so ``None`` can
        mean "not here yet" (a fresh consumer's first transfer, a credit refill in flight). After
        ``drain`` returns, every message the peer had for this consumer's credit is local, so an
        empty ``receive_no_wait`` means the destination had nothing for it when the peer
        answered: what a "read what is there now, then stop" job needs instead of a guessed
        wait. The credit is topped up again afterwards. With prefetch 0 this is a no-op
        (``receive_no_wait`` drains by itself). Raises ``JMSException`` when the peer does not
        answer within ``amqp.drainTimeout``.

        Returns False, at once, when the peer cannot be asked (the provider knows it fails on
        drains: RabbitMQ before 3.12, see docs/client.md): an empty ``receive_no_wait`` then
        proves nothing, and the caller must fall back to waiting for a quiet spell.
        """
        self._check_open()
        if self._listener is not None:
            raise IllegalStateException("cannot drain: the consumer has a message listener")
        if not self._provider_consumer.drain_on_empty:
            return False
        if self._prefetch <= 0:
            return True
        conn = self._session.internal.connection.internal
        conn.wait_provider(self._provider_consumer.drain(), self._drain_timeout, "drain")
        self._provider_consumer.taken()  # the drain used up the credit: let the provider top it up again
        return True

    def close(self) -> None:
        if self._closed:
            return
        self._session.internal.close_consumer(self)

    def __iter__(self) -> Iterator[Message]:
        while True:
            m = self.receive()
            if m is None:
                return
            yield m

    def __enter__(self) -> MessageConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("the consumer is closed")
        failure = self._queue.failure
        if failure is not None:
            # the link ended under the consumer: it cannot receive again (Qpid JMS's checkClosed)
            raise IllegalStateException(
                f"the consumer was closed due to an unrecoverable error: {failure.reason}",
                failure.error_code, failure)
        self._session.internal.check_open()

    def _closed_by_peer(self, exc: JMSException) -> None:
        """The peer closed this consumer's link alone (provider thread). A consumer with a
        MessageListener has nobody calling it to hear of it, so the connection's
        ExceptionListener does (Qpid JMS ``JmsSession.consumerClosed``)."""
        if self._listener is not None:
            self._session.internal.connection.internal.on_async_exception(exc)

    def _receive(self, timeout: float | None, ask_peer: bool = True) -> Message | None:
        got = self._receive_inbound(timeout, ask_peer)
        return None if got is None else got[1]

    def _receive_encoded(self, timeout: float | None, body: bool = True, ask_peer: bool = True
                         ) -> EncodedMessage | None:
        got = self._receive_inbound(timeout, ask_peer, body=body)
        return None if got is None else self._encoded(*got)

    @staticmethod
    def _encoded(inbound: Inbound, message: Message) -> EncodedMessage:
        """A received message with the bytes it arrived as (``receive_encoded``, both faces)."""
        data = inbound.data
        if data is None:
            raise IllegalStateException("this provider does not keep the bytes a message arrived as")
        return EncodedMessage(message, bytes(data))

    def _receive_body(self, cls: type, timeout: float | None, ask_peer: bool = True) -> Any:
        """The next message's body as ``cls`` (JMSConsumer.receive_body). A body of another
        type raises ``MessageFormatException``; under AUTO/DUPS_OK the message then counts as
        never received: not acknowledged, and back at the front for the next receive (Qpid
        JMS). In the other modes it was delivered (acknowledged by commit/acknowledge)."""
        body: list[Any] = []

        def take(msg: Message) -> None:
            body.append(msg.get_body(cls))

        got = self._receive_inbound(timeout, ask_peer, vet=take)
        return None if got is None else body[0]

    def _receive_inbound(self, timeout: float | None, ask_peer: bool = True,
                         vet: Callable[[Message], None] | None = None,
                         body: bool = True) -> tuple[Any, Message] | None:
        """The blocking driver of the receive policy (``client.receive_policy``): waits on the
        local queue's condition and on the provider's futures. Keeps the provider's inbound
        (for ``receive_encoded``); ``vet`` runs before the message counts as received
        (``_receive_body``); ``body=False`` vets from the headers and
        properties only (``receive_encoded``)."""
        self._check_can_receive()
        q = self._queue
        inbound = ready_prefetched(q, self._prefetch)  # the common case, without the flow
        if inbound is not None:
            self._provider_consumer.taken()
            msg = self._deliver(inbound, vet, body)
            if msg is not None:
                return inbound, msg
        flow = self._receive_flow(timeout, ask_peer)
        try:
            step = next(flow)
            while True:
                op, arg = step
                if op is TAKE:
                    got = q.get(arg)
                elif op is DELIVER_PREFETCHED:
                    self._provider_consumer.taken()
                    msg = self._deliver(arg, vet, body)
                    if msg is not None:
                        return arg, msg
                    got = None
                elif op is DELIVER:
                    msg = self._deliver(arg, vet, body)
                    if msg is not None:
                        return arg, msg
                    got = None
                elif op is TOP_UP:
                    self._provider_consumer.taken()
                    got = None
                elif op is TAKE_SINCE:
                    got = q.get(arg[1], stops=arg[0])
                elif op is WAIT_RUNNING:
                    got = q.wait_running(arg)
                else:  # PULL, PULL_DRAIN, DRAIN: wait for the peer up to amqp.drainTimeout
                    got = self._request(op, arg).block()
                step = flow.send(got)
        except StopIteration:
            return None

    # -- what the receive drivers share (this one, aio.AsyncConsumer): ConsumerInternal --------
    def _check_can_receive(self) -> None:
        """Raise unless a synchronous receive is allowed: open, and no message listener."""
        self._check_open()
        if self._listener is not None:
            raise IllegalStateException("cannot receive synchronously: the consumer has a message listener")

    def _receive_flow(self, timeout: float | None, ask_peer: bool = True) -> ReceiveFlow:
        """The steps of one receive (``client.receive_policy``) with this consumer's settings."""
        local_only = self._local_only_wait if timeout is None or timeout > 0 else self._local_only_nowait
        return receive_flow(self._queue, self._prefetch, timeout, ask_peer,
                            self._provider_consumer.drain_on_empty, local_only)

    def _request(self, op: Op, what: str) -> ProviderWait:
        """Start the provider request of a ``PULL``, ``PULL_DRAIN`` or ``DRAIN`` step (``what``
        names it); the wait for the peer's answer, up to ``amqp.drainTimeout``."""
        if op is PULL:
            fut = self._provider_consumer.pull(drain=False)
        elif op is PULL_DRAIN:
            fut = self._provider_consumer.pull(drain=True)
        elif op is DRAIN:
            fut = self._provider_consumer.drain()
        else:
            raise ValueError(f"not a provider request: {op!r}")
        provider = self._session.internal.connection.internal.opened_provider()
        return ProviderWait(fut, self._drain_timeout, what, provider)

    def _top_up(self) -> None:
        """A ``TOP_UP`` step: a prefetched message was taken (or a drain spent the credit)."""
        self._provider_consumer.taken()

    def _deliver(self, inbound: Inbound, vet: Callable[[Message], None] | None = None,
                body: bool = True) -> Message | None:
        """A ``DELIVER`` step: the message handed over (counted as received), or None when the
        session's vetting settled it away (unreadable, expired, redelivered too often, filtered)."""
        msg = self._session.internal.prepare_delivery(self, inbound, body)
        if msg is not None:
            self._hand_over(inbound, msg, vet)
        return msg

    def __str__(self) -> str:
        return f"consumer on {self._destination}"

    def _mark_closed(self) -> None:
        """The session closes this consumer (its link goes with the session)."""
        self._closed = True

    def _receive_body_within(self, cls: type, timeout: float | None) -> Any:
        """``JMSConsumer.receive_body``: the next message's body as ``cls``, waiting up to
        ``timeout`` seconds (None: until one arrives; 0: no wait)."""
        return self._receive_body(cls, timeout)

    def _receive_body_local(self, cls: type) -> Any:
        """``receive_body_within(cls, 0)`` that never asks the peer (see ``receive_local``)."""
        return self._receive_body(cls, 0.0, ask_peer=False)

    def _hand_over(
        self, inbound: Inbound, msg: Message, vet: Callable[[Message], None] | None = None
    ) -> None:
        """The message counts as received (acknowledged per the session's mode) unless ``vet``
        refuses it under AUTO/DUPS_OK: then it goes back to the front of the queue, unacknowledged,
        and the refusal propagates (``receive_body`` of a body of another type)."""
        sess = self._session
        if vet is not None:
            try:
                vet(msg)
            except JMSException:
                if hands_back_refused(sess.acknowledge_mode):
                    inbound.reset()  # read again from its bytes next time
                    self._queue.push_front([inbound])
                    raise
                sess.internal.after_receive(self, inbound, msg)
                raise
        sess.internal.after_receive(self, inbound, msg)


class ConsumerInternal:
    """The consumer's side for its session, the simplified API and the asyncio face (the receive policy's
    steps): not JMS API. ``MessageConsumer.internal``."""

    __slots__ = ("_owner",)

    def __init__(self, owner: MessageConsumer) -> None:
        self._owner = owner

    def receive_local(self) -> Message | None:
        """``receive_no_wait`` that never asks the peer: a message that has already arrived, or
        None (a pull consumer still pulls, with drain: it has nothing local). For the asyncio
        face, whose ``receive_no_wait`` must not wait on the event loop."""
        return self._owner._receive_local()

    def receive_encoded_local(self, *, decode_body: bool = True) -> EncodedMessage | None:
        """``receive_encoded_no_wait`` that never asks the peer (see ``receive_local``)."""
        return self._owner._receive_encoded_local(decode_body=decode_body)

    def check_open(self) -> None:
        self._owner._check_open()

    def encoded(self, inbound: Inbound, message: Message) -> EncodedMessage:
        """A received message with the bytes it arrived as (``receive_encoded``, both faces)."""
        return self._owner._encoded(inbound, message)

    def check_can_receive(self) -> None:
        """Raise unless a synchronous receive is allowed: open, and no message listener."""
        self._owner._check_can_receive()

    def receive_flow(self, timeout: float | None, ask_peer: bool = True) -> ReceiveFlow:
        """The steps of one receive (``client.receive_policy``) with this consumer's settings."""
        return self._owner._receive_flow(timeout, ask_peer)

    def request(self, op: Op, what: str) -> ProviderWait:
        """Start the provider request of a ``PULL``, ``PULL_DRAIN`` or ``DRAIN`` step (``what``
        names it); the wait for the peer's answer, up to ``amqp.drainTimeout``."""
        return self._owner._request(op, what)

    def top_up(self) -> None:
        """A ``TOP_UP`` step: a prefetched message was taken (or a drain spent the credit)."""
        self._owner._top_up()

    def deliver(
        self,
        inbound: Inbound,
        vet: Callable[[Message], None] | None = None,
        body: bool = True,
    ) -> Message | None:
        """A ``DELIVER`` step: the message handed over (counted as received), or None when the
        session's vetting settled it away (unreadable, expired, redelivered too often, filtered)."""
        return self._owner._deliver(inbound, vet, body)

    @property
    def provider_consumer(self) -> ProviderConsumer:
        """The provider's link for this consumer (the session settles through it)."""
        return self._owner._provider_consumer

    @property
    def prefetch(self) -> int:
        return self._owner._prefetch

    @property
    def local_selector(self) -> Any:
        """The selector the client evaluates itself (the peer does not filter), or None."""
        return self._owner._local_selector

    def mark_closed(self) -> None:
        """The session closes this consumer (its link goes with the session)."""
        self._owner._mark_closed()

    def receive_body_within(self, cls: type, timeout: float | None) -> Any:
        """``JMSConsumer.receive_body``: the next message's body as ``cls``, waiting up to
        ``timeout`` seconds (None: until one arrives; 0: no wait)."""
        return self._owner._receive_body_within(cls, timeout)

    def receive_body_local(self, cls: type) -> Any:
        """``receive_body_within(cls, 0)`` that never asks the peer (see ``receive_local``)."""
        return self._owner._receive_body_local(cls)

    @property
    def local_queue(self) -> LocalQueue:
        """The queue the provider delivers into (an asyncio driver waits on its arrivals)."""
        return self._owner._queue

    @property
    def drain_timeout(self) -> float | None:
        """How long a pull or drain waits for the peer (``amqp.drainTimeout``), in seconds."""
        return self._owner._drain_timeout
