"""The receive policy of a consumer, written once and free of I/O: when to take from the local
queue, when to give the peer a credit (pull), when to drain, when to give up.

Why a generator: the JMS rules of a receive (prefetch or pull, ``receive(t)`` asking the peer
before it answers None, a pull's credit taken back by ``stop()``, a message settled away while
vetting) are the same for the blocking and the asyncio face; only the waiting differs. So the
rules live here as a flow that *yields steps* and is *sent* their results, like httpx's
``Auth.auth_flow``, and two drivers run it, each owning its waiting:

* the blocking driver, ``MessageConsumer._receive_inbound`` (``client/consumer.py``): it waits
  on the local queue's condition and on provider futures, on the application's thread;
* the asyncio driver, ``AsyncConsumer._receive`` (``aio/_core.py``): it awaits an event the I/O
  thread sets and the provider futures wrapped for the event loop.

The flow reads the local queue's state (``running``, ``closed``, ``stops``) and the clock, and
nothing else; it touches no socket, thread or future. Its tests drive it with a list
(``tests/unit/test_client_receive_policy.py``).

Steps are tuples ``(op, arg)``; what the driver does, and sends back:

======================  =====================================================================
``(TAKE, wait)``        take the next message of the local queue, waiting up to ``wait``
                        seconds (None: until one arrives or the queue closes; 0: no wait).
                        Sends the inbound, or None.
``(TAKE_SINCE, (s, w))`` the same, but answer ``STOPPED`` as soon as the connection is stopped
                        or was stopped since the queue's ``stops`` count was ``s`` (a stop
                        took back the credit of a pull, so the pull must be made again).
``(WAIT_RUNNING, w)``   wait up to ``w`` seconds (None: no limit) for the connection to start.
                        Sends True once started, False on timeout or close.
``(PULL, what)``        give the peer one credit; wait for the request (``what`` names it in a
                        timeout error). Sends None.
``(PULL_DRAIN, what)``  one credit with drain: the peer sends a message or answers it has none.
``(DRAIN, what)``       drain the link's credit and wait for the peer's answer.
``(TOP_UP, None)``      a drain spent the credit: let the provider top the credit up (no wait).
                        Sends None.
``(DELIVER, inbound)``  vet the message (expiry, redelivery limit, local selector, poison) and
                        hand it to the application. When it is handed over the receive is done
                        and the driver stops driving; when it was settled away instead, the
                        driver sends None and the flow goes on (within the same deadline).
``(DELIVER_PREFETCHED, inbound)``  a prefetched message was taken: it spent a credit, so first
                        let the provider top the credit up (as ``TOP_UP``), then ``DELIVER``.
======================  =====================================================================

The flow ends (``StopIteration``) when the receive answers None: timeout, close, or a stopped
connection with nothing to wait for.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Generator
from typing import Any, Protocol

__all__ = [
    "STOPPED",
    "Op",
    "QueueState",
    "ReceiveFlow",
    "Step",
    "ready_prefetched",
    "receive_flow",
    "receive_timeout",
]


class Op(enum.IntEnum):
    """What a step asks of the driver (see the module docstring)."""

    TAKE = 1
    TAKE_SINCE = 2
    WAIT_RUNNING = 3
    PULL = 4
    PULL_DRAIN = 5
    DRAIN = 6
    TOP_UP = 7
    DELIVER = 8
    DELIVER_PREFETCHED = 9


TAKE, TAKE_SINCE, WAIT_RUNNING = Op.TAKE, Op.TAKE_SINCE, Op.WAIT_RUNNING
PULL, PULL_DRAIN, DRAIN, TOP_UP, DELIVER = Op.PULL, Op.PULL_DRAIN, Op.DRAIN, Op.TOP_UP, Op.DELIVER
DELIVER_PREFETCHED = Op.DELIVER_PREFETCHED

#: what a driver answers to ``TAKE_SINCE`` when the connection is or was stopped since
STOPPED: Any = object()

Step = tuple[Op, Any]
ReceiveFlow = Generator[Step, Any, None]

_TOP_UP: Step = (TOP_UP, None)
_TAKE_NOW: Step = (TAKE, 0.0)


class QueueState(Protocol):
    """What the flow reads of the consumer's local queue (``client.local_queue.LocalQueue``)."""

    #: the connection is started: the queue hands out messages
    running: bool
    #: the consumer (or its session or connection) is closed
    closed: bool
    #: how many times the connection was stopped: a pull made before a stop lost its credit
    stops: int

    def pop_nowait(self) -> Any:
        """The next message if the connection is started and one is here, else None."""
        ...


def receive_timeout(timeout_ms: object, name: str = "timeout_ms") -> float | None:
    """A receive's ``timeout_ms`` in seconds (None or 0: wait until a message or close), every
    receive's one check of it: a string, a bool or a negative number is refused naming the
    argument, not met later as ``unsupported operand type(s) for /``."""
    if type(timeout_ms) is int and timeout_ms > 0:  # the common case, before the checks below
        return timeout_ms / 1000.0
    if timeout_ms is None:
        return None
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)):
        raise TypeError(
            f"{name} must be a number of milliseconds (an int) or None, "
            f"not {type(timeout_ms).__name__} {timeout_ms!r:.40}"
        )
    if not timeout_ms >= 0:  # negative, or NaN
        raise ValueError(f"{name} must not be negative, got {timeout_ms}")
    return None if timeout_ms == 0 or timeout_ms == float("inf") else timeout_ms / 1000.0


def ready_prefetched(queue: QueueState, prefetch: int) -> Any:
    """The flow's first two steps when they need no waiting, as one call: for a prefetching
    consumer whose local queue holds a message, ``TAKE`` answers at once and the next step is
    ``DELIVER_PREFETCHED`` of that message. That message, or None when the flow must run.

    Why: it is nearly every receive of a prefetching consumer, and creating and resuming the
    flow for it costs about a microsecond (a tenth of the receive). A driver that gets a message
    here tops the credit up and delivers it, exactly as for ``DELIVER_PREFETCHED``; when the
    vetting settles it away, the driver runs the flow (``tests/unit/test_client_receive_policy.py``
    holds the two to the same steps)."""
    if prefetch > 0 and not queue.closed:
        return queue.pop_nowait()
    return None


def receive_flow(
    queue: QueueState,
    prefetch: int,
    timeout: float | None,
    ask_peer: bool = True,
    peer_drains: bool = True,
    local_only: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> ReceiveFlow:
    """The steps of one receive: ``receive(t)`` is ``timeout`` ``t`` seconds, ``receive()`` is
    None (wait until a message arrives or the consumer closes), ``receive_no_wait()`` is 0.

    * ``prefetch`` > 0: the provider keeps that many credits out and the messages wait in the
      local queue. Taking one tops the credit up (``DELIVER_PREFETCHED``). When the local queue
      stays empty for a bounded receive, the peer is asked before answering None (a ``DRAIN``):
      an empty local buffer is not "no message" until the peer says so (Qpid JMS). Not when
      ``ask_peer`` is False (the asyncio face's ``receive_no_wait``, which must not wait),
      ``local_only`` (``jms.receiveLocalOnly`` / ``jms.receiveNoWaitLocalOnly`` for this kind of
      receive), the peer is known to fail on such a drain (``peer_drains`` False: RabbitMQ before
      3.12), the connection is stopped or the consumer closed. The drain spends the credit: a
      ``TOP_UP`` follows, found or not.
    * ``prefetch`` 0 (a pull consumer): nothing arrives unasked. ``receive_no_wait`` pulls one
      with drain (the peer answers at once); a waiting receive pulls one credit, waits for the
      message, and drains the credit back at the deadline (what came with it is taken). A stopped
      connection pulls nothing until it starts again; a stop while waiting took the credit back
      (``TAKE_SINCE`` answers ``STOPPED``), so the pull is made again on start. A pull consumer
      has nothing local to answer from, so it pulls even when ``ask_peer`` is False.

    Each message taken is a ``DELIVER``; one settled away while vetting (expired, poison,
    redelivered too often, filtered by a local selector) lets the flow take the next one, within
    the same deadline.
    """
    deadline = None if timeout is None else clock() + timeout
    left = timeout
    while True:
        if queue.closed:
            return
        if prefetch > 0:
            inbound = yield (TAKE, left)
            if inbound is not None:
                yield (DELIVER_PREFETCHED, inbound)  # handed over: the driver stops here
                left = None if deadline is None else max(0.0, deadline - clock())
                continue  # settled away while vetting: the next one, within the deadline
            if (timeout is None or not ask_peer or local_only or not peer_drains
                    or not queue.running or queue.closed):
                return
            # Qpid JMS: an empty local buffer is not "no message" until the peer says so
            yield (DRAIN, "receive (drain)" if timeout > 0 else "receive_no_wait (drain)")
            inbound = yield _TAKE_NOW
            yield _TOP_UP  # the drain used up the credit: top it up again
            if inbound is None:
                return
        else:
            inbound = yield _TAKE_NOW
            if inbound is None:
                if left is not None and left <= 0:
                    if not queue.running:
                        return
                    yield (PULL_DRAIN, "receive_no_wait (drain)")
                    inbound = yield _TAKE_NOW
                else:
                    inbound = yield from _pull_one(queue, deadline, clock)
                if inbound is None:
                    return
        yield (DELIVER, inbound)  # handed over: the driver stops here; settled away: go on
        left = None if deadline is None else max(0.0, deadline - clock())


def _pull_one(queue: QueueState, deadline: float | None, clock: Callable[[], float]
              ) -> Generator[Step, Any, Any]:
    """A pull consumer's waiting receive: one credit, the message it brings, a drain at the
    deadline; pulled again after a stop took the credit back."""
    while True:
        left = None if deadline is None else max(0.0, deadline - clock())
        if not queue.running:
            # stopped: nothing is pulled until start (stop() took the credit back)
            if not (yield (WAIT_RUNNING, left)):
                return None
            continue
        stops = queue.stops
        yield (PULL, "receive (credit)")
        inbound = yield (TAKE_SINCE, (stops, left))
        if inbound is STOPPED:
            continue  # stop() drained the credit and released what came: pull again on start
        if inbound is None and not queue.closed:
            yield (DRAIN, "receive (drain at timeout)")
            inbound = yield _TAKE_NOW
        return inbound
