"""A wait the core asks a face to do, described once for both faces.

The core decides what an operation waits for, for how long and what a timeout is called (a
send waits ``jms.sendTimeout`` for the peer's outcome, a pull ``amqp.drainTimeout`` for its
answer); a face only carries the wait out. The blocking face blocks on it
(``ProviderWait.block``: the provider's wait); the asyncio face awaits it
(``amqp_jms.aio._wait.wait``), which hands the finished future to the same blocking wait, so
both faces return the same result and raise the same JMS exceptions.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..exceptions import JMSException

if TYPE_CHECKING:
    from ..provider.base import Provider

__all__ = ["ProviderWait"]


@dataclass(frozen=True, slots=True)
class ProviderWait:
    """The provider's future for an operation, how long to wait for it (None: no limit), the
    operation's name, which a timeout names (``send timed out after 1.5 s``), and the provider
    whose wait decides the outcome."""

    future: Future[Any]
    timeout: float | None
    what: str
    provider: Provider

    def block(self) -> Any:
        """Block until the outcome (``Provider.wait``): its result, or the JMS exception the
        operation failed, timed out or was cancelled with."""
        return self.provider.wait(self.future, self.timeout, self.what)

    def timed_out(self) -> JMSException:
        """What a face that gave up at the deadline raises: the provider's wait's timeout
        (``provider.loop.wait_for``), word for word (``test_send_timeout_faces.py`` holds them
        together)."""
        return JMSException(f"{self.what} timed out after {self.timeout} s")

    def outcome(self) -> Any:
        """The outcome of a future that has finished (or was given up): ``block`` without
        waiting, so a face that waited its own way raises what the blocking face raises."""
        return self.provider.wait(self.future, 0, self.what)
