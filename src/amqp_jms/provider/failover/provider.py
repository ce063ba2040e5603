"""``FailoverProvider``: a connection that survives brokers restarting, moving and failing.

It wraps one provider at a time behind the provider interface (Qpid JMS's FailoverProvider):
the JMS layer holds the stable handles of :mod:`.handles`, what the connection remembers across
wrapped connections is one :class:`~.state.FailoverState`, and this object is the policy acting
on it: the reconnect loop, redirects, giving up, closing. One daemon thread per connection
runs the loop: ask the :class:`Reconnector` where to go next, wait its delay, connect (same
container id, same connection id), re-create what the application holds, re-send what the lost
connection never answered, then wait for the next loss. Only when the reconnector gives up
does the client hear of a failure (its ExceptionListener), as in Qpid JMS.

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
from typing import Any

from ..._logs import PROVIDER, IdsAdapter, with_ids
from ...exceptions import (
    IllegalStateException,
    InvalidClientIDException,
    JMSException,
    JMSSecurityException,
    JMSSecuritySaslException,
)
from ..base import Capabilities, Provider, ProviderListener, ProviderSession, ReadableAnswer
from ..config import ConnectionConfig
from ..errors import RedirectedException
from ..loop import wait_for
from ..metrics import Counters
from ..tracing import tracing_for
from .futures import done_future, failure_of, reject, resolve
from .handles import FailoverSession
from .reconnect import GiveUp, Reconnector
from .replay import Replay
from .servers import add_first, server_from_redirect, update_server_list
from .state import FailoverState
from .uri import FailoverConfig

__all__ = ["FailoverProvider"]

Future = concurrent.futures.Future


class _InnerListener:
    """The listener of one wrapped connection (``gen``): its loss starts a reconnect."""

    def __init__(self, fp: FailoverProvider, gen: int) -> None:
        self.fp = fp
        self.gen = gen

    def on_connection_failure(self, exc: JMSException) -> None:
        self.fp.state.lose(self.gen, exc)

    def on_async_exception(self, exc: JMSException) -> None:
        listener = self.fp._listener
        if listener is not None and self.gen == self.fp.state.gen:
            listener.on_async_exception(exc)

    # the failover provider tells its own listener of these, once the re-creation is done
    def on_connection_established(self, uri: str) -> None:
        pass

    def on_connection_interrupted(self, uri: str) -> None:
        pass

    def on_connection_restored(self, uri: str) -> None:
        pass


class FailoverProvider(Provider):
    """The provider for one ``failover:`` connection: the policy acting on its
    :class:`~.state.FailoverState` (``state``)."""

    def __init__(
        self,
        failover: FailoverConfig,
        config: ConnectionConfig | None = None,
        connection_id: str | None = None,
        provider_factory: Any = None,
    ) -> None:
        from ..amqp.connection import AmqpProvider, generate_connection_id

        self.failover = failover
        #: stable for the connection's life: every wrapped connection carries it
        self.connection_id = connection_id = connection_id or generate_connection_id()
        #: the connection-level settings (client id, credentials, timeouts): the first server's
        #: unless the client passes its own (set_client_id, create_connection(user, password))
        config = config or failover.servers[0]
        #: one set of counters for the connection's life, shared by every wrapped connection
        self.counters = Counters(connection_id)
        self._factory = provider_factory or AmqpProvider
        self._listener: ProviderListener | None = None
        self._thread: threading.Thread | None = None
        #: everything the connection remembers across the wrapped connections under it
        self.state = FailoverState(
            config,
            connection_id,
            Reconnector(failover.reconnect, [_with_settings(s, config) for s in failover.servers]),
            # every line about this connection names it, whichever server it is on
            with_ids(PROVIDER, connection=connection_id),
            # for the sends made on the reconnect thread; each wrapped connection has its own
            tracing_for(config),
        )

    # -- what the state holds, as the client and the tools read it ----------------------------
    @property
    def config(self) -> ConnectionConfig:
        return self.state.config

    @config.setter
    def config(self, config: ConnectionConfig) -> None:
        self.state.config = config

    @property
    def log(self) -> IdsAdapter:
        return self.state.log

    @property
    def lock(self) -> threading.RLock:
        return self.state.lock

    @property
    def online(self) -> bool:
        """Connected, with everything re-created and nothing left to re-send."""
        return self.state.online

    @property
    def gen(self) -> int:
        """Which wrapped connection is under this one: one more per connect."""
        return self.state.gen

    @property
    def lost_gen(self) -> int:
        """The last wrapped connection reported lost."""
        return self.state.lost_gen

    @property
    def current_uri(self) -> str | None:
        return self.state.current_uri

    @property
    def reconnects(self) -> list[tuple[str, float]]:
        """(uri, seconds from loss to restored) for each reconnect made."""
        return self.state.reconnects

    def inner_failed(self) -> bool:
        return self.state.inner_failed()

    def wait_online(self, timeout: float | None, what: str) -> Provider:
        return self.state.wait_online(timeout, what)

    # -- the client's view ---------------------------------------------------------------------
    @property
    def failure(self) -> JMSException | None:
        """Set only once failover has given up (or the connection closed after it did)."""
        return self.state.failure

    @property
    def remote_capabilities(self) -> frozenset[str]:
        inner = self.state.inner
        return inner.remote_capabilities if inner is not None else frozenset()

    @property
    def capabilities(self) -> Capabilities:
        """Those of the peer connected now (they may change when the connection moves)."""
        inner = self.state.inner
        return inner.capabilities if inner is not None else Capabilities()

    @property
    def remote_uri(self) -> str:
        return self.state.current_uri or _uri(self.config)

    @property
    def container_id(self) -> str:
        return self.config.client_id or self.connection_id

    @property
    def servers(self) -> tuple[ConnectionConfig, ...]:
        return self.state.reconnector.servers

    @property
    def closed(self) -> bool:
        return self.state.closed

    def set_client_id(self, client_id: str) -> None:
        self.config = self.config.replace(client_id=client_id)

    def connect(self, listener: ProviderListener) -> Future[None]:
        self._listener = listener
        self._thread = threading.Thread(target=self._main, name="amqp-jms-failover", daemon=True)
        self._thread.start()
        return self.state.connected

    def on_io_thread(self) -> bool:
        inner = self.state.inner
        return inner is not None and inner.on_io_thread()

    def server_epoch(self) -> int | None:
        """The generation of the wrapped connection, ``None`` while offline."""
        state = self.state
        with state.lock:
            if not state.online or state.inner_failed():
                return None
            return int(state.gen)

    def wait(self, fut: Future[Any], timeout: float | None, what: str) -> Any:
        if self.on_io_thread():
            raise IllegalStateException(f"{what} called on the connection's I/O thread: it would deadlock")
        return wait_for(fut, timeout, what, self.answer_here)

    def answer_here(self, fut: Future[Any], timeout: float | None) -> None:
        wrapped = self._wrapped_answer(fut)
        if wrapped is not None:
            wrapped[0].answer_here(wrapped[1], timeout)

    def answer_on_loop(self, fut: Future[Any], loop: Any, timeout: float | None) -> None:
        wrapped = self._wrapped_answer(fut)
        if wrapped is not None:
            wrapped[0].answer_on_loop(wrapped[1], loop, timeout)

    def _wrapped_answer(self, fut: Future[Any]) -> tuple[Provider, Future[Any]] | None:
        """The wrapped connection and its own future for ``fut``, when a waiting caller may
        read the answer there: the wrapped connection's answer resolves ``fut`` through its
        done-callbacks, on whichever thread resolves the wrapped future (the caller's, when it
        reads the answer)."""
        inner = self.state.inner
        if inner is None or not self.state.online or not isinstance(fut, ReadableAnswer):
            return None
        return inner, fut.relays or fut

    def create_session(self, transacted: bool) -> Future[ProviderSession]:
        state = self.state
        with state.lock:
            s = FailoverSession(state, transacted, state.next_session_number())
            state.check_usable()
            state.sessions.append(s)
            # (a connection that failed but is not reported lost yet is offline too: its I/O
            # thread may be gone, and the replay creates the session on the next one)
            inner, gen = (state.inner, state.gen) if state.online and not state.inner_failed() else (None, -1)
        if inner is not None:
            s.bind_when_created(inner.create_session(transacted), gen)
        return s.ready

    def close(self) -> Future[None]:
        state = self.state
        with state.lock:
            if state.closed:
                return done_future()
            state.closed = True
            inner = state.inner if state.online else None
            state.online = False
            sends = state.take_sends()
            state.cond.notify_all()
        state.wake.set()
        for s in sends:
            s.fail(IllegalStateException("the connection was closed before the message could be sent"))
        state.wake_online_waiters()
        if not state.connected.done():
            state.connected.set_exception(IllegalStateException("the connection was closed"))
        if inner is None:
            return done_future()
        return inner.close()

    def shutdown(self) -> None:
        state = self.state
        with state.lock:
            state.closed = True
            inner, attempting = state.inner, state.attempting
            state.cond.notify_all()
        state.wake.set()
        for prov in (inner, attempting):
            if prov is not None:
                prov.shutdown()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(5.0)

    def create_temporary(self, topic: bool) -> Future[str]:
        out: Future[str] = Future()
        inner = self.state.wait_online(self.state.request_timeout(), "create a temporary destination")

        def done(f: Future[str]) -> None:
            exc = failure_of(f)
            if exc is not None:
                reject(out, exc)
                return
            address = f.result()
            self.state.add_temporary(address, topic)
            resolve(out, address)

        inner.create_temporary(topic).add_done_callback(done)
        return out

    def delete_temporary(self, address: str) -> Future[None]:
        state = self.state
        with state.lock:
            temp = state.remove_temporary(address)
            inner = state.inner if state.online else None
        if inner is None or temp is None:
            return done_future()
        return inner.delete_temporary(temp.address)

    def unsubscribe(self, link_name: str) -> Future[None]:
        inner = self.state.wait_online(self.state.request_timeout(), "unsubscribe")
        return inner.unsubscribe(link_name)

    # -- the reconnect loop (its own thread) ---------------------------------------------------
    def _main(self) -> None:
        state = self.state
        reconnector = state.reconnector
        last: JMSException = JMSException("failover could not connect to any server")
        lost_at: float | None = None
        while True:
            with state.lock:
                if state.closed:
                    return
            step = reconnector.next()
            if isinstance(step, GiveUp):
                self._give_up(last, step)
                return
            if step.warn:
                self.log.warning("failover: still failing to connect after %d attempts, retrying: %s",
                                 step.attempt - 1, last)
            if step.delay_ms and state.sleep(step.delay_s):
                return
            uri = _uri(step.server)
            try:
                self._attempt(step.server)
            except JMSException as e:
                last = e
                self.follow_redirect(e, step.server)
                # a refused login is final, except a SASL sys-temp (the server's temporary
                # trouble): that one is retried, as Qpid JMS does; so is the application's
                # client id refused at the first connect (a clash it must hear). A generated
                # container id refused is the server's trouble: the next server is tried (Qpid JMS)
                fatal = (isinstance(e, JMSSecurityException) and not (
                    isinstance(e, JMSSecuritySaslException) and e.sys_temp_failure)) or (
                    isinstance(e, InvalidClientIDException) and not reconnector.ever_connected
                    and self.config.client_id is not None)
                self.log.warning("failover: reconnect attempt %d to %s failed: %s", step.attempt, uri, e)
                reconnector.failed(fatal=fatal)
                continue
            first = not reconnector.ever_connected
            reconnector.connected()
            state.current_uri = uri
            if lost_at is not None:
                took = time.monotonic() - lost_at
                state.reconnects.append((uri, took))
                self.counters.reconnects += 1  # this thread is the only one writing it
                self.log.warning("failover: connection restored to %s after %.0f ms (attempt %d)",
                                 uri, took * 1000, step.attempt)
            self._notify("established" if first else "restored", uri)
            if first:
                state.connected.set_result(None)
            with state.cond:  # until this connection is lost (or closed)
                while state.lost_gen < state.gen and not state.closed:
                    state.cond.wait()
                if state.closed:
                    return
                state.wake.clear()
                sessions = list(state.sessions)
                last = state.last_failure
            self.follow_redirect(last, state.server_now)
            lost_at = time.monotonic()
            self.log.warning("failover: connection to %s lost, reconnecting: %s", uri, last)
            for s in sessions:
                s.interrupted()
            self._notify("interrupted", uri)
            self._shutdown_inner()

    def _shutdown_inner(self) -> None:
        inner = self.state.inner
        if inner is not None:
            try:
                inner.shutdown()
            except Exception:  # a dead connection's thread: nothing to report
                self.log.debug("failover: shutting down the lost connection", exc_info=True)

    def follow_redirect(self, exc: JMSException, current: ConnectionConfig | None) -> None:
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
        reconnector = self.state.reconnector
        reconnector.update_servers(add_first(reconnector.servers, target))

    def _attempt(self, server: ConnectionConfig) -> None:
        state = self.state
        state.server_now = server
        gen = state.gen + 1
        prov = self._factory(_with_settings(server, self.config), connection_id=self.connection_id,
                             counters=self.counters, wrapped=True)
        with state.lock:
            if state.closed:
                prov.shutdown()
                raise IllegalStateException("the connection was closed")
            state.attempting = prov  # shutdown() stops it: a close never waits for a connect
        try:
            try:
                prov.wait(prov.connect(_InnerListener(self, gen)), None, "connect")
            finally:
                # the server list comes with the Open, also one the peer closes at once (a
                # redirect while connecting): Qpid JMS takes it then too
                self._take_server_list(prov, server)
            with state.cond:
                if state.closed:
                    raise IllegalStateException("the connection was closed")
                state.inner = prov
                state.gen = gen
            try:
                Replay(state, prov, gen).run()
            except (JMSSecurityException, InvalidClientIDException) as e:
                # a refused re-creation is not a refused login: the next attempt may succeed
                raise JMSException(f"re-creating what the connection held failed: {e.reason}",
                                   e.error_code, e) from e
        except BaseException:
            with state.lock:
                state.online = False
            try:
                prov.shutdown()
            except Exception:
                pass
            raise
        finally:
            state.attempting = None

    def _take_server_list(self, prov: Provider, server: ConnectionConfig) -> None:
        alternates = prov.alternate_servers()
        if alternates:
            reconnector = self.state.reconnector
            servers = update_server_list(reconnector.servers, server, alternates,
                                         self.failover.reconnect.amqp_open_server_list_action)
            reconnector.update_servers(servers)

    def _give_up(self, last: JMSException, step: GiveUp) -> None:
        state = self.state
        exc = type(last)(
            f"failover gave up after {step.attempts} attempt(s): {last.reason}", last.error_code, last)
        with state.cond:
            state.failure = exc
            state.online = False
            sends = state.take_sends()
            sessions = list(state.sessions)
            state.cond.notify_all()
        for s in sends:
            s.fail(exc)
        state.wake_online_waiters()
        for sess in sessions:
            sess.gave_up(exc)
        self._shutdown_inner()
        if not state.connected.done():
            state.connected.set_exception(exc)
            return
        listener = self._listener
        if listener is not None:
            listener.on_connection_failure(exc)

    def _notify(self, event: str, uri: str) -> None:
        """Tell the client's listener the connection was ``event`` ("established", "restored",
        "interrupted"), through the methods ``ProviderListener`` declares."""
        listener = self._listener
        if listener is None:
            return
        try:
            call = {"established": listener.on_connection_established,
                    "restored": listener.on_connection_restored,
                    "interrupted": listener.on_connection_interrupted}[event]
            call(uri)
        except Exception:  # an application callback must not stop failover
            self.log.exception("failover: on_connection_%s raised", event)


def _uri(server: ConnectionConfig) -> str:
    return f"{server.scheme}://{server.host}:{server.port}"


def _with_settings(server: ConnectionConfig, config: ConnectionConfig) -> ConnectionConfig:
    """A server's config with the connection-level settings the client may have changed."""
    return server.replace(client_id=config.client_id, username=config.username, password=config.password,
                          token_provider=config.token_provider, cbs_token_provider=config.cbs_token_provider)
