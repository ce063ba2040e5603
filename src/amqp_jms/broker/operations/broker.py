"""The public face: ``AsyncBroker`` (runs on the caller's event loop) and ``Broker`` (its own).

    with Broker() as broker:          # ephemeral loopback port, everything in memory
        url = broker.url              # "amqp://127.0.0.1:<port>"

    async with AsyncBroker(port=5672, data_dir="data") as broker:
        await broker.serve_forever()

``Broker`` runs an ``AsyncBroker`` on a named daemon thread with a private loop; ``start()`` and
``stop()`` block until the listener is up / everything is closed, and refuse to run on that
loop's own thread (which would deadlock).
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import ssl
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from ..._logs import BROKER as log
from ...exceptions import IllegalStateException
from ..limits import DEFAULT_IDLE_TIMEOUT, BrokerLimits
from ..protocol.login_throttle import LoginThrottle
from ..protocol.sasl import Users, load_users
from ..protocol.server import AmqpProtocol, ServerState
from ..protocol.tls import server_context
from ..routing.authorization import Authorization
from ..routing.cbs import CbsGrants, CbsValidator, sas_validator
from ..routing.core import BrokerCore
from ..routing.prefixes import AddressPrefixes
from ..routing.recovery import recover
from ..routing.tokens import CallableValidator, TokenValidator
from ..storage.large import SPOOL_PREFIX, SPOOL_SUFFIX
from ..storage.store import Store
from .management import ManagementNode
from .metrics import QUEUE_LABELS, MetricsSnapshot, snapshot, snapshot_sliced, with_process_figures
from .metrics_http import MetricsServer, parse_listen

__all__ = ["AsyncBroker", "Broker"]



class AsyncBroker:
    """An AMQP 1.0 broker serving on the running asyncio loop."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: str | Path | None = None,
        users: str | Path | dict[str, str] | Users | None = None,
        tls_cert: str | Path | None = None,
        tls_key: str | Path | None = None,
        *,
        dlq: str = "DLQ",
        max_delivery_attempts: int = 0,
        idle_timeout_s: float | None = None,
        max_frame_size: int | None = None,
        memory_limit: int | None = None,
        container_id: str = "amqp-jms-broker",
        tls_ca: str | Path | None = None,
        limits: BrokerLimits | None = None,
        address_prefixes: tuple[str, str] | None = None,
        authorization: Authorization | None = None,
        max_failed_logins: int = 10,
        failed_login_window_s: float = 60.0,
        metrics: str | None = None,
        metrics_token: str | None = None,
        metrics_queue_labels: str = "names",
        console: bool = False,
        console_allow_anonymous_actions: bool = False,
        ws_port: int | None = None,
        ws_path: str = "/",
        token_validator: TokenValidator | Callable[[str, str], str] | None = None,
        cbs_keys: dict[str, str] | None = None,
        cbs_validator: CbsValidator | None = None,
        require_client_certificate: bool = False,
    ) -> None:
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key must be given together")
        if tls_ca is not None and tls_cert is None:
            raise ValueError("tls_ca (client certificates) needs tls_cert and tls_key")
        if require_client_certificate and tls_ca is None:
            raise ValueError("require_client_certificate needs tls_ca (the CA client certificates chain to)")
        #: every TLS client must present a certificate ``tls_ca`` verifies (mutual TLS)
        self.require_client_certificate = require_client_certificate
        self.tls_ca = tls_ca
        self.host = host
        self._port = port
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.users: Users = load_users(users)
        if authorization is not None and self.users.anonymous and not self.users.passwords:
            # without a users list PLAIN takes any name with any password: roles would be for show
            raise ValueError("authorization needs users: without them anyone may log in as any name")
        self.tls_cert = tls_cert
        self.tls_key = tls_key
        self.dlq = dlq
        self.max_delivery_attempts = max_delivery_attempts
        # None: the default (60 s, as RabbitMQ and Artemis); 0: none
        self.idle_timeout_s = DEFAULT_IDLE_TIMEOUT if idle_timeout_s is None else (idle_timeout_s or None)
        # ``max_frame_size`` and ``memory_limit`` are older spellings of two fields of ``limits``
        self.limits: BrokerLimits = (limits or BrokerLimits()).replace(
            max_frame_size=max_frame_size, queue_memory_limit=memory_limit
        )
        self.container_id = container_id
        #: ``(queue_prefix, topic_prefix)``: address nodes as ActiveMQ/Artemis do (prefix mode,
        #: :mod:`.prefixes`); None (the default) = terminus capabilities decide node types
        self.address_prefixes = address_prefixes
        AddressPrefixes.of(address_prefixes)  # a bad value fails here, not at start()
        self.logins = LoginThrottle(max_failed_logins, failed_login_window_s)
        #: ``(host, port)`` of the Prometheus endpoint (``metrics="127.0.0.1:9464"``), None = off
        self.metrics_address = parse_listen(metrics) if metrics is not None else None
        #: a token ``/metrics`` asks for (Bearer, or Basic with it as password); None = open
        self.metrics_token = metrics_token
        if metrics_queue_labels not in QUEUE_LABELS:
            raise ValueError(f"metrics_queue_labels must be one of {', '.join(QUEUE_LABELS)}, "
                             f"not {metrics_queue_labels!r}")
        #: how ``/metrics`` names queues and topics (``metrics.QUEUE_LABELS``)
        self.metrics_queue_labels = metrics_queue_labels
        #: the web console on the same HTTP listener (``console/``); without ``metrics`` it
        #: listens on loopback port 8161 (ActiveMQ's console port)
        self.console = console
        self.console_allow_anonymous_actions = console_allow_anonymous_actions
        if console and self.metrics_address is None:
            self.metrics_address = ("127.0.0.1", 8161)
        self._metrics_server: MetricsServer | None = None
        # the dead-letter queue the rules protect is this broker's
        self.authorization = (
            dataclasses.replace(authorization, dlq=dlq) if authorization is not None else None
        )
        #: the WebSocket listener (AMQP over WebSocket, subprotocol ``amqp``; TLS as the TCP
        #: listener is): its port (0 = any free one) and the path it answers at; None = off
        self._ws_port = ws_port
        self.ws_path = ws_path if ws_path.startswith("/") else f"/{ws_path}"
        self._ws_server: asyncio.base_events.Server | None = None
        #: XOAUTH2: who decides on bearer tokens (``routing/tokens.py``: a JwtValidator, or a
        #: callable ``(user, token) -> identity``); None = XOAUTH2 not offered
        self.token_validator: TokenValidator | None = (
            CallableValidator(token_validator)
            if token_validator is not None and not hasattr(token_validator, "validate")
            else token_validator
        )
        #: the ``$cbs`` node (claims-based security, ``routing/cbs.py``): SAS keys by policy name,
        #: or a validator ``(token, type, audience) -> expiry``; with either, every link needs a
        #: token put on ``$cbs`` for its address
        if cbs_keys is not None and cbs_validator is not None:
            raise ValueError("give cbs_keys or cbs_validator, not both")
        self.cbs_validator: CbsValidator | None = (
            sas_validator(cbs_keys) if cbs_keys is not None else cbs_validator)
        self.core: BrokerCore | None = None
        self._server: asyncio.base_events.Server | None = None
        self._state: ServerState | None = None
        self._store: Store | None = None
        self._own_spill: Path | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        scheme = "amqps" if self.tls_cert else "amqp"
        return f"{scheme}://{self.host}:{self._port}"

    @property
    def ws_port(self) -> int | None:
        return self._ws_port

    @property
    def ws_url(self) -> str | None:
        """``amqpws[s]://host:port/path`` of the WebSocket listener, None when it is off."""
        if self._ws_port is None:
            return None
        scheme = "amqpwss" if self.tls_cert else "amqpws"
        return f"{scheme}://{self.host}:{self._ws_port}{self.ws_path}"

    @property
    def metrics_url(self) -> str | None:
        """``http://host:port/metrics`` once started with ``metrics=...``, else None."""
        return self._metrics_server.url if self._metrics_server is not None else None

    @property
    def console_url(self) -> str | None:
        """``http(s)://host:port/`` of the web console once started with ``console=True``."""
        server = self._metrics_server
        return server.base_url + "/" if server is not None and server.console is not None else None

    def metrics(self) -> MetricsSnapshot:
        """The broker's metrics now (per queue and broker-wide; see :mod:`.metrics`). Call it on
        the broker's loop; ``Broker.metrics()`` from any other thread."""
        if self.core is None:
            raise IllegalStateException("broker not started")
        return with_process_figures(snapshot(self.core), self.core.store)

    async def start(self) -> None:
        if self._server is not None:
            raise IllegalStateException("broker already started")
        loop = asyncio.get_running_loop()
        store = self._open_store(loop)
        self._store = store
        spill_dir = self._spill_dir()
        core = BrokerCore(
            loop,
            spill_dir=str(spill_dir),
            store=store,
            container_id=self.container_id,
            dlq=self.dlq,
            max_delivery_attempts=self.max_delivery_attempts,
            limits=self.limits,
            address_prefixes=self.address_prefixes,
            management=ManagementNode,
        )
        core.authorization = self.authorization
        if self.cbs_validator is not None:
            core.cbs = CbsGrants(self.cbs_validator)
        self.core = core
        recover(core, store)
        self._state = ServerState(
            core, self.users, idle_timeout_s=self.idle_timeout_s, limits=self.limits,
            logins=self.logins, token_validator=self.token_validator,
        )
        ctx = self._ssl_context()
        state = self._state
        # the TLS handshake comes before the protocol exists: give it the handshake limit too
        tls_timeout = (self.limits.handshake_timeout or None) if ctx is not None else None
        self._server = await loop.create_server(
            lambda: AmqpProtocol(state), self.host, self._port, ssl=ctx, reuse_address=True,
            ssl_handshake_timeout=tls_timeout,
        )
        sock = self._server.sockets[0]
        self._port = int(sock.getsockname()[1])
        if self._ws_port is not None:
            from ..protocol.websocket import WebSocketProtocol

            path = self.ws_path
            self._ws_server = await loop.create_server(
                lambda: WebSocketProtocol(state, path), self.host, self._ws_port, ssl=ctx,
                reuse_address=True, ssl_handshake_timeout=tls_timeout,
            )
            self._ws_port = int(self._ws_server.sockets[0].getsockname()[1])
            log.info("broker listening on %s", self.ws_url)
        if self.metrics_address is not None:
            await self._start_metrics(loop, core, store)
        log.info("broker listening on %s (data_dir=%s)", self.url, self.data_dir)

    async def _start_metrics(self, loop: asyncio.AbstractEventLoop, core: BrokerCore, store: Store) -> None:
        assert self.metrics_address is not None
        take = lambda: snapshot_sliced(core)  # noqa: E731
        finish = lambda snap: with_process_figures(snap, store)  # noqa: E731
        console = None
        if self.console:
            from .console import Console
            from .console_backend import BrokerConsoleBackend

            node = core.management
            assert isinstance(node, ManagementNode)
            console = Console(BrokerConsoleBackend(core, node, self.users, loop, take, finish),
                              allow_anonymous_actions=self.console_allow_anonymous_actions)
        # the console is served over TLS when the AMQP listener is (a browser has no client
        # certificate: the console asks for none)
        tls = (server_context(self.tls_cert, self.tls_key, None)
               if console is not None and self.tls_cert is not None and self.tls_key is not None else None)
        server = MetricsServer(*self.metrics_address, loop, take, finish, console=console, ssl_context=tls,
                               token=self.metrics_token, queue_labels=self.metrics_queue_labels)
        try:
            await loop.run_in_executor(None, server.start)  # binding waits for another thread
        except BaseException:
            await self.stop()
            raise
        self._metrics_server = server
        log.info("broker metrics on %s", server.url)

    def _open_store(self, loop: asyncio.AbstractEventLoop) -> Store:
        if self.data_dir is None:
            from ..storage.store import MemoryStore

            return MemoryStore()
        from ..storage.sqlite_store import SQLiteStore

        self.data_dir.mkdir(parents=True, exist_ok=True)
        return SQLiteStore(self.data_dir / "broker.sqlite", loop)

    def _spill_dir(self) -> Path:
        """Where paged queues and large messages go: ``limits.spill_dir``, else ``<data-dir>/spill``,
        else a directory of this broker's own (removed at stop) under the system temp directory."""
        if self.limits.spill_dir:
            path = Path(self.limits.spill_dir)
        elif self.data_dir is not None:
            path = self.data_dir / "spill"
        else:
            self._own_spill = Path(tempfile.mkdtemp(prefix="amqp-jms-broker-"))
            return self._own_spill
        path.mkdir(parents=True, exist_ok=True)
        for pattern in ("amqp-jms-spill-*.db", f"{SPOOL_PREFIX}*{SPOOL_SUFFIX}"):
            for stale in path.glob(pattern):  # scratch of a broker that died: not data
                stale.unlink(missing_ok=True)
        return path

    def _ssl_context(self) -> ssl.SSLContext | None:
        if self.tls_cert is None or self.tls_key is None:
            return None
        return server_context(self.tls_cert, self.tls_key, self.tls_ca,
                              require_client_certificate=self.require_client_certificate)

    async def stop(self) -> None:
        server, state = self._server, self._state
        if server is None:
            return
        self._server = None
        server.close()
        if self._ws_server is not None:
            self._ws_server.close()
            self._ws_server = None
        if self._metrics_server is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._metrics_server.stop)
            self._metrics_server = None
        if state is not None:
            for p in list(state.protocols):
                p.shutdown()
            for _ in range(50):
                if not state.protocols:
                    break
                await asyncio.sleep(0.01)
            for p in list(state.protocols):
                if p.transport is not None:
                    p.transport.abort()
        await server.wait_closed()
        if self.core is not None:
            self.core.cancel_timers()
            self.core.close_queues()
        if self._store is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._store.close)
            self._store = None
        if self._own_spill is not None:
            shutil.rmtree(self._own_spill, ignore_errors=True)
            self._own_spill = None
        log.info("broker stopped")

    async def serve_forever(self) -> None:
        if self._server is None:
            raise IllegalStateException("broker not started")
        await self._server.serve_forever()

    async def __aenter__(self) -> AsyncBroker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class Broker:
    """The broker on its own event-loop thread: for tests, scripts and synchronous programs."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, data_dir: str | Path | None = None,
                 users: str | Path | dict[str, str] | Users | None = None, tls_cert: str | Path | None = None,
                 tls_key: str | Path | None = None, **options: Any) -> None:
        self._async = AsyncBroker(host, port, data_dir, users, tls_cert, tls_key, **options)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._async.port

    @property
    def url(self) -> str:
        return self._async.url

    @property
    def ws_url(self) -> str | None:
        """The WebSocket listener's ``amqpws[s]://`` URL (``ws_port=``), None when off."""
        return self._async.ws_url

    @property
    def ws_port(self) -> int | None:
        return self._async.ws_port

    @property
    def core(self) -> BrokerCore | None:
        return self._async.core

    @property
    def metrics_url(self) -> str | None:
        """``http://host:port/metrics`` when started with ``metrics="host:port"``, else None."""
        return self._async.metrics_url

    @property
    def console_url(self) -> str | None:
        """``http(s)://host:port/`` of the web console when started with ``console=True``."""
        return self._async.console_url

    def metrics(self) -> MetricsSnapshot:
        """The broker's metrics now: per queue depth, counts and consumers, connections, sessions,
        links, failed logins, memory and store size (:class:`~.metrics.MetricsSnapshot`)."""
        core = self._async.core
        if core is None:
            raise IllegalStateException("broker not started")
        snap: MetricsSnapshot = self.run_soon(snapshot, core)
        return with_process_figures(snap, core.store)

    def start(self, timeout: float = 30.0) -> Broker:
        if self._thread is not None:
            raise IllegalStateException("broker already started")
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"amqp-jms-broker-{id(self):x}", daemon=True)
        self._thread.start()
        ready.wait(timeout)
        try:
            self.call(self._async.start(), timeout)
        except BaseException:
            self._halt()
            raise
        return self

    def call(self, coro: Any, timeout: float | None = 30.0) -> Any:
        """Run a coroutine on the broker's loop and wait for its result."""
        loop = self._loop
        if loop is None:
            coro.close()
            raise IllegalStateException("broker not started")
        if threading.current_thread() is self._thread:
            coro.close()
            raise IllegalStateException("blocking broker call made on the broker's own loop thread")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)

    def run_soon(self, fn: Any, *args: Any) -> Any:
        """Run a plain function on the broker's loop and wait for its result (inspection, tests)."""

        async def wrap() -> Any:
            return fn(*args)

        return self.call(wrap())

    def stop(self, timeout: float = 30.0) -> None:
        if self._loop is None:
            return
        try:
            self.call(self._async.stop(), timeout)
        finally:
            self._halt()

    def _halt(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = None
        self._thread = None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(10)

    async def start_async(self) -> None:
        """Serve on the caller's running loop instead of a private thread."""
        await self._async.start()

    async def stop_async(self) -> None:
        await self._async.stop()

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
