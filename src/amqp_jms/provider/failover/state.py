"""``FailoverState``: everything a failover connection remembers, in one place.

A failover connection outlives the wrapped connections under it. What it must remember across
them is gathered here, under one lock, and nowhere else:

* **the wrapped connection of the moment** (``inner``) and its generation (``gen``, one per
  connect; ``lost_gen``: the last one reported lost), whether it is ``online`` (re-created and
  nothing left to re-send), ``closed`` by the application, ``failure`` once failover gave up;
* **what is replayed** on the next connection (:mod:`.replay`, Qpid JMS's
  ``onConnectionRecovery`` order): the session handles (each holding its producers and
  consumers, :mod:`.handles`), the temporary destinations and the ``aliases`` their earlier
  addresses map to (:mod:`.temporaries`);
* **what is owed** to the application: the sends queued while offline or lost on the wire
  (:class:`~.pending_send.PendingSend`), the futures waiting for the connection to come back
  (``when_online``), the answers a lost connection will never give (``when_lost``), the first
  connect's future;
* **where to go next**: the :class:`~.reconnect.Reconnector` (the server list and the back-off),
  the server of the attempt in progress, and the record of reconnects made.

:class:`~.provider.FailoverProvider` is the policy that acts on this object (the reconnect loop,
giving up, closing); the handles, the replay and the pending sends are collaborators that take
it (read its fields, change it only through the operations below), never the provider.
Qpid JMS spreads the same facts over its FailoverProvider (``provider``, ``uris``, ``requests``,
``reconnectControl``, ``failureCause``) and the JMS objects it replays; ours stay AMQP-free
handles, so the state they share lives here.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...exceptions import IllegalStateException, JMSException
from ..base import Provider
from ..config import ConnectionConfig
from ..tracing import Tracing
from .futures import reject, resolve
from .reconnect import Reconnector
from .temporaries import Temporary

if TYPE_CHECKING:
    from ..._logs import IdsAdapter
    from .handles import FailoverSession
    from .pending_send import PendingSend

__all__ = ["MAX_QUEUED_SENDS", "FailoverState"]

Future = concurrent.futures.Future

#: sends queued while offline before a further send blocks (back-pressure, as the send window)
MAX_QUEUED_SENDS = 1024


class FailoverState:
    """What one failover connection remembers across the wrapped connections under it; every
    field is read and written under ``lock`` (``cond`` is its condition: it is notified when the
    connection goes online or offline, closes or gives up, and when the send queue shrinks)."""

    def __init__(
        self,
        config: ConnectionConfig,
        connection_id: str,
        reconnector: Reconnector,
        log: IdsAdapter,
        tracing: Tracing | None,
    ) -> None:
        # -- who the connection is (the same on every wrapped connection) ----------------------
        #: the connection-level settings (client id, credentials, timeouts); the client may
        #: replace them before connecting (set_client_id, create_connection(user, password))
        self.config = config
        self.connection_id = connection_id
        self.log = log
        #: for the sends made on the reconnect thread (queued, re-sent); None unless jms.tracing
        self.tracing = tracing
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)

        # -- the wrapped connection of the moment ----------------------------------------------
        self.inner: Provider | None = None
        #: the generation of ``inner``: one per connect, so a late event of a lost connection
        #: is told from one of the live connection
        self.gen = 0
        #: the last generation reported lost
        self.lost_gen = 0
        #: re-created, and nothing left to re-send: creates and sends go straight through
        self.online = False
        self.closed = False
        #: set only once failover has given up (or the connection closed after it did)
        self.failure: JMSException | None = None
        #: why the last connection was lost (a redirect says where to go)
        self.last_failure = JMSException("the connection was lost")

        # -- what is replayed on the next connection -------------------------------------------
        #: the sessions in creation order; each holds its producers and consumers
        self.sessions: list[FailoverSession] = []
        self.session_numbers = 0
        self.temporaries: list[Temporary] = []
        #: a re-created temporary destination's earlier addresses -> its address now (read
        #: without the lock on every send: replaced whole, never changed in place)
        self.aliases: dict[str, str] = {}

        # -- what is owed to the application ---------------------------------------------------
        self.sends: deque[PendingSend] = deque()
        self.online_waiters: list[Future[None]] = []
        #: what to do when connection ``gen`` is lost (``when_lost``): answers the connection
        #: will never give (a discharge in flight) are given then
        self.lost_calls: dict[int, list[Callable[[], None]]] = {}
        #: the first connect's outcome (``FailoverProvider.connect``)
        self.connected: Future[None] = Future()

        # -- where to go next ------------------------------------------------------------------
        self.reconnector = reconnector
        #: the server of the connect in progress (or of the connection of the moment)
        self.server_now: ConnectionConfig | None = None
        #: the provider of a connect in progress (a close stops it without waiting)
        self.attempting: Provider | None = None
        self.current_uri: str | None = None
        #: (uri, seconds from loss to restored) for each reconnect, for the soak benchmark
        self.reconnects: list[tuple[str, float]] = []
        #: set to interrupt the reconnect loop's delay (a loss, a close)
        self.wake = threading.Event()

    # -- the connection of the moment ---------------------------------------------------------
    def check_usable(self) -> None:
        """Raise what a new operation must hear once failover gave up or the connection closed."""
        if self.failure is not None:
            f = self.failure
            raise type(f)(f.reason, f.error_code, f)
        if self.closed:
            raise IllegalStateException("the connection is closed")

    def ended(self) -> JMSException | None:
        """The failure a waiter must get now (given up, or closed), or None while it may wait."""
        if self.failure is not None:
            return self.failure
        if self.closed:
            return IllegalStateException("the connection is closed")
        return None

    def inner_failed(self) -> bool:
        """Whether the wrapped connection of the moment has failed (or there is none)."""
        inner = self.inner
        return inner is None or inner.failure is not None

    def io_failed(self, gen: int) -> bool:
        """Whether the wrapped connection ``gen`` is gone (so its failures are I/O, not refusals)."""
        if gen != self.gen or not self.online:
            return True
        return self.inner_failed()

    def request_timeout(self) -> float | None:
        return self.config.seconds(self.config.request_timeout_ms)

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` (interrupted by close); True if closed."""
        self.wake.wait(seconds)
        with self.lock:
            return self.closed

    # -- online and offline -------------------------------------------------------------------
    def set_online(self) -> None:
        """Everything is re-created and nothing waits to be sent (call with the lock held)."""
        self.online = True
        self.cond.notify_all()

    def lose(self, gen: int, exc: JMSException) -> None:
        """The wrapped connection ``gen`` died, or must be left (a link redirected): go offline
        and wake the reconnect loop (called on that connection's I/O thread); what was to be done
        when it was lost (``when_lost``) is done now, outside the lock."""
        with self.cond:
            if gen != self.gen or self.lost_gen >= gen or self.closed:
                return
            self.lost_gen = gen
            self.online = False
            self.last_failure = exc
            self.cond.notify_all()
            calls = [fn for g in [g for g in self.lost_calls if g <= gen] for fn in self.lost_calls.pop(g)]
        self.wake.set()
        for fn in calls:  # outside the lock: each completes a future a caller waits on
            fn()

    def when_lost(self, gen: int, fn: Callable[[], None], answered: Future[Any]) -> None:
        """Call ``fn`` once connection ``gen`` is lost (now, if it already is), unless
        ``answered`` is done first: for a request whose answer went with the connection, which
        its I/O thread may never give once stopped."""
        with self.cond:
            if self.lost_gen < gen and not self.closed:
                calls = self.lost_calls.setdefault(gen, [])
                calls.append(fn)

                def forget(_: Future[Any]) -> None:
                    with self.cond:
                        if fn in calls:
                            calls.remove(fn)
                        if not calls and self.lost_calls.get(gen) is calls:
                            del self.lost_calls[gen]

                answered.add_done_callback(forget)
                return
        fn()

    def when_online(self) -> Future[None]:
        """Completes when the connection is usable again (fails if it never will be)."""
        f: Future[None] = Future()
        with self.cond:
            if not self.online and self.ended() is None:
                self.online_waiters.append(f)
                return f
        if self.online:
            f.set_result(None)
        else:
            f.set_exception(self.ended() or IllegalStateException("the connection is closed"))
        return f

    def wake_online_waiters(self) -> None:
        with self.cond:
            waiters, self.online_waiters = self.online_waiters, []
            exc = self.ended()
        for f in waiters:
            if exc is None:
                resolve(f)
            else:
                reject(f, exc)

    def wait_online(self, timeout: float | None, what: str) -> Provider:
        """The wrapped connection once online; raises after ``timeout`` (or once it never will be)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.cond:
            while True:
                self.check_usable()
                if self.online and self.inner is not None:
                    return self.inner
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise JMSException(f"{what} timed out after {timeout} s: the connection is "
                                       "reconnecting (failover)")
                self.cond.wait(left)

    # -- the handles to replay ----------------------------------------------------------------
    def next_session_number(self) -> int:
        """The number a new session's link names carry (call with the lock held)."""
        self.session_numbers += 1
        return self.session_numbers

    def forget_session(self, s: FailoverSession) -> None:
        with self.lock:
            if s in self.sessions:
                self.sessions.remove(s)

    def live_sessions(self) -> list[FailoverSession]:
        """The sessions to re-create, in creation order (call with the lock held)."""
        return [s for s in self.sessions if not s.closed]

    # -- temporary destinations and their renames ---------------------------------------------
    def add_temporary(self, address: str, topic: bool) -> None:
        with self.lock:
            self.temporaries.append(Temporary(address, topic))

    def remove_temporary(self, address: str) -> Temporary | None:
        """Forget the temporary destination first named ``address`` (deleted by the application)."""
        with self.lock:
            temp = next((t for t in self.temporaries if t.original == address), None)
            if temp is not None:
                self.temporaries.remove(temp)
                self.update_aliases()
            return temp

    def live_temporaries(self) -> list[Temporary]:
        with self.lock:
            return list(self.temporaries)

    def update_aliases(self) -> None:
        """Every earlier address of a live temporary destination -> its address now."""
        with self.lock:
            self.aliases = {old: t.address for t in self.temporaries for old in t.earlier}

    # -- the sends owed -----------------------------------------------------------------------
    def queue_send(self, pending: PendingSend, resend: bool = False) -> None:
        """Hold a send for the next connection; ``resend``: it was on the wire of the lost one
        (called on its I/O thread: never blocks). A new send blocks while the queue is full."""
        deadline = None
        timeout = self.config.seconds(self.config.send_timeout_ms)
        if timeout is not None:
            deadline = time.monotonic() + timeout
        with self.cond:
            exc = self.ended()
            if exc is not None:
                pending.fail(type(exc)(exc.reason, exc.error_code, exc))
                if pending.future is None and not resend:
                    raise type(exc)(exc.reason, exc.error_code, exc)
                return
            while not resend and len(self.sends) >= MAX_QUEUED_SENDS and not self.online \
                    and self.ended() is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise JMSException(f"send timed out after {timeout} s: the connection is "
                                       "reconnecting (failover)")
                self.cond.wait(left)
            if not self.online or resend:
                self.sends.append(pending)
                return
        # it came back between the producer's check and now: send it on the new connection
        if not pending.run():
            self.queue_send(pending, resend=True)

    def has_queued_sends(self) -> bool:
        return bool(self.sends)

    def flush_sends(self) -> None:
        """Send the queued sends in order on the new connection (outside the lock: a send may
        wait for its window). Sends the application makes meanwhile queue behind them."""
        while True:
            with self.cond:
                if not self.sends:
                    self.cond.notify_all()
                    return
                pending = self.sends[0]
            if not pending.run():
                raise JMSException("the connection was lost again while re-sending")
            with self.cond:
                if self.sends and self.sends[0] is pending:
                    self.sends.popleft()

    def take_sends(self) -> list[PendingSend]:
        """Empty the queue (the connection closed or gave up: each is failed by the caller;
        call with the lock held)."""
        sends, self.sends = list(self.sends), deque()
        return sends
