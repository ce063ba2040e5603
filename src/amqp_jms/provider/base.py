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
"""

from __future__ import annotations

import concurrent.futures
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ..destination import Destination
from ..exceptions import JMSException
from .config import ConnectionConfig

__all__ = [
    "ACCEPTED",
    "MODIFIED_FAILED",
    "MODIFIED_FAILED_UNDELIVERABLE",
    "REJECTED",
    "RELEASED",
    "ConsumerSpec",
    "Inbound",
    "InboundSink",
    "ProducerSpec",
    "Provider",
    "ProviderConsumer",
    "ProviderListener",
    "ProviderProducer",
    "ProviderSession",
]

Future = concurrent.futures.Future

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


class Inbound(Protocol):
    """One received message, still encoded, plus what acknowledging it needs."""

    #: times redelivered locally by ``recover``/rollback (added to the peer's delivery count)
    local_redeliveries: int

    def decode(self, body: bool = True) -> Any:
        """The JMS message (decoded once, cached); ``body=False``: headers and properties only,
        on a plain message (not cached)."""
        ...


class InboundSink(Protocol):
    def deliver(self, inbound: Any) -> None:
        """Called on the I/O thread for every message that arrives: queue it, never block."""
        ...

    def __len__(self) -> int:
        """Messages queued locally, not yet handed to the application (for credit)."""
        ...

    def take_all(self) -> list[Any]:
        """Remove and return every locally queued message (rollback releases them)."""
        ...

    def give_back(self) -> list[tuple[Any, int]]:
        """Remove every locally queued message, each with the outcome to settle it with as its
        link closes (the application never saw them: released, in the JMS layer's policy)."""
        ...


class ProviderListener(Protocol):
    def on_connection_failure(self, exc: JMSException) -> None:
        """The connection died (called on the I/O thread: hand off, do not block)."""
        ...

    def on_async_exception(self, exc: JMSException) -> None:
        """A send nobody waited for failed (the peer refused it); the connection lives on
        (called on the I/O thread: hand off, do not block)."""
        ...


class ProviderProducer(ABC):
    @abstractmethod
    def send(self, message: Any, sync: bool, time_to_live: int = 0) -> Future[None] | None:
        """Encode (on the calling thread) and send; a future for the outcome when ``sync``.

        The message's headers are already set by the JMS layer; ``time_to_live`` (ms) gives the
        AMQP header ``ttl``. For an anonymous producer the message's destination says where."""

    @abstractmethod
    def close(self) -> Future[None]: ...


class ProviderConsumer(ABC):
    @abstractmethod
    def acknowledge(self, inbound: Any, outcome: int = ACCEPTED) -> None:
        """Settle one delivery with ``outcome`` (fire and forget, in order)."""

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

    @abstractmethod
    def close(self) -> Future[None]: ...


class ProviderSession(ABC):
    transacted: bool

    @abstractmethod
    def create_producer(self, spec: ProducerSpec) -> Future[ProviderProducer]: ...

    @abstractmethod
    def create_consumer(self, spec: ConsumerSpec, sink: InboundSink) -> Future[ProviderConsumer]: ...

    @abstractmethod
    def commit(self) -> Future[None]: ...

    @abstractmethod
    def rollback(self, before: Callable[[], Iterable[Any]]) -> Future[None]:
        """Release what ``before()`` returns (prefetched, undelivered), then roll back."""

    @abstractmethod
    def close(self, before: Callable[[], Iterable[Any]] | None = None) -> Future[None]:
        """End the session; if transacted, first release ``before()`` and roll back (JMS 2.0)."""


class Provider(ABC):
    config: ConnectionConfig

    @abstractmethod
    def connect(self, listener: ProviderListener) -> Future[None]: ...

    @abstractmethod
    def create_session(self, transacted: bool) -> Future[ProviderSession]: ...

    @abstractmethod
    def close(self) -> Future[None]: ...

    @abstractmethod
    def wait(self, fut: Future[Any], timeout: float | None, what: str) -> Any:
        """Block for ``fut`` (refusing on the I/O thread); a timeout raises JMSException."""

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
