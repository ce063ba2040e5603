"""The listener: one ``asyncio.Protocol`` per accepted socket, each driving one proton engine.

Shape after uvicorn: ``AmqpProtocol`` moves bytes and timers only (SASL frames first, then
everything into :class:`amqp_jms.engine.Engine`), hands proton events to its
:class:`~amqp_jms.broker.protocol.connection.BrokerConnection`, and writes what proton produced. Work
that happens outside ``data_received`` (a message routed from another connection, a scheduled
delivery) marks the connection dirty; one ``call_soon`` flush per loop turn then writes the
output, so deliveries batch into few socket writes. A store commit that producers wait on
flushes at once (``flush_now``): the dispositions it releases are the peers' next step.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING

from proton import Condition, Endpoint, Event

from ..._logs import BROKER as log
from ..._reading import KeptBufferProtocol
from ...engine import Engine
from ..errors import DECODE_ERROR, is_malformed
from ..limits import BrokerLimits
from ._fast import lib
from .connection import BrokerConnection
from .frame_depth import FrameDepthGuard
from .login_throttle import LoginThrottle
from .sasl import SaslResult, SaslServer, Users, certificate_identity

if TYPE_CHECKING:
    from ..routing.core import BrokerCore
    from ..routing.tokens import TokenValidator

__all__ = ["AmqpProtocol", "ServerState"]

_ids = itertools.count(1)
_PN_DELIVERY = lib.PN_DELIVERY
#: output pending: proton raises it for every frame it queues, and the broker has no use for it
#: (each ``_process`` writes the engine's output after its drain); not wrapped, not dispatched
_PN_TRANSPORT = lib.PN_TRANSPORT
_PN_LINK_FLOW = lib.PN_LINK_FLOW
_CLOSE_GRACE = 2.0  # seconds a peer has to answer the broker's Close before the socket is cut


class ServerState:
    """What the listener shares: the core, the users, and the live protocols (for shutdown)."""

    def __init__(
        self,
        core: BrokerCore,
        users: Users,
        *,
        idle_timeout_s: float | None,
        limits: BrokerLimits,
        logins: LoginThrottle | None = None,
        token_validator: TokenValidator | None = None,
    ) -> None:
        self.core = core
        self.users = users
        self.token_validator = token_validator
        self.logins = logins if logins is not None else LoginThrottle()
        self.idle_timeout_s = idle_timeout_s
        self.limits = limits
        self.protocols: set[AmqpProtocol] = set()
        self.per_address: dict[str, int] = {}  # open connections by source address
        self._refused = 0
        self._refused_logged = 0.0

    def refused_connection(self, peer: object, why: str) -> None:
        """Count a connection refused at accept (``why`` names the limit); log at most once a
        second."""
        self._refused += 1
        now = time.monotonic()
        if now - self._refused_logged >= 1.0:
            log.warning("%s reached: refused %d connection(s), the last from %s", why, self._refused, peer)
            self._refused_logged = now
            self._refused = 0


class AmqpProtocol(KeptBufferProtocol):
    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.loop = state.core.loop
        self.transport: asyncio.Transport | None = None
        self.engine: Engine | None = None
        self.conn: BrokerConnection | None = None
        self.sasl: SaslServer | None = None
        self.source = ""  # the peer's address
        self._flush_scheduled = False
        self._draining = False  # in _process's event drain: its own write follows, no flush needed
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._closing = False
        self._eof = False
        self._refused = False
        self._write_paused = False
        self._close_grace = False
        self._handshake_timer: asyncio.TimerHandle | None = None
        self._frames_seen = 0  # frames proton has read (frame_timeout)
        self._depth = FrameDepthGuard(0)  # max_value_depth for frame fields (set once accepted)
        self._too_deep = False
        self._frame_since = 0.0  # when the last one completed (or bytes first came)
        self._frame_timer: asyncio.TimerHandle | None = None

    # -- asyncio callbacks ---------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        limits = self.state.limits
        source = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        per_address = self.state.per_address
        why = None
        if limits.max_connections and len(self.state.protocols) >= limits.max_connections:
            why = f"max_connections ({limits.max_connections})"
        elif limits.max_connections_per_address and (
            per_address.get(source, 0) >= limits.max_connections_per_address
        ):
            why = f"max_connections_per_address ({limits.max_connections_per_address}) for {source}"
        if why is not None:
            # before any byte: no AMQP to answer with (a flood of silent sockets must cost nothing)
            self._refused = True
            self.state.refused_connection(peer, why)
            transport.abort()
            return
        per_address[source] = per_address.get(source, 0) + 1
        self._depth = FrameDepthGuard(limits.max_value_depth, max_frame_size=limits.max_frame_size)
        conn_id = next(_ids)
        self.state.core.counters.connections += 1
        self.engine = Engine(
            server=True,
            sasl=None,
            max_frame_size=limits.max_frame_size,
            idle_timeout_s=self.state.idle_timeout_s,
        )
        transport.set_write_buffer_limits(high=limits.write_buffer_high, low=limits.write_buffer_low)
        if limits.handshake_timeout:
            self._handshake_timer = self.loop.call_later(limits.handshake_timeout, self._handshake_expired)
        self.conn = BrokerConnection(self.state.core, conn_id, f"{peer}", self.dirty,
                                     flush=self.flush_now)
        self.state.core.connections[conn_id] = self.conn
        self.state.protocols.add(self)
        self.source = source  # for the login throttle and max_connections_per_address
        self.sasl = SaslServer(
            self.state.users,
            certificate_identity(transport.get_extra_info("peercert")),
            admit=self.state.logins.admits(self.source),
            max_frame_size=limits.max_sasl_frame_size,
            token_validator=self.state.token_validator,
        )

    def pause_writing(self) -> None:
        """The socket's buffer is over ``write_buffer_high``: the peer is not reading."""
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self.dirty()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        sasl = self.sasl
        if sasl is not None:
            out, rest = sasl.feed(data)
            if out and self.transport is not None:
                self.transport.write(out)
            if sasl.result is SaslResult.FAILED:
                log.info("connection %s from %s: SASL authentication failed",
                         self.conn.id if self.conn else "?", self.source)
                self.state.logins.failed(self.source)
                self.state.core.counters.auth_failures += 1
                self._close_transport()
                return
            if sasl.result is SaslResult.PENDING:
                return
            self.sasl = None
            if self.conn is not None:
                self.conn.user = sasl.user
            data = rest
            if not data:
                return
        assert self.engine is not None
        if self._too_deep:
            return  # closing: nothing more is decoded
        why = self._depth.feed(data)
        if why is not None:
            self._too_deep = True
            if self._depth.cut:  # the frames before it (the protocol header, an Open) count
                self.engine.receive_data(data[: self._depth.cut])
                self._process()  # answered first (the broker's Open), then the Close below
            condition = self._depth.condition
            log.info("connection %s from %s: %s, closing with %s",
                     self.conn.id if self.conn else "?", self.source, why, condition)
            if self.engine.connection.state & Endpoint.REMOTE_ACTIVE:
                self._fail(condition, why)
                self._process()
                return
            # the Open itself was too deep: proton writes no Close before it has read an Open,
            # so the broker's Open goes out and a Close of our own follows it
            self.engine.connection.open()
            out = self.engine.data_to_send()
            if self.transport is not None:
                self.transport.write(out + _close_frame(condition, why))
                self.loop.call_later(_CLOSE_GRACE, self._close_transport)
            return
        self.engine.receive_data(data)
        self._frame_progress()
        self._process()

    def eof_received(self) -> bool | None:
        self._eof = True
        if self.engine is not None:
            self.engine.receive_data(b"")
            self._process()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.protocols.discard(self)
        if not self._refused and self.source:
            left = self.state.per_address.get(self.source, 1) - 1
            if left > 0:
                self.state.per_address[self.source] = left
            else:
                self.state.per_address.pop(self.source, None)
        if self._handshake_timer is not None:
            self._handshake_timer.cancel()
            self._handshake_timer = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._frame_timer is not None:
            self._frame_timer.cancel()
            self._frame_timer = None
        conn = self.conn
        if conn is not None:
            conn.cleanup()
            self.state.core.connections.pop(conn.id, None)
            log.debug("connection %s closed", conn.id)  # routine (failures are logged where seen)
        if self.engine is not None:
            self.engine.abort()
            self._drain_events()
        self.transport = None

    # -- engine driving ------------------------------------------------------------------------
    def dirty(self) -> None:
        """Output is pending: flush once, at the end of this loop turn. Not while ``_process``
        drains events: it takes the engine's output right after (a second flush per incoming
        transfer would cost a loop callback and an empty event drain for every message)."""
        if not self._flush_scheduled and not self._draining and self.transport is not None:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush)

    def flush_now(self) -> None:
        """Write pending output in this loop callback rather than the next turn: for output a
        waiting peer is blocked on (a durable send's disposition once its row is committed)."""
        if not self._draining:  # (inside _process its own write follows)
            self._process()

    def _flush(self) -> None:
        self._flush_scheduled = False
        self._process()

    def _drain_events(self) -> None:
        engine, conn = self.engine, self.conn
        if engine is None or conn is None:
            return
        handle, on_delivery, on_flow = conn.handle, conn.on_delivery_raw, conn.on_flow_raw
        event_type, event_delivery, event_link = lib.pn_event_type, lib.pn_event_delivery, lib.pn_event_link
        wrap = Event.wrap
        for ev in engine.raw_events():
            try:
                kind = event_type(ev)
                if kind == _PN_DELIVERY:
                    on_delivery(event_delivery(ev))
                elif kind == _PN_TRANSPORT or (kind == _PN_LINK_FLOW and on_flow(event_link(ev))):
                    continue
                else:
                    handle(wrap(ev))
            except Exception as exc:
                if is_malformed(exc):
                    # the peer's bytes, not a broker bug: one line, the traceback only at DEBUG
                    log.info("connection %s from %s: malformed frame (%s), closing with %s",
                                conn.id, conn.peer, exc, DECODE_ERROR)
                    log.debug("connection %s: malformed frame", conn.id, exc_info=True)
                    self._fail(DECODE_ERROR, f"malformed frame: {exc}")
                    return
                log.exception("connection %s: error handling event %s", conn.id, event_type(ev))
                self._fail("amqp:internal-error", "broker error handling the peer's request")
                return

    def _process(self) -> None:
        engine = self.engine
        if engine is None or self.transport is None:
            return
        self._draining = True
        try:
            self._drain_events()
        finally:
            self._draining = False
        out = engine.data_to_send()
        if out:
            self.transport.write(out)
        conn = self.conn
        if conn is not None and conn.out_bytes:
            # resumed links send on (their output goes out at the next flush) unless the socket
            # is full: then they wait for ``resume_writing``
            conn.output_taken(self._write_paused)
        if not engine.closed and engine.transport.capacity() < 0 and not self._eof:
            # proton stopped reading mid-stream. Framing errors it answers itself (open + close
            # with amqp:connection:framing-error, then ``closed``); a frame it cannot decode it
            # only logs, leaving the peer without a reason: tell it with a Close of our own.
            self._close_undecodable(engine)
            out = engine.data_to_send()
            if out:
                self.transport.write(out)
        if engine.closed or engine.transport.capacity() < 0:
            # done, or proton reads no more input: nothing more can happen on this socket
            self._close_transport()
            return
        state = engine.connection.state
        if self._handshake_timer is not None and state & Endpoint.REMOTE_ACTIVE:
            self._handshake_timer.cancel()  # SASL and Open done in time
            self._handshake_timer = None
        if state & Endpoint.LOCAL_CLOSED and not self._close_grace:
            # we closed (an error, a refusal): a peer that never answers must not keep the socket
            self._close_grace = True
            self.loop.call_later(_CLOSE_GRACE, self._close_transport)
        deadline = engine.tick(time.monotonic())
        if deadline and deadline != self._deadline:
            self._deadline = deadline
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_at(self._loop_time(deadline), self._on_timer)

    def _frame_progress(self) -> None:
        """Watch for a frame that arrives a byte at a time (``frame_timeout``): bytes keep
        coming, so the idle timeout never fires, but no frame completes."""
        limit = self.state.limits.frame_timeout
        engine = self.engine
        if not limit or engine is None:
            return
        frames = engine.transport.frames_input
        if frames != self._frames_seen:
            self._frames_seen = frames
            self._frame_since = time.monotonic()  # (this chunk may have begun the next one)
            if self._frame_timer is not None:
                self._frame_timer.cancel()
                self._frame_timer = None
        elif self._frame_timer is None:
            if self._frame_since == 0.0:
                self._frame_since = time.monotonic()
            wait = max(0.0, self._frame_since + limit - time.monotonic())
            self._frame_timer = self.loop.call_later(wait, self._frame_expired, frames)

    def _frame_expired(self, frames: int) -> None:
        self._frame_timer = None
        engine = self.engine
        if engine is None or self.transport is None or engine.transport.frames_input != frames:
            return
        limit = self.state.limits.frame_timeout
        cid = self.conn.id if self.conn else "?"
        log.info("connection %s from %s: no frame completed in %ss while bytes kept coming, closing",
                 cid, self.source, limit)
        self._fail("amqp:resource-limit-exceeded",
                   f"a frame did not arrive in full within {limit} s (limit frame_timeout)")

    def _handshake_expired(self) -> None:
        """SASL + Open not done within ``handshake_timeout`` (a silent or slowloris peer)."""
        self._handshake_timer = None
        engine = self.engine
        if engine is None or engine.connection.state & Endpoint.REMOTE_ACTIVE:
            return
        cid = self.conn.id if self.conn else "?"
        log.info("connection %s: handshake not completed in %ss, closing", cid,
                 self.state.limits.handshake_timeout)
        if self.transport is not None:
            self.transport.abort()

    def _loop_time(self, monotonic_deadline: float) -> float:
        return self.loop.time() + max(0.0, monotonic_deadline - time.monotonic())

    def _on_timer(self) -> None:
        self._timer = None
        self._deadline = 0.0
        self._process()

    def _close_undecodable(self, engine: Engine) -> None:
        """Close the AMQP connection with ``amqp:decode-error`` (the peer sent a bad frame)."""
        conn = engine.connection
        if self._closing or conn.state & Endpoint.REMOTE_CLOSED or conn.state & Endpoint.LOCAL_CLOSED:
            return
        self._closing = True
        cid = self.conn.id if self.conn else "?"
        log.info("connection %s: undecodable frame from the peer, closing with amqp:decode-error", cid)
        if not conn.state & Endpoint.LOCAL_ACTIVE:
            conn.open()  # a close must follow an open
        cond = engine.transport.condition
        if cond is not None and cond.name:
            conn.condition = Condition(str(cond.name), cond.description)
        else:
            conn.condition = Condition("amqp:decode-error", "malformed frame: it could not be decoded")
        conn.close()
        self._drain_events()

    def _fail(self, condition: str, description: str) -> None:
        from ...engine import EngineError

        if self.engine is not None and not self._closing:
            self._closing = True
            self.engine.close(EngineError(condition, description))
            self.dirty()

    def _close_transport(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def shutdown(self) -> None:
        """Broker stopping: close the AMQP connection politely, then the socket."""
        self._fail("amqp:connection:forced", "broker shutting down")
        self.loop.call_later(0.2, self._close_transport)


def _close_frame(condition: str, description: str) -> bytes:
    """A Close frame (channel 0) carrying an error, encoded without proton."""
    from ...mapping.codec import encode_value
    from ...types import Described, Symbol, ULong

    error = Described(ULong(0x1D), [Symbol(condition), description])
    body = encode_value(Described(ULong(0x18), [error]))
    return (len(body) + 8).to_bytes(4, "big") + b"\x02\x00\x00\x00" + body
