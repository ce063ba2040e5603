"""The listener: one ``asyncio.Protocol`` per accepted socket, each driving one proton engine.

Shape after uvicorn: ``AmqpProtocol`` moves bytes and timers only (SASL frames first, then
everything into :class:`amqp_jms.engine.Engine`), hands proton events to its
:class:`~amqp_jms.broker.connection.BrokerConnection`, and writes what proton produced. Work
that happens outside ``data_received`` (a message routed from another connection, a store
commit, a scheduled delivery) marks the connection dirty; one ``call_soon`` flush per loop turn
then writes the output, so deliveries batch into few socket writes.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import TYPE_CHECKING

from proton import Condition, Endpoint, Event

from ..engine import Engine
from ._fast import lib
from .connection import BrokerConnection
from .login_throttle import LoginThrottle
from .sasl import SaslResult, SaslServer, Users, certificate_identity

if TYPE_CHECKING:
    from .core import BrokerCore

__all__ = ["AmqpProtocol", "ServerState"]

log = logging.getLogger("amqp_jms.broker")
_ids = itertools.count(1)
_PN_DELIVERY = lib.PN_DELIVERY


class ServerState:
    """What the listener shares: the core, the users, and the live protocols (for shutdown)."""

    def __init__(
        self,
        core: BrokerCore,
        users: Users,
        *,
        idle_timeout_s: float | None,
        max_frame_size: int | None,
        logins: LoginThrottle | None = None,
    ) -> None:
        self.core = core
        self.users = users
        self.logins = logins if logins is not None else LoginThrottle()
        self.idle_timeout_s = idle_timeout_s
        self.max_frame_size = max_frame_size
        self.protocols: set[AmqpProtocol] = set()


class AmqpProtocol(asyncio.Protocol):
    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.loop = state.core.loop
        self.transport: asyncio.Transport | None = None
        self.engine: Engine | None = None
        self.conn: BrokerConnection | None = None
        self.sasl: SaslServer | None = None
        self.source = ""  # the peer's address
        self._flush_scheduled = False
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._closing = False
        self._eof = False

    # -- asyncio callbacks ---------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        conn_id = next(_ids)
        self.engine = Engine(
            server=True,
            sasl=None,
            max_frame_size=self.state.max_frame_size,
            idle_timeout_s=self.state.idle_timeout_s,
        )
        self.conn = BrokerConnection(self.state.core, conn_id, f"{peer}", self.dirty)
        self.state.core.connections[conn_id] = self.conn
        self.state.protocols.add(self)
        self.source = str(peer[0]) if isinstance(peer, tuple) else str(peer)  # for the login throttle
        self.sasl = SaslServer(self.state.users, certificate_identity(transport.get_extra_info("peercert")),
                               admit=self.state.logins.admits(self.source))

    def data_received(self, data: bytes) -> None:
        sasl = self.sasl
        if sasl is not None:
            out, rest = sasl.feed(data)
            if out and self.transport is not None:
                self.transport.write(out)
            if sasl.result is SaslResult.FAILED:
                log.info("connection %s: SASL authentication failed", self.conn.id if self.conn else "?")
                self.state.logins.failed(self.source)
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
        self.engine.receive_data(data)
        self._process()

    def eof_received(self) -> bool | None:
        self._eof = True
        if self.engine is not None:
            self.engine.receive_data(b"")
            self._process()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.protocols.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        conn = self.conn
        if conn is not None:
            conn.cleanup()
            self.state.core.connections.pop(conn.id, None)
            log.info("connection %s closed", conn.id)
        if self.engine is not None:
            self.engine.abort()
            self._drain_events()
        self.transport = None

    # -- engine driving ------------------------------------------------------------------------
    def dirty(self) -> None:
        """Output is pending: flush once, at the end of this loop turn."""
        if not self._flush_scheduled and self.transport is not None:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        self._process()

    def _drain_events(self) -> None:
        engine, conn = self.engine, self.conn
        if engine is None or conn is None:
            return
        handle, on_delivery = conn.handle, conn.on_delivery_raw
        event_type, event_delivery, wrap = lib.pn_event_type, lib.pn_event_delivery, Event.wrap
        for ev in engine.raw_events():
            try:
                if event_type(ev) == _PN_DELIVERY:
                    on_delivery(event_delivery(ev))
                else:
                    handle(wrap(ev))
            except Exception:
                log.exception("connection %s: error handling event %s", conn.id, event_type(ev))
                self._fail("amqp:internal-error", "broker error handling the peer's request")
                return

    def _process(self) -> None:
        engine = self.engine
        if engine is None or self.transport is None:
            return
        self._drain_events()
        out = engine.data_to_send()
        if out:
            self.transport.write(out)
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
        deadline = engine.tick(time.monotonic())
        if deadline and deadline != self._deadline:
            self._deadline = deadline
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_at(self._loop_time(deadline), self._on_timer)

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
        from ..engine import EngineError

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
