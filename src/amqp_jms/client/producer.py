"""MessageProducer: sets the send-time headers (JMS 3.4.11, mapping 6.1) and sends."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, overload

from ..destination import Destination
from ..exceptions import IllegalStateException, InvalidDestinationException, JMSException
from ..message import DeliveryMode, Message, snapshot
from ..message._seam import stamp_delivery_time, stamp_send
from ..provider.base import DELAYED_DELIVERY
from .completion import RETURN_FUTURE, is_listener
from .waits import ProviderWait

if TYPE_CHECKING:
    from ..message import Message
    from ..provider.base import ProviderProducer
    from .completion import CompletionListenerLike
    from .session import Session

__all__ = ["MessageProducer"]


class MessageProducer:
    """Sends messages to its destination (or, created with ``None``, to one named per send)."""

    def __init__(
        self,
        session: Session,
        destination: Destination | None,
        pproducer: ProviderProducer,
        producer_id: str,
        presettle: bool,
    ) -> None:
        #: what the client's own objects use of this one (not JMS API)
        self.internal = ProducerInternal(self)
        self._session = session
        self._destination = destination
        self._provider_producer = pproducer
        self._id = producer_id
        self._presettle = presettle
        self._seq = 0
        self._closed = False
        self.delivery_mode: int = DeliveryMode.PERSISTENT
        self.priority = 4
        self.time_to_live = 0
        self.delivery_delay = 0
        self.disable_message_id = False
        self.disable_message_timestamp = False
        conn = session.internal.connection.internal
        cfg = conn.config
        #: the connection's provider and JMSXUserID, fixed for its life (a send reads them)
        self._provider = conn.opened_provider()
        self._user_id = conn.sent_user_id()
        self._force_async = cfg.force_async_send
        self._force_sync = cfg.force_sync_send
        self._send_timeout = cfg.seconds(cfg.send_timeout_ms)

    # -- JMS getters/setters -------------------------------------------------------------------
    def get_destination(self) -> Destination | None:
        self._check_open()
        return self._destination

    @property
    def destination(self) -> Destination | None:
        return self._destination

    def set_delivery_mode(self, mode: int) -> None:
        self._check_open()
        if mode not in (DeliveryMode.PERSISTENT, DeliveryMode.NON_PERSISTENT):
            raise JMSException(
                f"invalid delivery mode {mode!r}: use DeliveryMode.PERSISTENT or NON_PERSISTENT"
            )
        self.delivery_mode = mode

    def get_delivery_mode(self) -> int:
        self._check_open()
        return self.delivery_mode

    def set_priority(self, priority: int) -> None:
        self._check_open()
        _check_priority(priority)
        self.priority = priority

    def get_priority(self) -> int:
        self._check_open()
        return self.priority

    def set_time_to_live(self, ttl_ms: int) -> None:
        self._check_open()
        self.time_to_live = int(ttl_ms)

    def get_time_to_live(self) -> int:
        self._check_open()
        return self.time_to_live

    def set_delivery_delay(self, delay_ms: int) -> None:
        self._check_open()
        self.delivery_delay = int(delay_ms)

    def get_delivery_delay(self) -> int:
        self._check_open()
        return self.delivery_delay

    def set_disable_message_id(self, value: bool) -> None:
        self._check_open()
        self.disable_message_id = bool(value)

    def get_disable_message_id(self) -> bool:
        self._check_open()
        return self.disable_message_id

    def set_disable_message_timestamp(self, value: bool) -> None:
        self._check_open()
        self.disable_message_timestamp = bool(value)

    def get_disable_message_timestamp(self) -> bool:
        self._check_open()
        return self.disable_message_timestamp

    def set_message_id_prefix(self, prefix: str) -> None:
        """Number the messages sent from now on ``<prefix>:1``, ``<prefix>:2`` … (JMSMessageID).

        Why: by default ids are ``<producer id>:<n>`` with a fresh producer id per producer, so
        a job that re-sends the same messages after a failure (Spark replays a streaming batch)
        gives them new ids. With a prefix derived from the job (query, batch, partition) a
        replay re-sends the same ids, and a consumer can de-duplicate on JMSMessageID. The
        counter restarts at 1 with each call. ``prefix`` must start with ``ID:`` (JMS 3.4.3).
        """
        self._check_open()
        if not isinstance(prefix, str) or not prefix.startswith("ID:"):
            raise JMSException(f"invalid message id prefix {prefix!r}: must be a str starting with 'ID:'")
        self._id = prefix
        self._seq = 0

    # -- sending -------------------------------------------------------------------------------
    @overload
    def send(self, message: Message, delivery_mode: int = ..., priority: int = ..., time_to_live: int = ...,
             completion_listener: CompletionListenerLike | None = None) -> None: ...

    @overload
    def send(self, message: Message, completion_listener: CompletionListenerLike, /) -> None: ...

    @overload
    def send(self, destination: Destination, message: Message, delivery_mode: int = ..., priority: int = ...,
             time_to_live: int = ..., completion_listener: CompletionListenerLike | None = None) -> None: ...

    @overload
    def send(self, destination: Destination, message: Message, completion_listener: CompletionListenerLike,
             /) -> None: ...

    def send(self, *args: Any, **kwargs: Any) -> None:
        """``send(message[, delivery_mode, priority, time_to_live])`` or, for a producer created
        without a destination, ``send(destination, message[, ...])``. Keywords
        ``delivery_mode``, ``priority``, ``time_to_live`` are accepted too. A
        ``completion_listener`` (keyword, or last positional argument) makes the send
        asynchronous (JMS 4.6.2, see ``amqp_jms.client.completion``)."""
        if len(args) == 1 and not kwargs and self._destination is not None and isinstance(args[0], Message):
            # the usual call, send(message): what the argument parser would find, without it
            self._send_resolved(self._destination, args[0], self.delivery_mode, self.priority,
                                self.time_to_live)
            return
        self._send_resolved(*self._resolve_send_args(args, kwargs))

    def _resolve_send_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                          ) -> tuple[Destination, Any, int, int, int, Any]:
        """``send``'s arguments as ``(destination, message, delivery_mode, priority,
        time_to_live, completion_listener)``, this producer's values filling what is not given.

        The one parser of a send's arguments, for every face (the asyncio producer's too):
        ``(message[, delivery_mode, priority, time_to_live])``, or for a producer created
        without a destination ``(destination, message[, ...])``; those three as keywords; a
        ``completion_listener`` as keyword or last positional argument."""
        kwargs = dict(kwargs)
        listener = kwargs.pop("completion_listener", None)
        if len(args) > 1 and is_listener(args[-1]):
            listener, args = args[-1], args[:-1]
        if args and (isinstance(args[0], Destination) or (args[0] is None and len(args) > 1)):
            destination, message, rest = args[0], args[1] if len(args) > 1 else None, args[2:]
            if self._destination is not None:
                raise TypeError(
                    f"this producer was created for {self._destination}: send(message) without a destination"
                )
            if destination is None:
                raise InvalidDestinationException("send needs a destination for an anonymous producer")
        else:
            if not args:
                raise TypeError("send() needs a message")
            destination, message, rest = self._destination, args[0], args[1:]
            if destination is None:
                raise TypeError("this producer has no destination: use send(destination, message)")
        names = ("delivery_mode", "priority", "time_to_live")
        if len(rest) > 3:
            raise TypeError("send() takes at most delivery_mode, priority and time_to_live after the message")
        opts = dict(zip(names, rest))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"send() got an unexpected keyword argument {k!r}")
            opts[k] = v
        return (destination, message, opts.get("delivery_mode", self.delivery_mode),
                opts.get("priority", self.priority), opts.get("time_to_live", self.time_to_live), listener)

    def _send_resolved(
        self, destination: Destination, message: Any, mode: int, priority: int, ttl: int, listener: Any = None
    ) -> Any:
        """The send every face ends in, its arguments resolved (``resolve_send_args``): set the
        headers and send. ``listener`` is a CompletionListener, or ``RETURN_FUTURE``
        (``amqp_jms.client.completion``) to get the wait for the outcome back instead of
        blocking on it (a ``ProviderWait``, for the asyncio face; None when the send does not
        wait); None waits for the outcome when the send waits (``_waits``)."""
        self._check_open()
        if message is None:
            raise TypeError("message must not be None")
        if not isinstance(message, Message):
            raise TypeError(f"not a JMS message: {type(message).__name__}")
        if mode not in (DeliveryMode.PERSISTENT, DeliveryMode.NON_PERSISTENT):
            raise JMSException(f"invalid delivery mode {mode!r}")
        _check_priority(priority)
        now = int(time.time() * 1000)
        delay = self.delivery_delay
        if delay > 0:
            self._session.internal.connection.internal.capabilities().check(DELAYED_DELIVERY)
        if self.disable_message_id:
            message_id = None
        else:
            self._seq += 1
            message_id = f"{self._id}:{self._seq}"
        # the wire carries x-opt-delivery-time only for a real delay; JMSDeliveryTime reads
        # as send time + delay afterwards (JMS 3.4.13)
        stamp_send(message, destination, mode, priority, 0 if self.disable_message_timestamp else now,
                   now + ttl if ttl > 0 else 0, message_id, now + delay if delay > 0 else 0,
                   self._user_id)
        if listener is RETURN_FUTURE:
            listener = None
            return_future = True
        else:
            return_future = False
        sync = listener is not None or self._waits(mode)
        # the provider gets the message's data as it is now, never the caller's object: the
        # caller may change and re-send it the moment this returns, whatever the provider keeps
        # (a send queued while failover reconnects, one re-sent after a lost outcome)
        fut = self._provider_producer.send(snapshot(message), sync, ttl if ttl > 0 else 0)
        if delay <= 0:
            stamp_delivery_time(message, now)
        if listener is not None:  # asynchronous send: the session's completion thread reports
            from .completion import completions_for

            completions_for(self._session).add(fut, message, listener, self)
            return None
        wait = None if fut is None else ProviderWait(fut, self._send_timeout, "send", self._provider)
        if return_future or wait is None:
            return wait
        wait.block()
        return None

    def _waits(self, mode: int) -> bool:
        """Qpid JMS's rule: a send waits for the peer's outcome only when it is PERSISTENT and
        outside a transaction (the commit waits for transacted ones), or ``jms.forceSyncSend``;
        never with ``jms.forceAsyncSend`` or a presettled link. A send that does not wait still
        takes a slot of the send window (back-pressure), and a refusal of it reaches the
        ExceptionListener, or fails the commit."""
        if self._force_sync:
            return True
        if self._force_async or self._presettle:
            return False
        return mode == DeliveryMode.PERSISTENT and not self._session.transacted

    def close(self) -> None:
        if self._closed:
            return
        from .completion import wait_for_completions

        wait_for_completions(self._session, "close", self)  # JMS 4.6.2: incomplete sends first
        self._closed = True
        self._session.internal.close_producer(self)

    def _mark_closed(self) -> None:
        """The session closes this producer (its link goes with the session)."""
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("the producer is closed")
        self._session.internal.check_open()

    def __enter__(self) -> MessageProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_priority(priority: Any) -> None:
    if type(priority) is bool or not isinstance(priority, int) or not 0 <= priority <= 9:
        raise JMSException(f"invalid priority {priority!r}: must be an int from 0 to 9")


class ProducerInternal:
    """The producer's side for its session, the simplified API and the asyncio face: not JMS API.
    ``MessageProducer.internal``."""

    __slots__ = ("_owner",)

    def __init__(self, owner: MessageProducer) -> None:
        self._owner = owner

    def resolve_send_args(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> tuple[Destination, Any, int, int, int, Any]:
        """``send``'s arguments as ``(destination, message, delivery_mode, priority,
        time_to_live, completion_listener)``, this producer's values filling what is not given.

        The one parser of a send's arguments, for every face (the asyncio producer's too):
        ``(message[, delivery_mode, priority, time_to_live])``, or for a producer created
        without a destination ``(destination, message[, ...])``; those three as keywords; a
        ``completion_listener`` as keyword or last positional argument."""
        return self._owner._resolve_send_args(args, kwargs)

    @property
    def send_timeout(self) -> float | None:
        """How long a send waits for the peer's outcome (``jms.sendTimeout``), in seconds."""
        return self._owner._send_timeout

    def send_resolved(
        self,
        destination: Destination,
        message: Any,
        mode: int,
        priority: int,
        ttl: int,
        listener: Any = None,
    ) -> Any:
        """The send every face ends in, its arguments resolved (``resolve_send_args``): set the
        headers and send. ``listener`` is a CompletionListener, or ``RETURN_FUTURE``
        (``amqp_jms.client.completion``) to get the wait for the outcome back instead of
        blocking on it (a ``ProviderWait``, for the asyncio face; None when the send does not
        wait); None waits for the outcome when the send waits (``_waits``)."""
        return self._owner._send_resolved(destination, message, mode, priority, ttl, listener)

    @property
    def provider_producer(self) -> ProviderProducer:
        return self._owner._provider_producer

    def mark_closed(self) -> None:
        """The session closes this producer (its link goes with the session)."""
        self._owner._mark_closed()

    def check_open(self) -> None:
        self._owner._check_open()
