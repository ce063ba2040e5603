"""The AMQP provider: one socket, one proton ``Engine``, one asyncio loop thread.

``AmqpProvider`` is an adapter in the uvicorn shape: an ``asyncio.Protocol`` feeds the engine
the bytes it reads, every batch of work ends with one ``_flush`` (process events, write what
proton produced, re-arm the heartbeat timer). Protocol state (proton objects, our resource
objects) is touched only on the loop thread; the JMS layer reaches it through futures
(``submit``/``run``) or batched posts (``LoopThread.post``).
What the peer's Open and Close mean (capabilities, prefixes, the exception a close turns into) is
in :mod:`amqp_jms.provider.amqp.open_close`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import ssl
import sys
import uuid
from collections.abc import Callable
from typing import Any

from proton import Event, symbol

from ..._logs import PROVIDER, with_ids
from ..._reading import KeptBufferProtocol
from ...engine import Engine
from ...engine.raw import ffi, lib, ptr_addr
from ...exceptions import IllegalStateException, JMSException, JMSSecurityException
from ..base import Capabilities, DrainOutcome, Provider, ProviderListener, ProviderSession, SendOutcome
from ..config import ConnectionConfig
from ..errors import tls_error, tls_file_error
from ..frames import frame_logger
from ..loop import LoopThread, wait_for
from ..metrics import Counters
from ..redirects import alternates_from_open
from ..tracing import tracing_for
from . import write_through
from .cbs import CbsClient
from .open_close import OpenCloseHandling
from .outgoing import OutgoingFrames
from .proxy import open_tunnel
from .terminus import symbol_array
from .wire import Wire, WireError, sasl_credentials

__all__ = ["AmqpProvider", "generate_connection_id"]

_event_type, _event_delivery, _delivery_link = lib.pn_event_type, lib.pn_event_delivery, lib.pn_delivery_link
_PN_DELIVERY, _PN_LINK_FLOW, _event_link = lib.PN_DELIVERY, lib.PN_LINK_FLOW, lib.pn_event_link
#: the events ``_dispatch`` acts on; the rest (transport, local endpoint state, ...) are dropped
#: before proton's Python layer wraps them: a sent message raises several of those
_HANDLED = frozenset(
    getattr(lib, f"PN_{name}")
    for name in (
        "DELIVERY", "LINK_FLOW", "LINK_REMOTE_OPEN", "LINK_REMOTE_CLOSE", "LINK_REMOTE_DETACH",
        "SESSION_REMOTE_OPEN", "SESSION_REMOTE_CLOSE", "CONNECTION_REMOTE_OPEN",
        "CONNECTION_REMOTE_CLOSE", "TRANSPORT_ERROR", "TRANSPORT_CLOSED",
    )
)

DESIRED_CAPABILITIES = ("sole-connection-for-container", "DELAYED_DELIVERY", "ANONYMOUS-RELAY", "SHARED-SUBS")
_conn_counter = itertools.count(1)
_process_uuid = str(uuid.uuid4())


#: how long a waiting caller reads the socket for itself (``AmqpProvider.answer_here``) before it
#: leaves the answer to the I/O thread: the longest the loop's own timers can be held up by it
READ_HERE_SECONDS = 0.02
#: how often a waiting caller that reads answers for itself tells proton the peer is alive: a
#: tick per answer (one every few hundred µs) cost more than the rest of reading it
TICK_HERE_SECONDS = 0.05


_cast = ffi.cast


def _as_delivery(address: int) -> Any:
    """The ``pn_delivery_t *`` at ``address`` (what ``write_through`` returns), as cffi holds it."""
    return _cast("pn_delivery_t *", address)

def _nothing() -> None:
    """A wake-up of the loop with nothing to do but what is queued already."""


class NotIdle(Exception):
    """``write_if_idle`` found the connection unfit for a direct write after all; raised by its
    ``op`` too, before doing anything, to have the work handed over instead."""


def _read_budget(timeout: float | None) -> float:
    """How long a caller's own read may hold the socket: ``timeout``, at most
    ``READ_HERE_SECONDS``."""
    return READ_HERE_SECONDS if timeout is None else min(timeout, READ_HERE_SECONDS)


def generate_connection_id() -> str:
    """``ID:<uuid>:<n>``, the Qpid JMS connection id form (also the default container-id)."""
    return f"ID:{_process_uuid}:{next(_conn_counter)}"


class _Protocol(KeptBufferProtocol):
    def __init__(self, provider: AmqpProvider) -> None:
        self.provider = provider

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.provider._transport = transport
        self.provider._direct_writes = type(transport).__name__ == "_SelectorSocketTransport"
        sock = transport.get_extra_info("socket")
        self.provider._socket_fd = sock.fileno() if sock is not None else None
        if sock is not None and self.provider.config.transport.tcp_no_delay:
            import socket

            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.provider.flush()

    def data_received(self, data: bytes) -> None:
        self.provider._on_data(data)

    def eof_received(self) -> bool:
        self.provider._on_data(b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        fd = self.provider._socket_fd
        if fd is not None and self.provider.loop_thread.lending.recall(fd):
            # another thread's event loop still holds a duplicate of the socket: shut it down,
            # so that its end reaches the peer now, not when that loop lets the duplicate go
            sock = self.provider._transport.get_extra_info("socket") if self.provider._transport else None
            if sock is not None:
                import socket

                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.provider._on_socket_lost(exc)


def _ssl_context(config: ConnectionConfig) -> ssl.SSLContext:
    t = config.transport
    try:
        ctx = ssl.create_default_context(cafile=t.trust_store_location)
    except OSError as e:  # ssl.SSLError included: not PEM
        raise tls_file_error(e, "transport.trustStoreLocation", t.trust_store_location) from e
    if t.trust_all:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif not t.verify_host:
        ctx.check_hostname = False
    if t.key_store_location:
        try:
            ctx.load_cert_chain(t.key_store_location, t.key_location, t.key_store_password)
        except OSError as e:
            files = f"{t.key_store_location}" + (f", {t.key_location}" if t.key_location else "")
            raise tls_file_error(e, "transport.keyStoreLocation/keyLocation", files) from e
    return ctx


class AmqpProvider(OpenCloseHandling, Provider):
    """The provider for one JMS connection."""

    def __init__(
        self,
        config: ConnectionConfig,
        connection_id: str | None = None,
        counters: Counters | None = None,
        wrapped: bool = False,
    ) -> None:
        self.config = config
        self.connection_id = connection_id or generate_connection_id()
        self._container_id = config.client_id or self.connection_id
        self.log = with_ids(PROVIDER, connection=self.connection_id)
        #: a failover provider's connection: its loss is an interruption the failover provider
        #: reports (one WARNING line), so this one says it at DEBUG only
        self._loss_level = logging.DEBUG if wrapped else logging.WARNING
        # (a failover provider passes the one set of counters its successive connections share)
        self.counters = counters if counters is not None else Counters(self.connection_id)
        self.tracing = tracing_for(config)  # None unless jms.tracing asks for it
        if config.metrics:
            from ..otel_metrics import export

            export(self.counters)
        self.loop_thread = LoopThread("amqp-jms-io")
        self.loop_thread.set_after_ops(self.flush)
        self.loop = self.loop_thread.loop
        self.engine: Engine | None = None
        self._frames = OutgoingFrames()
        self._wire = Wire(config)
        self._transport: asyncio.Transport | None = None
        #: a plain TCP socket (no TLS, no proxy tunnel): waiting sends may write it directly
        self._direct_writes = False
        #: that socket's descriptor, which a waiting caller may read (``answer_here``)
        self._socket_fd: int | None = None
        self._ticked_here = 0.0  # loop time of a waiting caller's last tick (``_handle_here``)
        self._answer_spin = config.answer_spin_seconds  # (provider.futureType)
        self._listener: ProviderListener | None = None
        self._opened: asyncio.Future[None] | None = None
        self._closed_fut: asyncio.Future[None] | None = None
        self._failure: JMSException | None = None
        self.closing = False
        self._remote_caps: frozenset[str] = frozenset()
        self._capabilities = Capabilities()
        self.remote_properties: dict[str, Any] = {}
        self.queue_prefix: str | None = None
        self.topic_prefix: str | None = None
        #: peer quirks the links work around (``capabilities.PeerQuirks``)
        self.ignores_selectors = False
        self.drain_unsafe = False
        #: producers with transfers proton has not written yet (their send windows)
        self.unwritten: set[Any] = set()
        #: futures completed by this flush, resolved at its end (see ``flush``)
        self.completed: list[concurrent.futures.Future[None]] = []
        #: attached links by the address of their proton-c link (pinned while the link holds it)
        self.links_by_addr: dict[int, Any] = {}
        self._timer: asyncio.TimerHandle | None = None
        #: claims-based security (``$cbs`` put-token before each link), with a token provider
        self.cbs: CbsClient | None = None
        self.sessions: set[Any] = set()
        self._session_ids = itertools.count(1)
        self._establishment_failed = False

    # -- Provider API (any thread) -------------------------------------------------------------
    @property
    def remote_capabilities(self) -> frozenset[str]:
        return self._remote_caps

    @property
    def container_id(self) -> str:
        return self._container_id

    @property
    def failure(self) -> JMSException | None:
        return self._failure

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def remote_uri(self) -> str:
        return self.config.address

    def alternate_servers(self) -> tuple[ConnectionConfig, ...]:
        """The servers in the peer's Open ``failover-server-list``."""
        return alternates_from_open(self.remote_properties, self.config)

    def set_client_id(self, client_id: str) -> None:
        self._container_id = client_id

    def connect(self, listener: ProviderListener) -> concurrent.futures.Future[None]:
        self._listener = listener
        return self.loop_thread.submit(self._connect())

    def create_session(self, transacted: bool) -> concurrent.futures.Future[ProviderSession]:
        from .session import AmqpSession

        async def go() -> ProviderSession:
            self.check_usable()
            s = AmqpSession(self, f"{self.connection_id}:{next(self._session_ids)}", transacted)
            await s.open()
            return s

        return self.loop_thread.submit(go())

    def close(self) -> concurrent.futures.Future[None]:
        if self.loop.is_closed():
            f: concurrent.futures.Future[None] = concurrent.futures.Future()
            f.set_result(None)
            return f
        return self.loop_thread.submit(self._close())

    def on_io_thread(self) -> bool:
        return self.loop_thread.in_loop()

    def wait(self, fut: concurrent.futures.Future[Any], timeout: float | None, what: str) -> Any:
        if self.on_io_thread():
            raise IllegalStateException(f"{what} called on the connection's I/O thread: it would deadlock")
        return wait_for(fut, timeout, what, self.answer_here)

    def answer_here(self, fut: concurrent.futures.Future[Any], timeout: float | None) -> None:
        """Read the peer's answer to ``fut`` on the calling thread while the I/O thread sleeps
        (``LoopThread.read_here``): a waiting send's outcome then wakes its caller directly
        instead of the I/O thread first, which then wakes the caller. What arrives is handled
        as the I/O thread would handle it (``_handle_here``). It gives up, leaving the rest to
        the I/O thread, after ``READ_HERE_SECONDS`` (the loop's own timers wait that long at
        most) or as soon as the answer needs the loop. Only on a plain TCP socket past SASL:
        TLS and WebSocket bytes are the I/O thread's to unwrap. A drain's answer
        (``DrainOutcome``) is read so too, by its consumer, whose link then takes its input
        here (``AmqpConsumer.answer_drain_here``)."""
        if isinstance(fut, SendOutcome):
            self.read_answer(fut, timeout)
        elif isinstance(fut, DrainOutcome) and fut.consumer is not None:
            fut.consumer.answer_drain_here(fut, timeout)

    def answer_on_loop(self, fut: concurrent.futures.Future[Any], loop: Any, timeout: float | None) -> None:
        """``answer_here`` for a task awaiting a send's outcome on ``loop`` (another thread's
        event loop, which must not block): the socket is lent to that loop while the I/O
        thread sleeps (``LoopThread.lending``, ``read_lease``), so that the answer wakes the
        loop whose task awaits it, not the I/O thread first, which then woke that loop. The
        reads are ``answer_here``'s (``_handle_here``), on the same terms."""
        fd = self._own_read_fd()
        if fd is not None and isinstance(fut, SendOutcome):
            self.loop_thread.lending.lend(fd, loop, lambda data: self._handle_here(data, fut),
                                          _read_budget(timeout), self._torn_here)

    def read_answer(self, fut: concurrent.futures.Future[Any], timeout: float | None) -> None:
        """``answer_here``'s reading: until ``fut`` is resolved, polling first per
        ``provider.futureType`` (Qpid JMS's option for the futures of its requests). Where the
        accelerator is built, each read goes straight into proton (``_take_answer``)."""
        self._read_here(lambda data: self._handle_here(data, fut), timeout, self._answer_spin,
                        self._take_answer(fut))

    def _take_answer(self, fut: concurrent.futures.Future[Any]) -> Callable[[], bool | None] | None:
        """``read_answer``'s reads by the C accelerator (``write_through.read_in``): one read of
        the socket into proton, which also tells whether the only event then pending is the
        delivery of ``fut``'s transfer, the usual answer (``_answered_alone`` without looking);
        the rest is ``_handle_here``'s. None where it is not built, or ``fut`` has no transfer
        (it was handed to the I/O thread, or failed before it was made). (A waiting receive
        reads in Python: the C read measured no quicker there.)"""
        read_in, eng, fd = write_through.read_in, self.engine, self._socket_fd
        transfer = getattr(fut, "transfer", None)
        if read_in is None or eng is None or fd is None or transfer is None:
            return None
        transport, collector, delivery = eng.transport_addr, eng.collector_addr, ptr_addr(transfer[0])

        def take() -> bool | None:
            if self.engine is not eng or self.failure is not None:
                return None  # (the loop's to handle, as _handle_here hands it over)
            # (its delivery matched only while it waits: once answered, the delivery may be
            # settled and freed, and its address given to a later transfer, whose answer this
            # is not)
            status = read_in(fd, transport, collector, 0 if fut.done() else delivery)
            if status < 0:
                return None if status == write_through.GONE else False
            try:
                return self._took_input(eng, fut, None, status == write_through.SOLE)
            except BaseException:  # (a KeyboardInterrupt): what went into the engine is whole,
                self._to_loop(self.flush)  # and its events are the I/O thread's to handle now
                raise

        return take

    def read_until(self, done: Callable[[], bool], timeout: float | None) -> None:
        """``answer_here``'s reading for a wait that is no send: until ``done()`` (a receive's
        message; the links that may take their input here are those whose ``answers_here`` is
        set). It sleeps at once, whatever ``provider.futureType`` says: that is Qpid JMS's
        option for its request futures, and its receives wait on their message queue."""
        self._read_here(lambda data: self._handle_here(data, None, done), timeout, 0.0)

    def _read_here(self, handle: Callable[[bytes], bool], timeout: float | None, spin: float,
                   take: Callable[[], bool | None] | None = None) -> None:
        """The caller's own read (``LoopThread.read_here``), bytes going to ``handle`` (or read
        and handed on by ``take``), for at most ``timeout`` or ``READ_HERE_SECONDS``; only on a
        plain TCP socket past SASL."""
        fd = self._own_read_fd()
        if fd is not None:
            self.loop_thread.read_here(fd, handle, _read_budget(timeout), self._torn_here, spin, take)

    def _own_read_fd(self) -> int | None:
        """The socket a waiting caller may read itself, or None: only a plain TCP socket past
        SASL (TLS and WebSocket bytes are the I/O thread's to unwrap)."""
        fd = self._socket_fd
        if fd is None or not self._direct_writes or self._transport is None or not self._wire.transparent:
            return None
        return fd

    def _torn_here(self) -> None:
        """A waiting caller was interrupted between reading the socket and handing what it read
        to the engine (``LoopThread.read_here``): a frame may be lost, so the connection ends,
        loudly, as if the socket had dropped (a failover connection reconnects)."""
        def tear() -> None:
            self.fail(JMSException(
                f"connection to {self.config.host}:{self.config.port} ended: a waiting call was "
                "interrupted while reading it, and what it read may be lost"))
            self._abort()

        self._to_loop(tear)

    def _to_loop(self, fn: Callable[[], object]) -> None:
        """``fn`` for the loop thread, from a caller that did loop work itself; nothing when the
        loop has stopped (the connection, and every wait on it, is over already)."""
        try:
            self.loop.call_soon_threadsafe(fn)
        except RuntimeError:
            pass

    def _handle_here(self, data: bytes, fut: concurrent.futures.Future[Any] | None,
                     done: Callable[[], bool] | None = None) -> bool:
        """Bytes a waiting caller read (``_read_here``), into the engine; True when the caller
        is done reading: ``fut`` is resolved (a send's outcome, a drain) or ``done()`` (a
        receive's message), or an event needs the I/O thread (which is then woken to handle it
        and everything after it)."""
        eng = self.engine
        if eng is None or self.failure is not None:
            self._to_loop(lambda: self._on_data(data))
            return True
        try:
            eng.receive_data(data)
        except Exception:  # never lose the rest: the I/O thread's flush meets the cause itself
            self.log.debug("a waiting caller's read stopped", exc_info=True)
            self._to_loop(self.flush)
            return True
        return self._took_input(eng, fut, done, None)

    def _took_input(self, eng: Engine, fut: concurrent.futures.Future[Any] | None,
                    done: Callable[[], bool] | None, sole: bool | None) -> bool:
        """``_handle_here`` once what was read is in the engine. ``sole``: whether the only
        pending event is the delivery of ``fut``'s transfer, when the read said so already
        (``_take_answer``); None: look."""
        try:
            now = self.loop.time()
            if now - self._ticked_here >= TICK_HERE_SECONDS:
                # the peer's last sign of life, as ``_on_data`` ticks; dated to within
                # TICK_HERE_SECONDS, far inside any idle timeout (proton counts input since
                # the last tick, so the loop's next tick sees what arrived between)
                self._ticked_here = now
                eng.tick(now)
            # (only while ``fut`` waits: once answered, its delivery may be settled and freed,
            # and proton may give its address to a later transfer, whose answer this is not;
            # a caller on another thread's event loop may read on after the I/O thread took
            # its answer, ``read_lease``)
            alone = fut is not None and not fut.done() and self._answered_alone(eng, fut, sole)
            left = False if alone else self._dispatch_here(eng)
            if eng.has_output():  # (an answer rarely needs one: not its own cost per message)
                self._write_output(eng)
                self._give_back_written()
            self._resolve_completed()
        except Exception:  # never lose the rest: the I/O thread's flush meets the cause itself
            self.log.debug("a waiting caller's read stopped", exc_info=True)
            left = True
        if left or self.loop_thread.has_ready():
            # work for the loop (an event only it may handle, a callback scheduled from here)
            self._to_loop(self.flush)
            return True
        return fut.done() if fut is not None else done is not None and done()

    @staticmethod
    def _answered_alone(eng: Engine, fut: concurrent.futures.Future[Any], sole: bool | None = None) -> bool:
        """The usual answer, taken without the events: when the one event pending is the
        delivery of ``fut``'s transfer, its producer reads its outcome directly
        (``AmqpProducer.accepted_alone``). The event is left for the next taker of events
        (the next send's write, which takes them while the peer works on it, or the I/O
        thread), so settling it is off this caller's round trip; being the only one, it
        hides nothing that needs the I/O thread. ``sole``: whether that is so, when the read
        that brought the event found out already (``_take_answer``); None: look."""
        transfer = getattr(fut, "transfer", None)
        if transfer is None or sole is False:
            return False
        if sole is None:
            ev = eng.sole_event()
            if ev is None or _event_type(ev) != _PN_DELIVERY or _event_delivery(ev) != transfer[0]:
                return False
        delivery, producer, tag = transfer
        return bool(producer.accepted_alone(delivery, tag, fut))

    def _dispatch_here(self, eng: Engine) -> bool:
        """``_dispatch`` for a waiting caller: only deliveries and credit on links that take
        their input here (``answers_here``: a producer's outcome and credit top-up, read
        straight from proton-c; the messages and credit of a consumer whose receive or drain
        reads) are handled; at any other event it stops, leaving that one and the rest pending
        for the I/O thread. True when it stopped so."""
        peek, pop = eng.peek_raw, eng.pop_raw
        while True:
            raw = peek()
            if raw is None:
                return False
            kind = _event_type(raw)
            if kind in _HANDLED and not self._raw_event(kind, raw, here=True):
                return True
            pop()

    def _raw_event(self, kind: int, raw: Any, here: bool = False) -> bool:
        """A delivery or credit event read from proton-c by its link, without an ``Event`` and its
        wrappers; True when the link took it. ``here``: only a link whose handling may run on a
        waiting caller's thread (``answers_here``) takes it."""
        links = self.links_by_addr
        if kind == _PN_DELIVERY:
            # the per-message event: a link that reads it from proton-c directly is spared the
            # Event and its wrappers (most of the loop's time per sent message otherwise)
            d = _event_delivery(raw)
            res = links.get(ptr_addr(_delivery_link(d)))
            return res is not None and (res.answers_here or not here) and bool(res.on_delivery_raw(d))
        if kind == _PN_LINK_FLOW:
            # a peer may top up a producer's credit after every transfer: read in the same
            # turn as the waiting send's outcome, it must not cost an Event and its wrappers
            res = links.get(ptr_addr(_event_link(raw)))
            if res is None or (here and not res.answers_here):
                return False
            res.on_flow()
            return True
        return False

    def create_temporary(self, topic: bool) -> concurrent.futures.Future[str]:
        from .connection_session import connection_session

        return connection_session(self).create_temporary(topic)

    def delete_temporary(self, address: str) -> concurrent.futures.Future[None]:
        from .connection_session import connection_session

        return connection_session(self).delete_temporary(address)

    def unsubscribe(self, link_name: str) -> concurrent.futures.Future[None]:
        from .connection_session import connection_session

        return connection_session(self).unsubscribe(link_name)

    def shutdown(self) -> None:
        """Stop the I/O thread (after close) and let go of proton's objects; idempotent."""
        self.loop_thread.stop()
        if not self.loop_thread.thread.is_alive():
            self._release_engine()

    def _release_engine(self) -> None:
        """Break the cycles proton cannot show the garbage collector: each session and link
        keeps its ``jms`` attribute (our wrapper, which holds the proton object back) in a
        record of proton-c's, so a closed connection kept its engine, provider, sessions and
        I/O thread alive for ever (300 open/close cycles: 300 engines, RSS +23 MB)."""
        eng, self.engine = self.engine, None
        if eng is None:
            return
        conn = eng.connection
        ssn = conn.session_head(0)
        while ssn is not None:
            ssn.jms = None
            ssn = ssn.next(0)
        link = conn.link_head(0)
        while link is not None:
            link.jms = None
            link = link.next(0)
        for s in list(self.sessions):
            s.endpoint = None
            for lk in list(s.links):
                lk.endpoint = None
        self.sessions.clear()
        self.links_by_addr.clear()

    # -- loop side -----------------------------------------------------------------------------
    def check_usable(self) -> None:
        if self.failure is not None:
            raise type(self.failure)(self.failure.reason, self.failure.error_code, self.failure)
        if self.closing or self.engine is None:
            raise IllegalStateException("the connection is closed")

    def request_timeout(self) -> float | None:
        return self.config.seconds(self.config.request_timeout_ms)

    async def await_remote(self, fut: asyncio.Future[Any], timeout: float | None, what: str,
                           since: float | None = None) -> Any:
        """Await a peer's answer; a timeout raises JMSException naming ``what``. ``since``: the
        loop time the request went out, if earlier than now (the timeout counts from then)."""
        self.flush()
        left = timeout
        if timeout is not None and since is not None:
            left = max(0.0, since + timeout - self.loop.time())
        try:
            return await asyncio.wait_for(asyncio.shield(fut), left)
        except TimeoutError:
            raise JMSException(f"timed out after {timeout} s waiting for the peer to {what}") from None

    async def _connect(self) -> None:
        cfg = self.config
        loop = asyncio.get_running_loop()
        timeout = cfg.seconds(cfg.connect_timeout_ms)
        ctx = _ssl_context(cfg) if cfg.secure else None
        # proton runs without SASL: the wire does it (engine/sasl_client.py: EXTERNAL, XOAUTH2,
        # SCRAM-SHA-512, Qpid JMS's choice), and holds the AMQP layer's bytes until it is done
        sasl = None
        if cfg.sasl_layer:
            token = None
            if cfg.token_provider is not None:  # a fresh token for every connect (user code: off the loop)
                token = await self._token(cfg)
            sasl = sasl_credentials(cfg, token)
        self.engine = Engine(
            sasl=None,
            max_frame_size=cfg.max_frame_size or None,
            idle_timeout_s=(cfg.idle_timeout_ms / 1000.0) or None,
        )
        trace = frame_logger(self.connection_id) if cfg.trace_frames else None
        if trace is not None:
            self.engine.trace_frames(trace)
        self._frames = OutgoingFrames()  # gives consumer sources their default outcome
        self._wire = Wire(cfg, sasl, trace)  # WebSocket framing for amqpws, and SASL
        if cfg.cbs_token_provider is not None:
            self.cbs = CbsClient(self, cfg.cbs_token_provider)
        # created first: SASL may fail (and the transport close) before open is even sent
        self._opened = loop.create_future()
        try:
            await asyncio.wait_for(self._open_socket(cfg, ctx), timeout)
        except TimeoutError:
            raise JMSException(f"could not connect to {cfg.host}:{cfg.port} within {timeout} s") from None
        except ssl.SSLError as e:
            raise tls_error(e, f"{cfg.host}:{cfg.port}") from e
        except OSError as e:
            raise JMSException(f"could not connect to {cfg.host}:{cfg.port}: {e}", linked_exception=e) from e
        c = self.engine.connection
        c.container = self._container_id
        c.hostname = cfg.vhost or cfg.host
        caps = list(DESIRED_CAPABILITIES)
        if not cfg.client_id:
            caps.remove("sole-connection-for-container")
        c.desired_capabilities = symbol_array(caps)
        from ..._version import __version__

        c.properties = {
            symbol("product"): "amqp-jms",
            symbol("version"): __version__,
            symbol("platform"): f"Python/{sys.version.split()[0]}",
        }
        c.open()
        self.flush()
        try:
            await self.await_remote(self._opened, timeout, "open the connection")
        except BaseException:
            self._abort()
            raise
        if self._listener is not None:
            self._listener.on_connection_established(self.remote_uri)

    async def _open_socket(self, cfg: ConnectionConfig, ctx: ssl.SSLContext | None) -> None:
        """The socket to the peer (through ``transport.proxyHost`` when set), TLS when ``ctx``."""
        if cfg.transport.proxy_host is not None:
            await open_tunnel(cfg, ctx, _Protocol(self))
            return
        await asyncio.get_running_loop().create_connection(
            lambda: _Protocol(self), cfg.host, cfg.port, ssl=ctx,
            server_hostname=cfg.host if ctx is not None and ctx.check_hostname else None,
        )

    async def _token(self, cfg: ConnectionConfig) -> str:
        """The token provider's token, asked on a worker thread (it may fetch one over the
        network); its failure fails the connect as a JMSSecurityException naming it."""
        provider = cfg.token_provider
        assert provider is not None
        try:
            token = await asyncio.get_running_loop().run_in_executor(None, provider)
        except Exception as e:
            raise JMSSecurityException(f"the token provider failed: {e!r}", linked_exception=e) from e
        if not isinstance(token, str) or not token:
            raise JMSSecurityException(
                f"the token provider returned {type(token).__name__}, not a token (str)")
        return token

    async def _close(self) -> None:
        if self.closing or self.engine is None:
            self._abort()
            return
        self.closing = True
        loop = asyncio.get_running_loop()
        self._closed_fut = loop.create_future()
        if self.failure is None:
            self.engine.connection.close()
            try:
                await self.await_remote(
                    self._closed_fut, self.config.seconds(self.config.close_timeout_ms), "close"
                )
            except JMSException:
                pass
        self._abort()

    def _abort(self) -> None:
        if self.cbs is not None:
            self.cbs.close()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._transport is not None:
            last = self._wire.closing()
            if last:
                self._transport.write(last)
            self._transport.close()
            self._transport = None

    # -- I/O -----------------------------------------------------------------------------------
    def _on_data(self, data: bytes) -> None:
        eng = self.engine
        if eng is None:
            return
        if data:  # (b"" is EOF, for the engine to see)
            try:
                data = self._wire.inbound(data)
            except WireError as e:
                self.fail(e.jms)
                self._abort()
                return
            if not data:  # all of it was the layers' own (an upgrade answer, a ping)
                self.flush()
                return
        eng.receive_data(data)
        # proton dates the peer's last sign of life by the tick that sees new input: ticking
        # only at timer deadlines declared a hung peer dead after up to twice amqp.idleTimeout
        eng.tick(self.loop.time())
        self.flush()

    def _on_socket_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if isinstance(exc, ssl.SSLError) and not self.closing:  # before proton calls it a framing error
            self.fail(tls_error(exc, f"{self.config.host}:{self.config.port}"))
        if self.engine is not None:
            self.engine.abort()
            self.flush()
        if not self.closing:
            self.fail(JMSException(f"connection to {self.config.host}:{self.config.port} lost"
                                   + (f": {exc}" if exc else "")))
        if self._closed_fut is not None and not self._closed_fut.done():
            self._closed_fut.set_result(None)

    def write_if_idle(self, op: Callable[[], object], queued: Callable[[], object] | None = None) -> bool:
        """Run ``op`` (a short piece of loop-side work a caller waits on: a waiting send's
        transfer, a pull's credit, an acknowledgement; or a send nobody waits for that comes
        after a pause, ``SPARSE_SEND_SECONDS``) and write the bytes it makes on the
        calling thread when the I/O thread is asleep with nothing queued
        (``LoopThread.run_if_idle``); False when it is not (or the socket is busy or not plain
        TCP): then the caller hands it over as usual.

        ``op`` may complete concurrent futures, never the loop's own (asyncio's), and may raise
        ``NotIdle`` before doing anything to have its work handed over after all. The engine's
        output is written here, the send window's slot given back and proton's own events taken
        (``_dispatch_here``, while the peer works); other events are left for the next flush,
        which the peer's answer brings (the I/O thread's, or the waiting caller's). A plain
        socket transport is written to directly (asyncio's write sends at once when its buffer
        is empty, and only then is it used here). ``queued``: as ``LoopThread.run_if_idle``'s."""
        transport = self._transport
        if not self._direct_writes or transport is None:
            return False

        try:
            done = self.loop_thread.run_if_idle(lambda: self._write_here(op, transport), queued)
        except NotIdle:
            return False
        if done and transport.is_closing():
            # the socket write failed: asyncio queued the loss for the loop with call_soon, which
            # wakes nobody from this thread; wake the loop so the waiting caller hears of it now
            self._to_loop(_nothing)
        return done

    def _write_here(self, op: Callable[[], object], transport: asyncio.Transport) -> None:
        """``op`` and what it makes, written on the calling thread, which holds the loop
        (``write_if_idle``); raises ``NotIdle`` when the connection is unfit."""
        eng = self.engine
        if eng is None or self.failure is not None or transport.get_write_buffer_size():
            raise NotIdle
        op()
        self._write_output(eng)
        if not self._wire.transparent:
            return
        # while the peer works on what was just written, not after its answer (when the
        # caller waits for it): give back the send window's slot of what proton wrote, and
        # take the events the write raised (proton's own; anything else is left pending for
        # whoever reads the answer, as before)
        if self._give_back_written() and self.loop_thread.has_ready():
            self._to_loop(_nothing)  # (a close waiting for the window to empty)
        self._dispatch_here(eng)

    def transfer_out(self, link_addr: int, tag: bytes, data: bytes) -> Any | None:
        """A transfer of ``data`` tagged ``tag`` on the link at ``link_addr``, made and written
        to the socket in one C call (``write_through``): the new ``pn_delivery_t``. Only for an
        op of ``write_if_idle`` (this thread holds the loop, the socket's transport buffers
        nothing). None when it cannot be (no accelerator, a wire that is not plain TCP, the
        outgoing editor part-way through a frame): the caller makes the transfer as usual.

        Output that is not one plain frame is left in proton, for ``_write_here``'s own write,
        which follows every op; bytes the socket did not take go to the transport now, before
        anything else can be written."""
        transfer_out = write_through.transfer_out
        fd, eng = self._socket_fd, self.engine
        if (transfer_out is None or fd is None or eng is None or not self._wire.transparent
                or not self._frames.at_frame_boundary):
            return None
        address, rest = transfer_out(link_addr, tag, data, eng.transport_addr, fd)
        if isinstance(rest, bytes) and self._transport is not None:  # (not None, not LEFT)
            self._transport.write(rest)
        return _as_delivery(address)

    def _write_output(self, eng: Engine) -> None:
        """What proton has to send, through the outgoing editors and the wire's layers (none
        once ``Wire.transparent``: a waiting caller writes once or twice a message), to the
        socket."""
        out = eng.data_to_send() if self._wire.amqp_ready else b""
        if out:
            out = self._frames.feed(out)
        if not self._wire.transparent:
            out = self._wire.outbound(out)
        if out and self._transport is not None:
            self._transport.write(out)

    def _give_back_written(self) -> bool:
        """Give back the send-window slots of transfers proton has written; True when some
        producer had any out."""
        if not self.unwritten:
            return False
        self.unwritten = {p for p in self.unwritten if p.written()}
        return True

    def _resolve_completed(self) -> None:
        """Resolve the futures this pass completed (``completed``), last: a woken caller then
        finds this thread about to sleep, not about to take the GIL back."""
        if self.completed:
            done, self.completed = self.completed, []
            for fut in done:
                if not fut.done():
                    fut.set_result(None)

    def flush(self) -> None:
        """Process every pending engine event, then write what proton has to send."""
        eng = self.engine
        if eng is None:
            return
        while True:
            self._dispatch(eng)
            self._write_output(eng)
            # producing output can itself raise events (a failed SASL exchange, a closed head)
            if eng.collector.peek() is None:
                break
        self._give_back_written()
        if self._timer is None and self._transport is not None:
            self._arm_timer()
        # last, once the output is written: a woken caller then finds this thread about to sleep
        # in select, instead of both passing the GIL back and forth until it does (measured with
        # strace: several futex hand-offs per synchronous send)
        self._resolve_completed()

    def _arm_timer(self) -> None:
        eng = self.engine
        if eng is None:
            return
        deadline = eng.tick(self.loop.time())
        if deadline:
            self._timer = self.loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._arm_timer()
        self.flush()

    # -- events --------------------------------------------------------------------------------
    def _dispatch(self, eng: Engine) -> None:
        for raw in eng.raw_events():
            kind = _event_type(raw)
            if kind not in _HANDLED or self._raw_event(kind, raw):
                continue
            ev = Event.wrap(raw)
            t = ev.type
            if t == Event.DELIVERY:
                res = getattr(ev.link, "jms", None)
                if res is not None:
                    res.on_delivery(ev.delivery)
            elif t == Event.LINK_FLOW:
                res = getattr(ev.link, "jms", None)
                if res is not None:
                    res.on_flow()
            elif t == Event.LINK_REMOTE_OPEN:
                res = getattr(ev.link, "jms", None)
                if res is not None:
                    res.on_remote_open()
            elif t in (Event.LINK_REMOTE_CLOSE, Event.LINK_REMOTE_DETACH):
                res = getattr(ev.link, "jms", None)
                if res is not None:
                    res.on_remote_close()
            elif t == Event.SESSION_REMOTE_OPEN:
                res = getattr(ev.session, "jms", None)
                if res is not None:
                    res.on_remote_open()
            elif t == Event.SESSION_REMOTE_CLOSE:
                res = getattr(ev.session, "jms", None)
                if res is not None:
                    res.on_remote_close()
            elif t == Event.CONNECTION_REMOTE_OPEN:
                self._on_remote_open()
            elif t == Event.CONNECTION_REMOTE_CLOSE:
                self._on_remote_close()
            elif t in (Event.TRANSPORT_ERROR, Event.TRANSPORT_CLOSED):
                # an error (failed SASL, framing) ends us at once: the peer may never hang up
                self._on_transport_closed()

    def _timer_reset(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._arm_timer()

    def report_async(self, exc: JMSException) -> None:
        """A failure nobody waits for (an unawaited send refused): to the connection's listener."""
        listener = self._listener
        if listener is not None and not self.closing and self.failure is None:
            listener.on_async_exception(exc)

    def fail(self, exc: JMSException) -> None:
        """The connection is dead: fail every pending operation, tell the listener once."""
        if self._failure is not None:
            return
        self._failure = exc
        self.counters.failures += 1
        if self._opened is not None and not self._opened.done():
            self._opened.set_exception(exc)
            self._opened.exception()  # retrieved here; _connect re-raises it
            self._abort()
            return
        if not self.closing:  # the one line an operator sees: which connection, and why
            self.log.log(self._loss_level, "connection to %s:%s failed: %s",
                         self.config.host, self.config.port, exc)
        for s in list(self.sessions):
            s.fail(exc)
        if self._closed_fut is not None and not self._closed_fut.done():
            self._closed_fut.set_result(None)
        if self._listener is not None and not self.closing:
            self._listener.on_connection_failure(exc)
