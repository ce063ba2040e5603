"""One AMQP connection as a state machine over proton's engine: bytes in, events out.

proton's engine (``Connection`` + ``Transport`` + ``Collector``) already is a sans-IO protocol
core; this class is the thin, typed seam both the client's provider and the broker drive it
through, so neither re-learns proton's buffer dance. It never touches a socket, a clock, a
thread or asyncio: the adapter feeds bytes with ``receive_data``, writes what ``data_to_send``
returns, calls ``tick(now)`` at the deadline it returns, and handles ``events()``.

Errors: proton reports transport-level failures (a malformed frame, an idle timeout, a failed
SASL exchange) as a transport error condition and a ``TRANSPORT_CLOSED`` event; the engine never
raises out of ``receive_data`` for bad input. ``closed`` turns true once both directions are
done, and ``error`` holds the condition that ended it, if any.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from cproton_ffi import ffi, lib
from proton import Collector, Condition, Connection, Event, SSLDomain, Transport

__all__ = ["Engine", "EngineError", "SaslConfig"]

_peek, _pop, _NULL = lib.pn_collector_peek, lib.pn_collector_pop, ffi.NULL
_more = lib.pn_collector_more
# proton-c's transport calls, without proton's Python wrappers (each wrapper call costs more than
# the C call on the per-message path: a waiting send reads, ticks and writes once per message)
_capacity, _push, _tick = lib.pn_transport_capacity, lib.pn_transport_push, lib.pn_transport_tick
_pending, _tpeek, _tpop = lib.pn_transport_pending, lib.pn_transport_peek, lib.pn_transport_pop
_unpack = ffi.unpack
#: output up to this size is copied out of proton through one kept buffer (a waiting send's
#: transfer, an acknowledgement); more goes through a buffer of its own size, as before
_OUT_SMALL = 4096
_from_buffer = ffi.from_buffer

@dataclass(frozen=True, slots=True)
class EngineError:
    """The AMQP error condition that ended a connection (ours or the peer's)."""

    name: str
    description: str | None = None

    @classmethod
    def from_condition(cls, cond: Condition | None) -> EngineError | None:
        """The error a proton condition reports, or ``None`` if it names none, so a close that
        carries an empty condition is not mistaken for a failure."""
        if cond is None or not cond.name:
            return None
        return cls(str(cond.name), cond.description)


@dataclass(frozen=True, slots=True)
class SaslConfig:
    """SASL settings of a server engine (the scripted test peer's; the broker and the client
    speak SASL on the wire themselves: ``broker/protocol/sasl.py``, ``engine/sasl_client.py``).
    ``mechanisms`` is a space-separated allow-list (proton's form)."""

    enabled: bool = True
    mechanisms: str | None = None
    allow_insecure: bool = True


class Engine:
    """proton's Connection/Transport/Collector bound together, driven by an external adapter.

    ``server=True`` makes the transport accept an incoming connection (broker role). With
    ``sasl=None`` no SASL layer is expected (the AMQP header comes first).
    """

    def __init__(
        self,
        *,
        server: bool = False,
        sasl: SaslConfig | None = None,
        ssl_domain: SSLDomain | None = None,
        max_frame_size: int | None = None,
        idle_timeout_s: float | None = None,
        connection: Connection | None = None,
    ) -> None:
        self.server = server
        self.connection: Connection = connection if connection is not None else Connection()
        self.collector = Collector()
        self.connection.collect(self.collector)
        self.transport = Transport(Transport.SERVER if server else Transport.CLIENT)
        if max_frame_size:
            self.transport.max_frame_size = max_frame_size
        if idle_timeout_s:
            self.transport.idle_timeout = idle_timeout_s
        if sasl is not None and sasl.enabled:
            s = self.transport.sasl()
            if sasl.mechanisms:
                s.allowed_mechs(sasl.mechanisms)
            s.allow_insecure_mechs = sasl.allow_insecure
        if ssl_domain is not None:
            from proton import SSL

            SSL(self.transport, ssl_domain)
        self.transport.bind(self.connection)
        self._transport_impl = self.transport._impl
        #: the ``pn_transport_t``'s and ``pn_collector_t``'s addresses, for C code that drives
        #: them (``write_through``)
        self.transport_addr = int(ffi.cast("uintptr_t", self._transport_impl))
        self.collector_addr = int(ffi.cast("uintptr_t", self.collector._impl))
        self._head_closed = False
        self._out_c = ffi.from_buffer(bytearray(_OUT_SMALL))
        self._tail_closed = False
        self._eof = False

    def trace_frames(self, sink: Callable[[str], None]) -> None:
        """Hand ``sink`` every frame proton reads or writes, decoded as its frame trace
        (``PN_TRACE_FRM``) prints it: ``0 -> @open(16) [container-id="c", ...]``. proton formats
        a line only when tracing is on, so an engine without it pays nothing per frame."""
        self.transport.trace(Transport.TRACE_FRM)
        self.transport.tracer = lambda _transport, line: sink(line)

    # -- input ---------------------------------------------------------------------------------
    @property
    def eof_received(self) -> bool:
        """The peer closed its side of the socket (``receive_data(b"")``)."""
        return self._eof

    def receive_data(self, data: bytes) -> None:
        """Feed bytes read from the peer; ``b""`` means the peer closed its side (EOF)."""
        if self._tail_closed:
            return
        if not data:
            self._tail_closed = True
            self._eof = True
            self.transport.close_tail()
            t = self.transport
            if t.condition is None and not t.closed and not self.connection.state & Connection.REMOTE_CLOSED:
                # proton reports "connection aborted" for EOF at a frame boundary, but EOF in the
                # middle of a frame leaves it waiting for bytes that cannot come: no error, never
                # closed. Say what happened and finish, so the adapter sees TRANSPORT_CLOSED.
                t.condition = Condition("amqp:connection:framing-error", "connection aborted mid-frame")
                t.close_head()
            return
        n = len(data)
        impl = self._transport_impl
        if _capacity(impl) >= n:  # all of it at once (nearly always), straight to proton-c
            if _push(impl, _from_buffer(data), n) >= 0:
                return
        view = memoryview(data)
        while view:
            cap = self.transport.capacity()
            if cap <= 0:
                # the transport will take no more input (closed or errored): drop the rest, the
                # TRANSPORT_CLOSED event tells the adapter.
                self._tail_closed = True
                return
            n = min(cap, len(view))
            self.transport.push(bytes(view[:n]))
            view = view[n:]

    # -- output --------------------------------------------------------------------------------
    def has_output(self) -> bool:
        """Proton has bytes for the peer, or has finished its output (``data_to_send`` tells
        which): a reader that often has none skips the call."""
        return self._head_closed or _pending(self._transport_impl) != 0

    def data_to_send(self) -> bytes:
        """All bytes proton has ready for the peer (possibly ``b""``)."""
        if self._head_closed:
            return b""
        impl = self._transport_impl
        out_c = self._out_c
        chunks: list[bytes] = []
        while True:
            pending = _pending(impl)
            if pending < 0:
                self._head_closed = True
                break
            if pending == 0:
                break
            if pending <= _OUT_SMALL:
                buf = out_c
            else:
                buf = _from_buffer(bytearray(pending))
            got = _tpeek(impl, buf, pending)
            if got < 0:  # (proton's own error, as its wrapper reports it)
                self.transport._check(got)
            _tpop(impl, pending)
            chunks.append(_unpack(buf, pending))
        if not chunks:
            return b""
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def write_failed(self) -> None:
        """The adapter could not write (socket gone): the output side is finished."""
        if not self._head_closed:
            self._head_closed = True
            self.transport.close_head()

    # -- time ----------------------------------------------------------------------------------
    def tick(self, now: float) -> float:
        """Run timers (idle timeout, heartbeats) at ``now`` (seconds, any monotonic clock).

        Returns the next deadline in the same clock, or 0.0 when none is set.
        """
        return _tick(self._transport_impl, int(now * 1000)) / 1000.0

    # -- events --------------------------------------------------------------------------------
    def events(self) -> Iterator[Event]:
        """Pop and yield every pending proton event, in order."""
        collector = self.collector
        while True:
            ev = collector.peek()
            if ev is None:
                return
            try:
                yield ev
            finally:
                collector.pop()

    def raw_events(self) -> Iterator[Any]:
        """Pop and yield every pending event as proton-c's ``pn_event_t`` pointer (cffi).

        For hot paths that cannot afford a Python ``Event`` (and its context wrappers) per
        delivery: read the pointer with ``cproton_ffi.lib`` or wrap it with ``Event.wrap``.
        The pointer is valid until the next iteration.
        """
        from cproton_ffi import ffi, lib

        coll = self.collector._impl
        null = ffi.NULL
        peek, pop = lib.pn_collector_peek, lib.pn_collector_pop
        while True:
            ev = peek(coll)
            if ev == null:
                return
            try:
                yield ev
            finally:
                pop(coll)

    def peek_raw(self) -> Any:
        """The next pending event as a ``pn_event_t`` pointer, or None; it stays pending until
        ``pop_raw`` (for a reader that may leave an event to someone else)."""
        ev = _peek(self.collector._impl)
        return None if ev == _NULL else ev

    def pop_raw(self) -> None:
        """Drop the event ``peek_raw`` returned."""
        _pop(self.collector._impl)

    def sole_event(self) -> Any:
        """The pending event as a ``pn_event_t`` pointer when it is the only one, else None: a
        reader that knows what that one event says may act on it and leave it pending (for
        whoever next takes the events), sure that nothing else waits behind it."""
        coll = self.collector._impl
        ev = _peek(coll)
        return None if ev == _NULL or _more(coll) else ev

    # -- state ---------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """Both directions are finished: the adapter can close the socket."""
        return self.transport.closed or (self._head_closed and self._tail_closed)

    @property
    def error(self) -> EngineError | None:
        """The condition that ended the connection: transport, then remote, then local."""
        return (
            EngineError.from_condition(self.transport.condition)
            or EngineError.from_condition(self.connection.remote_condition)
            or EngineError.from_condition(self.connection.condition)
        )

    def close(self, error: EngineError | None = None) -> None:
        """Begin a clean close of the connection, optionally with an error condition."""
        if error is not None:
            self.connection.condition = Condition(error.name, error.description)
        self.connection.close()

    def abort(self) -> None:
        """Give up on the connection at once (e.g. the socket died)."""
        if not self._tail_closed:
            self._tail_closed = True
            self.transport.close_tail()
        if not self._head_closed:
            self._head_closed = True
            self.transport.close_head()
