"""The provider SPI: what the JMS objects call, with no AMQP in sight.

The JMS layer (``amqp_jms.client``) holds one ``Provider`` per connection and resource handles
(``ProviderSession``, ``ProviderProducer``, ``ProviderConsumer``) created through it. Every
operation that talks to the peer returns a ``concurrent.futures.Future`` (resolved on the
provider's I/O thread), so the blocking API waits on it with a timeout and the asyncio API
(``amqp_jms.aio``) awaits it through ``asyncio.wrap_future``: one core, two faces.
Fire-and-forget operations (presettled sends, acknowledgements) return ``None``.

Inbound messages reach the JMS layer through an ``InboundSink`` the consumer passes in: the
provider calls ``sink.deliver(inbound)`` on its I/O thread, which must only queue it; decoding
(``Inbound.decode()``) happens later on the thread that hands the message to the application.

This module declares *everything* the JMS layer uses of a provider (issue 17): the client never
reads a provider object's undeclared or private members, never asks which product the peer is,
and never builds provider objects itself (``amqp_jms.provider.create_provider`` does), so that a
failover provider wrapping the AMQP provider sees every call. Peer quirks reach the client as
``Capabilities``. ``tests/unit/test_provider_interface.py`` holds the client to this.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures._base as _futures
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from ..destination import Destination
from ..exceptions import JMSException
from ..message import Message, MessageData
from .config import ConnectionConfig
from .metrics import ConnectionMetrics, Counters

__all__ = [
    "ACCEPTED",
    "BROWSERS",
    "DELAYED_DELIVERY",
    "DURABLE_SUBSCRIPTIONS",
    "MODIFIED_FAILED",
    "MODIFIED_FAILED_UNDELIVERABLE",
    "REJECTED",
    "RELEASED",
    "SHARED_SUBSCRIPTIONS",
    "UNSUBSCRIBE",
    "Capabilities",
    "CommitOutcome",
    "ConsumerSpec",
    "DrainOutcome",
    "Inbound",
    "InboundSink",
    "ProducerSpec",
    "Provider",
    "ProviderConsumer",
    "ProviderListener",
    "ProviderProducer",
    "ProviderSession",
    "ReadableAnswer",
    "SendOutcome",
    "relaying",
]

Future = concurrent.futures.Future


#: guards the moment a ``SendOutcome`` gets its condition against a lock-free resolution
_OUTCOME_LOCK = threading.Lock()
#: the states in which ``Future.done()`` is true (its own rule, by its own names)
_DONE = frozenset((_futures.CANCELLED, _futures.CANCELLED_AND_NOTIFIED, _futures.FINISHED))


class ReadableAnswer(concurrent.futures.Future[None]):
    """A future whose answer comes on its own link, which the thread waiting for it may read
    itself (``Provider.answer_here``, ``Provider.answer_on_loop``): a send's outcome
    (``SendOutcome``), a drain's (``DrainOutcome``). Other waits (a commit, a session) are
    answered where only the I/O thread may take the answer, so a waiting thread that read those
    first would only add a hand-off.

    ``relays``: the wrapped provider's own future this one is completed from (a failover
    connection's), which is then the one to read the answer for."""

    relays: concurrent.futures.Future[None] | None = None


def relaying(wrapped: concurrent.futures.Future[None]) -> concurrent.futures.Future[None]:
    """The future a wrapping provider (failover) hands out for its wrapped provider's
    ``wrapped``, to be completed from it: of the same kind, relaying it, when a waiting caller
    may read ``wrapped``'s answer (a ``ReadableAnswer``), else a plain future."""
    if not isinstance(wrapped, ReadableAnswer):
        return concurrent.futures.Future()
    out = type(wrapped)()
    out.relays = wrapped
    return out


class SendOutcome(ReadableAnswer):
    """The future of a waiting send: the peer's outcome, answered on the producer's own link
    (``ReadableAnswer``).

    It makes its ``threading.Condition`` only when some thread needs one: to wait, or to add a
    callback, or to fail or cancel it. A synchronous send whose caller reads the answer itself
    sets the result and reads it on that one thread, and the condition (a Python object with a
    lock, made and notified for every message) was most of what its future cost there. The
    lock-free paths hold ``_OUTCOME_LOCK``, under which the condition is made: a result set
    while no condition exists cannot miss a waiter or a callback, as none can exist yet."""

    #: the provider's own record of the transfer whose outcome this is (the AMQP provider's:
    #: its proton delivery and producer), so that a caller reading the answer may recognise it
    transfer: Any = None

    def __init__(self) -> None:  # Future.__init__ without its condition
        self._state = _futures.PENDING
        self._result = None
        self._exception = None
        self._waiters: list[Any] = []
        self._done_callbacks: list[Any] = []

    @property
    def _condition(self) -> threading.Condition:  # type: ignore[override]
        cond: threading.Condition | None = self.__dict__.get("_cond")
        if cond is None:
            with _OUTCOME_LOCK:
                cond = self.__dict__.get("_cond")
                if cond is None:
                    cond = self.__dict__["_cond"] = threading.Condition()
        return cond

    def set_result(self, result: None) -> None:
        if "_cond" not in self.__dict__:
            with _OUTCOME_LOCK:
                if "_cond" not in self.__dict__:  # nobody waits or listens: nobody to tell
                    if self._state in _DONE:  # (Future.set_result's refusal)
                        raise concurrent.futures.InvalidStateError(f"{self._state}: {self!r}")
                    self._result = result
                    self._state = _futures.FINISHED
                    return
        super().set_result(result)

    def done(self) -> bool:
        return self._state in _DONE  # (once done, for good: no lock needed to read it)

    def result(self, timeout: float | None = None) -> None:
        if self._state == _futures.FINISHED and self._exception is None:
            return self._result
        return super().result(timeout)


class DrainOutcome(ReadableAnswer):
    """The future of a drain (``ProviderConsumer.drain``, ``pull(drain=True)``): complete when
    the peer has used or returned the consumer's credit, answered on the consumer's own link
    (``ReadableAnswer``): a prefetch-0 ``receive_no_wait``, or a timed-out pull, then costs its
    caller one wake-up, its own, not the I/O thread's first."""

    #: the provider's own consumer whose link answers the drain, so that a caller waiting for
    #: it may read the answer (the AMQP provider's ``AmqpConsumer``)
    consumer: Any = None


class CommitOutcome(Enum):
    """What a peer says of an in-doubt commit (``ProviderSession.commit_outcome``)."""

    COMMITTED = "committed"
    ROLLED_BACK = "rolled back"
    UNKNOWN = "unknown"  # asked, and the peer cannot tell (it forgot, or the id is not its own)
    NOT_ASKED = "not asked"  # this peer cannot be asked (another broker, or it keeps no outcomes)

# Acknowledgement outcomes, named as JMS_AMQP_ACK_TYPE values (Qpid JMS's numbering).
ACCEPTED = 1
REJECTED = 2
RELEASED = 3
MODIFIED_FAILED = 4
MODIFIED_FAILED_UNDELIVERABLE = 5


@dataclass(frozen=True, slots=True)
class ProducerSpec:
    """A producer link: ``destination`` None means anonymous (issue 7)."""

    destination: Destination | None
    presettle: bool = False
    #: the link's name when the caller chooses it (a failover provider keeps it across
    #: reconnects); None: the provider names it
    link_name: str | None = None


@dataclass(frozen=True, slots=True)
class ConsumerSpec:
    """A consumer link. The subscription fields are for durable/shared consumers (issue 7)."""

    destination: Destination
    selector: str | None = None
    no_local: bool = False
    prefetch: int = 1000
    presettle: bool = False
    subscription_name: str | None = None
    durable: bool = False
    shared: bool = False
    browser: bool = False
    #: as ProducerSpec.link_name (a subscription's link is named by ``subscription_name``)
    link_name: str | None = None


class Inbound(Protocol):
    """One received message, still encoded, plus what acknowledging it needs."""

    #: times redelivered locally by ``recover``/rollback (added to the peer's delivery count)
    local_redeliveries: int
    @property
    def data(self) -> bytes | None:
        """The message as the peer sent it (``receive_encoded``); None if the provider has no
        bytes."""
        ...

    @property
    def consumer(self) -> ProviderConsumer:
        """The provider consumer whose link it arrived on: a wrapping provider that re-creates
        links (failover) tells a delivery of the link of the moment from one of a link gone with
        its connection, whose acknowledgement is void."""
        ...

    def decode(self, body: bool = True) -> Message:
        """The JMS message (decoded once, cached); ``body=False``: headers and properties only,
        on a plain message (not cached)."""
        ...

    def reset(self) -> None:
        """Forget the decoded message: the next ``decode()`` reads the bytes again (a fresh,
        read-only copy for a message ``recover`` redelivers)."""
        ...

    def dispatch(self, on_message: Callable[[Message], None], message: Message) -> None:
        """Call a MessageListener's ``on_message(message)`` for this delivery (decoded first):
        with ``jms.tracing`` the delivery's span is the current one meanwhile, so the
        application's own spans are its children (as Qpid JMS keeps its delivery span active
        around ``onMessage``). Exceptions pass through."""
        ...

    @property
    def log_ids(self) -> dict[str, str]:
        """The connection, session and link ids a log line about this message names."""
        ...


class InboundSink(Protocol):
    def deliver(self, inbound: Inbound) -> None:
        """Called on the I/O thread for every message that arrives: queue it, never block."""
        ...

    def deliver_quietly(self, inbound: Inbound) -> None:
        """``deliver`` without waking a reader that waits: the provider calls ``wake`` once after
        each batch of input (one wake-up per batch, not per message: issue 16's receive speed)."""
        ...

    def wake(self) -> None:
        """Wake a reader waiting for what ``deliver_quietly`` queued."""
        ...

    def __len__(self) -> int:
        """Messages queued locally, not yet handed to the application (for credit)."""
        ...

    def take_all(self) -> list[Inbound]:
        """Remove and return every locally queued message (rollback releases them)."""
        ...

    def give_back(self) -> list[tuple[Inbound, int]]:
        """Remove every locally queued message, each with the outcome to settle it with as its
        link closes (the application never saw them: released, in the JMS layer's policy)."""
        ...

    def clear(self) -> None:
        """The connection was interrupted: drop every locally queued unsettled message without
        settling it (the peer gives them to a consumer again, flagged redelivered); a presettled
        consumer's messages are kept (the peer will not send them again)."""
        ...

    def on_closed(self, exc: JMSException, *, alone: bool = False) -> None:
        """The consumer's link ended under it for ``exc`` (called on a provider thread, never
        block). ``alone``: the peer closed this link while its session and connection carry on
        (Qpid JMS's ``onResourceClosed``), as opposed to going down with them, which the
        connection reports once."""
        ...


class ProviderListener(Protocol):
    """What a provider tells its connection (Qpid JMS's ``ProviderListener``). Every call comes
    on the provider's I/O thread: hand off, never block, never call back into the provider."""

    def on_connection_established(self, uri: str) -> None:
        """The first connect succeeded: ``uri`` is the server connected to."""
        ...

    def on_connection_interrupted(self, uri: str) -> None:
        """The connection to ``uri`` was lost and the provider is reconnecting (a failover
        provider only): prefetched messages are void, the peer will redeliver them."""
        ...

    def on_connection_restored(self, uri: str) -> None:
        """Reconnected to ``uri`` with every session, producer and consumer re-created."""
        ...

    def on_connection_failure(self, exc: JMSException) -> None:
        """The provider gave up: the connection is dead for good (the ExceptionListener)."""
        ...

    def on_async_exception(self, exc: JMSException) -> None:
        """A send nobody waited for failed (the peer refused it); the connection lives on
        (called on the I/O thread: hand off, do not block)."""
        ...


#: ``Capabilities.refusals`` keys: features a peer may lack, each refused with the reason
BROWSERS = "queue browsers"
DURABLE_SUBSCRIPTIONS = "durable subscriptions"
SHARED_SUBSCRIPTIONS = "shared subscriptions"
UNSUBSCRIBE = "unsubscribe"
DELAYED_DELIVERY = "delivery delay"


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the peer connected now supports, as the provider judged it from the peer's Open.

    The JMS layer asks these instead of looking at capability symbols or the peer's product:
    the rules that know AMQP and the quirks of particular brokers live in the provider
    (``provider/amqp/capabilities.py``), and a failover provider reports those of the peer it
    is connected to at the moment (they may change when the connection moves)."""

    #: the peer routes a message sent on an anonymous link by its ``to`` (informational: the
    #: provider falls back to a link per destination itself when it does not)
    anonymous_relay: bool = True
    #: feature name (the constants above) -> why the peer cannot do it; absent = supported
    refusals: Mapping[str, str] = field(default_factory=dict)

    def supports(self, feature: str) -> bool:
        return feature not in self.refusals

    def check(self, feature: str) -> None:
        """Raise ``JMSException`` with the reason when the peer cannot do ``feature``."""
        why = self.refusals.get(feature)
        if why is not None:
            raise JMSException(why)

    @property
    def supports_browsers(self) -> bool:
        return self.supports(BROWSERS)

    @property
    def supports_durable_subscriptions(self) -> bool:
        return self.supports(DURABLE_SUBSCRIPTIONS)

    @property
    def supports_shared_subscriptions(self) -> bool:
        return self.supports(SHARED_SUBSCRIPTIONS)

    @property
    def supports_unsubscribe(self) -> bool:
        return self.supports(UNSUBSCRIBE)

    @property
    def supports_delayed_delivery(self) -> bool:
        return self.supports(DELAYED_DELIVERY)


class ProviderProducer(ABC):
    @abstractmethod
    def send(self, message: MessageData, sync: bool, time_to_live: int = 0) -> Future[None] | None:
        """Send a message's frozen data; a future for the outcome when ``sync``.

        The JMS layer set the headers before it took the snapshot; ``time_to_live`` (ms) gives
        the AMQP header ``ttl``. For an anonymous producer the data's destination says where.
        The record may be kept (queued, re-sent): it cannot change."""

    @abstractmethod
    def close(self) -> Future[None]: ...


class ProviderConsumer(ABC):
    #: the credit it keeps out (0: the JMS layer pulls one message per receive)
    prefetch: int = 0
    #: whether the peer filters by the consumer's selector; False: the JMS layer must filter
    #: itself. May change while the consumer lives (a failover provider re-attaches it to
    #: another peer), so read it per message, never once at creation
    selector_applied_remotely: bool = True
    #: a browser's link: whether the peer answered distribution-mode copy (else browsing would
    #: consume the messages)
    copy_honoured: bool = True

    @abstractmethod
    def acknowledge(self, inbound: Inbound, outcome: int = ACCEPTED) -> None:
        """Settle one delivery with ``outcome`` (fire and forget, in order)."""

    def acknowledge_many(self, inbounds: Iterable[Inbound], outcome: int = ACCEPTED) -> None:
        """Settle several deliveries with one ``outcome``, in order (fire and forget): what a
        session's ``acknowledge()`` of N delivered messages calls, so that a provider with an
        I/O thread hands the whole batch over once rather than N times. This default settles
        them one by one."""
        for inbound in inbounds:
            self.acknowledge(inbound, outcome)

    @abstractmethod
    def taken(self) -> None:
        """The application took a message from the local queue: top credit up if needed."""

    @abstractmethod
    def pull(self, drain: bool) -> Future[None]:
        """Prefetch 0: grant one credit; with ``drain`` complete when the peer drained."""

    @abstractmethod
    def drain(self) -> Future[None]:
        """Ask the peer to use or return all credit; completes when it has."""

    def stop(self) -> Future[None]:
        """Take back all credit and grant no more: a consumer the application closed whose link
        stays open until its delivered messages are acknowledged. Completes when drained."""
        fut: Future[None] = Future()
        fut.set_result(None)
        return fut

    @property
    def drain_on_empty(self) -> bool:
        """Whether an empty ``receive(t)``/``receive_no_wait`` may ask the peer (a drain) before
        answering None. False for peers known to fail on such a drain."""
        return True

    def read_here(self, arrived: Callable[[], bool], timeout: float | None) -> None:
        """Before a blocking receive sleeps on the local queue: the provider may read the
        peer's input on the waiting thread itself, for up to ``timeout`` seconds, returning
        once ``arrived()`` or when it leaves the rest to its I/O thread (``Provider.answer_here``
        for a receive). By default it does nothing."""
        return None

    @abstractmethod
    def close(self) -> Future[None]: ...


class ProviderSession(ABC):
    transacted: bool
    #: why the session ended under the application (the peer ended it, or its connection
    #: went); None while it lives
    failure: JMSException | None = None

    @abstractmethod
    def create_producer(self, spec: ProducerSpec) -> Future[ProviderProducer]:
        """A producer; ``ProducerSpec(None)`` (anonymous) always works: a provider whose peer
        cannot relay builds one that opens a link per destination (Qpid JMS's
        ``AmqpAnonymousFallbackProducer``)."""

    @abstractmethod
    def create_consumer(self, spec: ConsumerSpec, sink: InboundSink) -> Future[ProviderConsumer]: ...

    @abstractmethod
    def commit(self) -> Future[None]: ...

    @abstractmethod
    def rollback(self, before: Callable[[], Iterable[Inbound]]) -> Future[None]:
        """Release what ``before()`` returns (prefetched, undelivered), then roll back."""

    @abstractmethod
    def close(self, before: Callable[[], Iterable[Inbound]] | None = None) -> Future[None]:
        """End the session; if transacted, first release ``before()`` and roll back (JMS 2.0)."""

    def in_doubt_commit(self) -> object | None:
        """The commit sent and not answered when the connection was lost, as a token a session
        on the next connection can ask about (``commit_outcome``); None if there is none, or the
        peer cannot be asked (it offered to keep no outcomes: a failover provider then reports
        the commit rolled back, as Qpid JMS does)."""
        return None

    def commit_outcome(self, token: object) -> Future[CommitOutcome]:
        """What became of the in-doubt commit ``token``, asked of this session's peer."""
        out: Future[CommitOutcome] = Future()
        out.set_result(CommitOutcome.NOT_ASKED)
        return out


class Provider(ABC):
    config: ConnectionConfig
    #: ``ID:<uuid>:<n>``: stable for the connection's life (message and producer ids are built
    #: from it; a failover provider keeps one across reconnects)
    connection_id: str
    #: the connection's counters, one set for its life (a failover provider shares its own with
    #: every connection it makes, so they add up across reconnects)
    counters: Counters

    def metrics(self) -> ConnectionMetrics:
        """A snapshot of the connection's counters (``connection.metrics()``)."""
        return self.counters.snapshot()

    @abstractmethod
    def connect(self, listener: ProviderListener) -> Future[None]: ...

    @abstractmethod
    def create_session(self, transacted: bool) -> Future[ProviderSession]: ...

    @abstractmethod
    def close(self) -> Future[None]: ...

    @abstractmethod
    def shutdown(self) -> None:
        """Stop the provider's I/O now, without a Close frame (after ``close``, or when
        ``connect`` failed); idempotent."""

    @property
    @abstractmethod
    def failure(self) -> JMSException | None:
        """Why the provider gave up on the connection; None while it lives (for a failover
        provider: also while it is reconnecting)."""

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """What the peer connected now supports (see ``Capabilities``)."""

    @property
    @abstractmethod
    def remote_uri(self) -> str:
        """The server connected to now (``amqp://host:port``)."""

    @abstractmethod
    def wait(self, fut: Future[Any], timeout: float | None, what: str) -> Any:
        """Block for ``fut`` (refusing on the I/O thread); a timeout raises JMSException."""

    def on_io_thread(self) -> bool:
        """Whether the caller runs on this provider's I/O thread, where blocking would deadlock
        (a wrapping provider asks the provider it wraps)."""
        return False

    def answer_here(self, fut: Future[Any], timeout: float | None) -> None:
        """Before ``wait`` blocks for ``fut`` (a ``SendOutcome``): the provider may read the
        peer's answer on the waiting thread itself, for up to ``timeout`` seconds, returning
        when ``fut`` is done or it leaves the rest to its I/O thread (a wrapping provider offers
        the one it wraps). By default it does nothing."""
        return None

    def answer_on_loop(self, fut: Future[Any], loop: Any, timeout: float | None) -> None:
        """``answer_here`` for a task that awaits ``fut`` (a ``SendOutcome``) on ``loop``, the
        calling thread's running event loop, which must not block: the provider may have that
        loop read the peer's answer when it comes, for up to ``timeout`` seconds, instead of
        its I/O thread (a wrapping provider offers the one it wraps). By default it does
        nothing."""
        return None

    def alternate_servers(self) -> tuple[ConnectionConfig, ...]:
        """Other servers the peer connected now offered for failover (Qpid JMS's
        ``getAlternateURIs``), each taking what it does not say from this connection's settings;
        ``()`` when it offered none."""
        return ()

    def server_epoch(self) -> int | None:
        """Which server connection is under this provider now: a number that changes when a
        failover moves to another, ``None`` while there is none (between a loss and the
        reconnect). A provider that never moves is one epoch, ``0`` (a loss fails it instead).
        Lets a reader tell "the server had nothing" from "there was no server to ask"."""
        return 0

    @property
    @abstractmethod
    def remote_capabilities(self) -> frozenset[str]: ...

    @property
    @abstractmethod
    def container_id(self) -> str: ...

    # -- connection-scoped operations (issue 7); providers without them refuse clearly --------
    def create_temporary(self, topic: bool) -> Future[str]:
        """Create a temporary queue (or topic): the future gives the address the peer chose."""
        raise JMSException("this provider does not support temporary destinations")

    def delete_temporary(self, address: str) -> Future[None]:
        raise JMSException("this provider does not support temporary destinations")

    def unsubscribe(self, link_name: str) -> Future[None]:
        """Remove the durable subscription attached under ``link_name``."""
        raise JMSException("this provider does not support durable subscriptions")
