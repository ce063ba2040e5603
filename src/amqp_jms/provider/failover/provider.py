"""``FailoverProvider``: a connection that survives brokers restarting, moving and failing.

It wraps one AMQP provider at a time behind the provider interface (Qpid JMS's
FailoverProvider): the JMS layer holds the stable handles of :mod:`.handles`, this object owns
the reconnect loop. One daemon thread per connection runs it: ask the :class:`Reconnector`
where to go next, wait its delay, connect (same container id, same connection id), re-create
what the application holds, re-send what the lost connection never answered, then wait for
the next loss. Only when the reconnector gives up does the client hear of a failure
(its ExceptionListener), as in Qpid JMS.

The re-creation itself is :mod:`.replay` (its order is Qpid JMS's).

While offline: closes and acknowledgements succeed at once (acks are void: the broker
redelivers), a commit waits for the reconnect and fails with TransactionRolledBackException if
its transaction did work on the lost connection, sends are queued (a waiting send waits up to
``jms.sendTimeout``), creates wait up to ``jms.requestTimeout``, receives keep waiting.
The rules and their Qpid JMS tests are in docs/failover-design.md.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ..._logs import PROVIDER, with_ids
from ...exceptions import (
    IllegalStateException,
    InvalidClientIDException,
    JMSException,
    JMSSecurityException,
    JMSSecuritySaslException,
)
from ..base import Capabilities, Provider, ProviderListener, ProviderSession
from ..config import ConnectionConfig
from ..errors import RedirectedException
from ..loop import wait_for
from ..metrics import Counters
from ..tracing import tracing_for
from .futures import done_future, failure_of, reject, resolve
from .handles import FailoverConsumer, FailoverProducer, FailoverSession, _Bound
from .pending_send import PendingSend
from .reconnect import GiveUp, Reconnector
from .replay import Replay, consumer_spec, producer_spec
from .servers import add_first, server_from_redirect, update_server_list
from .temporaries import Temporary
from .uri import FailoverConfig

__all__ = ["FailoverProvider"]

Future = concurrent.futures.Future

#: sends queued while offline before a further send blocks (back-pressure, as the send window)
MAX_QUEUED_SENDS = 1024


class _InnerListener:
    """The listener of one wrapped connection (``gen``): its loss starts a reconnect."""

    def __init__(self, fp: FailoverProvider, gen: int) -> None:
        self.fp = fp
        self.gen = gen

    def on_connection_failure(self, exc: JMSException) -> None:
        self.fp.lost(self.gen, exc)

    def on_async_exception(self, exc: JMSException) -> None:
        listener = self.fp._listener
        if listener is not None and self.gen == self.fp.gen:
            listener.on_async_exception(exc)

    # the failover provider tells its own listener of these, once the re-creation is done
    def on_connection_established(self, uri: str) -> None:
        pass

    def on_connection_interrupted(self, uri: str) -> None:
        pass

    def on_connection_restored(self, uri: str) -> None:
        pass


class FailoverProvider(Provider):
    """The provider for one ``failover:`` connection."""

    def __init__(
        self,
        failover: FailoverConfig,
        config: ConnectionConfig | None = None,
        connection_id: str | None = None,
        provider_factory: Any = None,
    ) -> None:
        from ..amqp.connection import AmqpProvider, generate_connection_id

        #: the connection-level settings (client id, credentials, timeouts): the first server's
        #: unless the client passes its own (set_client_id, create_connection(user, password))
        self.config = config or failover.servers[0]
        self.failover = failover
        self.connection_id = connection_id or generate_connection_id()
        #: every line about this connection names it, whichever server it is on
        self.log = with_ids(PROVIDER, connection=self.connection_id)
        #: one set of counters for the connection's life, shared by every wrapped connection
        self.counters = Counters(self.connection_id)
        #: for the sends this provider makes on its own thread (queued, re-sent); None unless
        #: jms.tracing asks (each wrapped connection has its own, from the same options)
        self.tracing = tracing_for(self.config)
        self._factory = provider_factory or AmqpProvider
        self._reconnector = Reconnector(failover.reconnect, [self._server(s) for s in failover.servers])
        self.lock = threading.RLock()
        self._cond = threading.Condition(self.lock)
        self._listener: ProviderListener | None = None
        self._inner: Any = None
        self.gen = 0
        self.online = False
        self._closed = False
        self._failure: JMSException | None = None
        #: the last generation reported lost
        self.lost_gen = 0
        self._last_failure = JMSException("the connection was lost")
        self._server_now: ConnectionConfig | None = None
        self._attempting: Any = None  # the provider of a connect in progress
        self._sessions: list[FailoverSession] = []
        self._session_numbers = 0
        self._temps: list[Temporary] = []
        #: a re-created temporary destination's earlier addresses -> its address now (read
        #: without the lock on every send: replaced whole, never changed in place)
        self.aliases: dict[str, str] = {}
        self._sends: deque[PendingSend] = deque()
        self._online_waiters: list[Future[None]] = []
        #: what to do when connection ``gen`` is lost (``when_lost``): answers the connection
        #: will never give (a discharge in flight) are given then
        self._when_lost: dict[int, list[Callable[[], None]]] = {}
        self._connected_fut: Future[None] = Future()
        self._wake = threading.Event()  # close() interrupts a reconnect delay
        self._thread: threading.Thread | None = None
        self.current_uri: str | None = None
        #: (uri, seconds from loss to restored) for each reconnect, for the soak benchmark
        self.reconnects: list[tuple[str, float]] = []

    # -- the client's view ---------------------------------------------------------------------
    @property
    def failure(self) -> JMSException | None:
        """Set only once failover has given up (or the connection closed after it did)."""
        return self._failure

    @property
    def remote_capabilities(self) -> frozenset[str]:
        inner = self._inner
        return inner.remote_capabilities if inner is not None else frozenset()

    @property
    def capabilities(self) -> Capabilities:
        """Those of the peer connected now (they may change when the connection moves)."""
        inner = self._inner
        return inner.capabilities if inner is not None else Capabilities()

    @property
    def remote_uri(self) -> str:
        return self.current_uri or _uri(self.config)

    @property
    def container_id(self) -> str:
        return self.config.client_id or self.connection_id

    @property
    def servers(self) -> tuple[ConnectionConfig, ...]:
        return self._reconnector.servers

    @property
    def closed(self) -> bool:
        return self._closed

    def set_client_id(self, client_id: str) -> None:
        self.config = self.config.replace(client_id=client_id)

    def connect(self, listener: ProviderListener) -> Future[None]:
        self._listener = listener
        self._thread = threading.Thread(target=self._main, name="amqp-jms-failover", daemon=True)
        self._thread.start()
        return self._connected_fut

    def on_io_thread(self) -> bool:
        inner = self._inner
        return inner is not None and inner.on_io_thread()

    def wait(self, fut: Future[Any], timeout: float | None, what: str) -> Any:
        if self.on_io_thread():
            raise IllegalStateException(f"{what} called on the connection's I/O thread: it would deadlock")
        return wait_for(fut, timeout, what)

    def create_session(self, transacted: bool) -> Future[ProviderSession]:
        with self.lock:
            self._session_numbers += 1
            s = FailoverSession(self, transacted, self._session_numbers)
            self._check_usable()
            self._sessions.append(s)
            # (a connection that failed but is not reported lost yet is offline too: its I/O
            # thread may be gone, and the replay creates the session on the next one)
            inner, gen = (self._inner, self.gen) if self.online and not self.inner_failed() else (None, -1)
        if inner is not None:
            self._chain(s, inner.create_session(transacted), gen)
        return s.ready

    def create_link(self, h: FailoverProducer | FailoverConsumer) -> None:
        """Create a producer/consumer handle's wrapped link now if online, else at restore."""
        with self.lock:
            self._check_usable()
            sess = h.session.current()
            gen = self.gen
        if sess is None or self.inner_failed():
            return
        if isinstance(h, FailoverProducer):
            fut = sess.create_producer(producer_spec(h, self.aliases))
        else:
            fut = sess.create_consumer(consumer_spec(h, self.aliases), h.wrapped_sink(gen))
        self._chain(h, fut, gen)

    def _chain(self, h: _Bound, fut: Future[Any], gen: int) -> None:
        def done(f: Future[Any]) -> None:
            exc = failure_of(f)
            if exc is None:
                with self.lock:
                    if gen == self.gen and not h.closed:
                        h.bind(f.result(), gen)
                        return
                # made on a connection since lost: the restore re-creates it; or unwanted
                if h.closed:
                    try:
                        f.result().close()
                    except JMSException:
                        pass
            elif not self.io_failed(gen):
                h.refuse(exc)
            # an I/O failure: the handle stays recorded and the restore creates it

        fut.add_done_callback(done)

    def close(self) -> Future[None]:
        with self.lock:
            if self._closed:
                return done_future()
            self._closed = True
            inner = self._inner if self.online else None
            self.online = False
            sends, self._sends = list(self._sends), deque()
            self._cond.notify_all()
        self._wake.set()
        for s in sends:
            s.fail(IllegalStateException("the connection was closed before the message could be sent"))
        self.wake_online_waiters()
        if not self._connected_fut.done():
            self._connected_fut.set_exception(IllegalStateException("the connection was closed"))
        if inner is None:
            return done_future()
        return inner.close()

    def shutdown(self) -> None:
        with self.lock:
            self._closed = True
            inner, attempting = self._inner, self._attempting
            self._cond.notify_all()
        self._wake.set()
        for prov in (inner, attempting):
            if prov is not None:
                prov.shutdown()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(5.0)

    def create_temporary(self, topic: bool) -> Future[str]:
        out: Future[str] = Future()
        inner = self.wait_online(self.request_timeout(), "create a temporary destination")

        def done(f: Future[str]) -> None:
            exc = failure_of(f)
            if exc is not None:
                reject(out, exc)
                return
            address = f.result()
            with self.lock:
                self._temps.append(Temporary(address, topic))
            resolve(out, address)

        inner.create_temporary(topic).add_done_callback(done)
        return out

    def delete_temporary(self, address: str) -> Future[None]:
        with self.lock:
            temp = next((t for t in self._temps if t.original == address), None)
            if temp is not None:
                self._temps.remove(temp)
                self.aliases = {old: t.address for t in self._temps for old in t.earlier}
            inner = self._inner if self.online else None
        if inner is None or temp is None:
            return done_future()
        return inner.delete_temporary(temp.address)

    def unsubscribe(self, link_name: str) -> Future[None]:
        inner = self.wait_online(self.request_timeout(), "unsubscribe")
        return inner.unsubscribe(link_name)

    # -- what the handles use ------------------------------------------------------------------
    def io_failed(self, gen: int) -> bool:
        """Whether the wrapped connection ``gen`` is gone (so its failures are I/O, not refusals)."""
        if gen != self.gen or not self.online:
            return True
        return self.inner_failed()

    def forget_session(self, s: FailoverSession) -> None:
        with self.lock:
            if s in self._sessions:
                self._sessions.remove(s)

    def queue_send(self, pending: PendingSend, resend: bool = False) -> None:
        """Hold a send for the next connection; ``resend``: it was on the wire of the lost one
        (called on its I/O thread: never blocks). A new send blocks while the queue is full."""
        deadline = None
        timeout = self.config.seconds(self.config.send_timeout_ms)
        if timeout is not None:
            deadline = time.monotonic() + timeout
        with self._cond:
            if self._failure is not None or self._closed:
                exc = self._failure or IllegalStateException("the connection is closed")
                pending.fail(type(exc)(exc.reason, exc.error_code, exc))
                if pending.future is None and not resend:
                    raise type(exc)(exc.reason, exc.error_code, exc)
                return
            while not resend and len(self._sends) >= MAX_QUEUED_SENDS and not self.online \
                    and self._failure is None and not self._closed:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise JMSException(f"send timed out after {timeout} s: the connection is "
                                       "reconnecting (failover)")
                self._cond.wait(left)
            if not self.online or resend:
                self._sends.append(pending)
                return
        # it came back between the producer's check and now: send it on the new connection
        if not pending.run():
            self.queue_send(pending, resend=True)

    def when_online(self) -> Future[None]:
        """Completes when the connection is usable again (fails if it never will be)."""
        f: Future[None] = Future()
        with self._cond:
            if not self.online and self._failure is None and not self._closed:
                self._online_waiters.append(f)
                return f
        if self.online:
            f.set_result(None)
        else:
            f.set_exception(self._failure or IllegalStateException("the connection is closed"))
        return f

    def wake_online_waiters(self) -> None:
        with self._cond:
            waiters, self._online_waiters = self._online_waiters, []
            exc: JMSException | None = self._failure
            if exc is None and self._closed:
                exc = IllegalStateException("the connection is closed")
        for f in waiters:
            if exc is None:
                resolve(f)
            else:
                reject(f, exc)

    def wait_online(self, timeout: float | None, what: str) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                self._check_usable()
                if self.online and self._inner is not None:
                    return self._inner
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise JMSException(f"{what} timed out after {timeout} s: the connection is "
                                       "reconnecting (failover)")
                self._cond.wait(left)

    def _check_usable(self) -> None:
        if self._failure is not None:
            f = self._failure
            raise type(f)(f.reason, f.error_code, f)
        if self._closed:
            raise IllegalStateException("the connection is closed")

    def request_timeout(self) -> float | None:
        return self.config.seconds(self.config.request_timeout_ms)

    def _server(self, server: ConnectionConfig) -> ConnectionConfig:
        """A server's config with the connection-level settings the client may have changed."""
        c = self.config
        return server.replace(client_id=c.client_id, username=c.username, password=c.password,
                              token_provider=c.token_provider, cbs_token_provider=c.cbs_token_provider)

    def update_aliases(self) -> None:
        """Every earlier address of a live temporary destination -> its address now."""
        with self.lock:
            self.aliases = {old: t.address for t in self._temps for old in t.earlier}

    # -- what a Replay uses (its thread: the reconnect loop's) --------------------------------
    def temporaries(self) -> list[Temporary]:
        with self.lock:
            return list(self._temps)

    def live_sessions(self) -> list[FailoverSession]:
        """The sessions to re-create, in creation order (call with the lock held)."""
        return [s for s in self._sessions if not s.closed]

    def has_queued_sends(self) -> bool:
        return bool(self._sends)

    def set_online(self) -> None:
        """Everything is re-created and nothing waits to be sent (call with the lock held)."""
        self.online = True
        self._cond.notify_all()

    def flush_sends(self) -> None:
        """Send the queued sends in order on the new connection (outside the lock: a send may
        wait for its window). Sends the application makes meanwhile queue behind them."""
        while True:
            with self._cond:
                if not self._sends:
                    self._cond.notify_all()
                    return
                pending = self._sends[0]
            if not pending.run():
                raise JMSException("the connection was lost again while re-sending")
            with self._cond:
                if self._sends and self._sends[0] is pending:
                    self._sends.popleft()

    def inner_failed(self) -> bool:
        """Whether the wrapped connection of the moment has failed (or there is none)."""
        inner = self._inner
        return inner is None or inner.failure is not None

    # -- the reconnect loop (its own thread) ---------------------------------------------------
    def when_lost(self, gen: int, fn: Callable[[], None], answered: Future[Any]) -> None:
        """Call ``fn`` once connection ``gen`` is lost (now, if it already is), unless
        ``answered`` is done first: for a request whose answer went with the connection, which
        its I/O thread may never give once stopped."""
        with self._cond:
            if self.lost_gen < gen and not self._closed:
                calls = self._when_lost.setdefault(gen, [])
                calls.append(fn)

                def forget(_: Future[Any]) -> None:
                    with self._cond:
                        if fn in calls:
                            calls.remove(fn)
                        if not calls and self._when_lost.get(gen) is calls:
                            del self._when_lost[gen]

                answered.add_done_callback(forget)
                return
        fn()

    def lost(self, gen: int, exc: JMSException) -> None:
        """The wrapped connection ``gen`` died, or must be left (a link redirected): go offline
        and wake the loop (called on that connection's I/O thread)."""
        with self._cond:
            if gen != self.gen or self.lost_gen >= gen or self._closed:
                return
            self.lost_gen = gen
            self.online = False
            self._last_failure = exc
            self._cond.notify_all()
            calls = [fn for g in [g for g in self._when_lost if g <= gen] for fn in self._when_lost.pop(g)]
        self._wake.set()
        for fn in calls:  # outside the lock: each completes a future a caller waits on
            fn()

    def _main(self) -> None:
        last: JMSException = JMSException("failover could not connect to any server")
        lost_at: float | None = None
        while True:
            with self.lock:
                if self._closed:
                    return
            step = self._reconnector.next()
            if isinstance(step, GiveUp):
                self._give_up(last, step)
                return
            if step.warn:
                self.log.warning("failover: still failing to connect after %d attempts, retrying: %s",
                                 step.attempt - 1, last)
            if step.delay_ms and self.sleep(step.delay_s):
                return
            uri = _uri(step.server)
            try:
                self._attempt(step.server)
            except JMSException as e:
                last = e
                self._follow_redirect(e, step.server)
                # a refused login is final, except a SASL sys-temp (the server's temporary
                # trouble): that one is retried, as Qpid JMS does; so is the application's
                # client id refused at the first connect (a clash it must hear). A generated
                # container id refused is the server's trouble: the next server is tried (Qpid JMS)
                fatal = (isinstance(e, JMSSecurityException) and not (
                    isinstance(e, JMSSecuritySaslException) and e.sys_temp_failure)) or (
                    isinstance(e, InvalidClientIDException) and not self._reconnector.ever_connected
                    and self.config.client_id is not None)
                self.log.warning("failover: reconnect attempt %d to %s failed: %s", step.attempt, uri, e)
                self._reconnector.failed(fatal=fatal)
                continue
            first = not self._reconnector.ever_connected
            self._reconnector.connected()
            self.current_uri = uri
            if lost_at is not None:
                took = time.monotonic() - lost_at
                self.reconnects.append((uri, took))
                self.counters.reconnects += 1  # this thread is the only one writing it
                self.log.warning("failover: connection restored to %s after %.0f ms (attempt %d)",
                                 uri, took * 1000, step.attempt)
            self._notify("on_connection_established" if first else "on_connection_restored", uri)
            if first:
                self._connected_fut.set_result(None)
            with self._cond:  # until this connection is lost (or closed)
                while self.lost_gen < self.gen and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                self._wake.clear()
                sessions = list(self._sessions)
                last = self._last_failure
            self._follow_redirect(last, self._server_now)
            lost_at = time.monotonic()
            self.log.warning("failover: connection to %s lost, reconnecting: %s", uri, last)
            for s in sessions:
                for c in list(s.consumers):
                    c.interrupted()
            self._notify("on_connection_interrupted", uri)
            self._shutdown_inner()

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` (interrupted by close); True if closed."""
        self._wake.wait(seconds)
        with self.lock:
            return self._closed

    def _shutdown_inner(self) -> None:
        inner = self._inner
        if inner is not None:
            try:
                inner.shutdown()
            except Exception:  # a dead connection's thread: nothing to report
                self.log.debug("failover: shutting down the lost connection", exc_info=True)

    def _follow_redirect(self, exc: JMSException, current: ConnectionConfig | None) -> None:
        """A redirect (of the connection or of a link) puts its target first in the list; one
        from amqps to amqp only with ``amqp.allowNonSecureRedirects=true`` (Qpid JMS's rule)."""
        if not isinstance(exc, RedirectedException) or current is None:
            return
        try:
            target = server_from_redirect(exc.info, current)
        except JMSException as e:
            self.log.warning("failover: ignoring a redirect: %s", e)
            return
        self.log.info("failover: redirected to %s", _uri(target))
        self._reconnector.update_servers(add_first(self._reconnector.servers, target))

    def _attempt(self, server: ConnectionConfig) -> None:
        self._server_now = server
        gen = self.gen + 1
        prov = self._factory(self._server(server), connection_id=self.connection_id,
                             counters=self.counters, wrapped=True)
        with self.lock:
            if self._closed:
                prov.shutdown()
                raise IllegalStateException("the connection was closed")
            self._attempting = prov  # shutdown() stops it: a close never waits for a connect
        try:
            try:
                prov.wait(prov.connect(_InnerListener(self, gen)), None, "connect")
            finally:
                # the server list comes with the Open, also one the peer closes at once (a
                # redirect while connecting): Qpid JMS takes it then too
                self._take_server_list(prov, server)
            with self._cond:
                if self._closed:
                    raise IllegalStateException("the connection was closed")
                self._inner = prov
                self.gen = gen
            try:
                Replay(self, prov, gen).run()
            except (JMSSecurityException, InvalidClientIDException) as e:
                # a refused re-creation is not a refused login: the next attempt may succeed
                raise JMSException(f"re-creating what the connection held failed: {e.reason}",
                                   e.error_code, e) from e
        except BaseException:
            with self.lock:
                self.online = False
            try:
                prov.shutdown()
            except Exception:
                pass
            raise
        finally:
            self._attempting = None

    def _take_server_list(self, prov: Provider, server: ConnectionConfig) -> None:
        alternates = prov.alternate_servers()
        if alternates:
            servers = update_server_list(self._reconnector.servers, server, alternates,
                                         self.failover.reconnect.amqp_open_server_list_action)
            self._reconnector.update_servers(servers)

    def _give_up(self, last: JMSException, step: GiveUp) -> None:
        exc = type(last)(
            f"failover gave up after {step.attempts} attempt(s): {last.reason}", last.error_code, last)
        with self._cond:
            self._failure = exc
            self.online = False
            sends, self._sends = list(self._sends), deque()
            sessions = list(self._sessions)
            self._cond.notify_all()
        for s in sends:
            s.fail(exc)
        self.wake_online_waiters()
        for sess in sessions:
            for h in [sess, *sess.producers, *sess.consumers]:
                if not h.ready.done():
                    h.ready.set_exception(exc)
            for c in sess.consumers:
                c.sink.on_closed(exc)
        self._shutdown_inner()
        if not self._connected_fut.done():
            self._connected_fut.set_exception(exc)
            return
        listener = self._listener
        if listener is not None:
            listener.on_connection_failure(exc)

    def _notify(self, name: str, uri: str) -> None:
        listener = self._listener
        call = getattr(listener, name, None)
        if call is not None:
            try:
                call(uri)
            except Exception:  # an application callback must not stop failover
                self.log.exception("failover: %s raised", name)


def _uri(server: ConnectionConfig) -> str:
    return f"{server.scheme}://{server.host}:{server.port}"
