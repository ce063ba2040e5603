"""A scripted AMQP 1.0 peer for frame-level client tests (the shape of Qpid JMS's TestAmqpPeer).

The peer listens on loopback, accepts connections and drives a server-role proton ``Engine``
on its own thread. A test scripts what it expects the client to send, in order, and how to
answer::

    with TestPeer() as peer:
        peer.expect_open(offered_capabilities=["ANONYMOUS-RELAY"])
        peer.expect_begin()
        peer.expect_attach(lambda a: a.role == "sender" and a.target_address == "q")
        peer.expect_transfer(lambda t: t.message.body == "hi")   # answers ``accepted``
        peer.expect_close()
        ... drive the client against peer.url ...
        peer.wait()                 # every expectation met, nothing unexpected arrived

Each expectation matches one performative as proton's engine surfaces it (open, begin,
attach, flow, transfer, disposition, detach, end, close); its ``check`` callable receives a
frozen record of what arrived and returns a bool (or raises). Anything that arrives while a
different expectation is next fails the script: ``wait()`` raises ``AssertionError`` listing it.
Flow frames are matched only when a flow expectation is next (proton raises flow events for
reasons other than frames, so they would make every script brittle); all flows are recorded in
``peer.flows``. Once the script is done, the client's teardown (detach, end, close) is answered
without being judged; script it explicitly to assert it.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from proton import (
    UNDESCRIBED,
    Array,
    Condition,
    Data,
    Delivery,
    Described,
    Event,
    Link,
    Message,
    Terminus,
    symbol,
    ulong,
)

from ..engine import Engine, SaslConfig
from ._peer_frames import (
    Attach,
    Closing,
    Disposition,
    Flow,
    Open,
    Transfer,
    _AttachSniffer,
    _data,
    _syms,
)

__all__ = ["Attach", "Flow", "Open", "TestPeer", "Transfer"]


@dataclass
class _Expect:
    kind: str
    check: Callable[[Any], Any] | None
    respond: Callable[[Any, Any], None]
    optional: bool = False
    label: str = ""


@dataclass
class _Conn:
    sock: socket.socket
    engine: Engine
    links: dict[str, Any] = field(default_factory=dict)
    tags: int = 0
    wire: _AttachSniffer = field(default_factory=lambda: _AttachSniffer())
    sasl_outcome: int | None = None  # the sasl-outcome code to answer with instead of ok


class TestPeer:
    """A scripted server; ``url`` is where a client should connect."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        sasl_mechanisms: str | None = "ANONYMOUS PLAIN",
        sasl: bool = True,
        idle_timeout_s: float | None = None,
        trace_frames: bool = False,
        sasl_outcomes: list[int] | None = None,
        max_frame_size: int | None = None,
    ) -> None:
        # the sasl-outcome codes (AMQP 1.0 5.3.3.6: 1 auth, 2 sys, 3 sys-perm, 4 sys-temp) the
        # 1st, 2nd, ... connection is answered with; connections past the list log in (ok)
        self._sasl_outcomes = list(sasl_outcomes or [])
        self._lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._lsock.bind(("127.0.0.1", 0))
        self._lsock.listen(8)
        self._lsock.setblocking(False)
        self.port = self._lsock.getsockname()[1]
        self._sasl = SaslConfig(mechanisms=sasl_mechanisms) if sasl else None
        self._idle_timeout_s = idle_timeout_s
        self._max_frame_size = max_frame_size  # advertised in the peer's Open
        self._lock = threading.RLock()
        self._script: list[_Expect] = []
        self.errors: list[str] = []
        self.flows: list[Flow] = []
        self.log: list[Any] = []
        #: names of the links the peer closed and the client has since closed too (its answer)
        self.answered_detaches: list[str] = []
        #: with ``trace_frames=True``: every frame the peer read or wrote, as proton traces it
        #: (``FRAME: 0 <- @open(16) [...]``), to check a client's own frame trace against
        self.frames: list[str] = []
        self._trace_frames = trace_frames
        self._conns: list[_Conn] = []
        self._stop = False
        self._wake_r, self._wake_w = socket.socketpair()
        self._pending_actions: list[Callable[[_Conn], None]] = []
        self._thread = threading.Thread(target=self._main, name="amqp-test-peer", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"amqp://127.0.0.1:{self.port}"

    # -- scripting -----------------------------------------------------------------------------
    def _add(self, e: _Expect) -> None:
        with self._lock:
            self._script.append(e)

    def expect_open(
        self,
        check: Callable[[Open], Any] | None = None,
        *,
        offered_capabilities: Sequence[str] = (),
        properties: dict[str, Any] | None = None,
        refuse: tuple[str, str] | None = None,
        refuse_info: dict[str, Any] | None = None,
    ) -> None:
        """Answer the client's open; ``refuse=(condition, description)`` opens then closes,
        with ``refuse_info`` as the error's info (a redirect's host and port, an invalid field)."""

        def respond(c: _Conn, info: Open) -> None:
            conn = c.engine.connection
            conn.container = "test-peer"
            if offered_capabilities:
                conn.offered_capabilities = Array(
                    UNDESCRIBED, Data.SYMBOL, *[symbol(s) for s in offered_capabilities]  # type: ignore[arg-type]
                )
            props: Any = {symbol(k): v for k, v in (properties or {}).items()}
            if refuse:
                props[symbol("amqp:connection-establishment-failed")] = True
            if props:
                conn.properties = props
            conn.open()
            if refuse:
                why: Any = {symbol(k): v for k, v in refuse_info.items()} if refuse_info else None
                conn.condition = Condition(refuse[0], refuse[1], why)
                conn.close()

        self._add(_Expect("open", check, respond, label="open"))

    def expect_begin(self, *, respond: bool = True) -> None:
        """Answer the client's begin; ``respond=False`` leaves it unanswered (a session create
        in flight when the connection drops)."""
        self._add(_Expect("begin", None, lambda c, s: s.open() if respond else None, label="begin"))

    def expect_attach(
        self,
        check: Callable[[Attach], Any] | None = None,
        *,
        refuse: tuple[str, str] | None = None,
        echo_filter: bool = True,
        offer: int = 0,
        respond: bool = True,
        label: str = "attach",
    ) -> None:
        """Answer an attach (echoing the termini); ``refuse`` answers with a null terminus and a
        detach carrying that error (an empty condition name: a detach with no error);
        ``offer`` grants that much credit to a client sender;
        ``respond=False`` leaves it unanswered (a later ``run`` action decides)."""

        def answer(c: _Conn, link: Link) -> None:
            if not respond:
                return
            if refuse:
                # a null terminus on our side of the reply, then the error
                if link.is_sender:
                    link.source.type = Terminus.UNSPECIFIED
                else:
                    link.target.type = Terminus.UNSPECIFIED
                if link.is_sender:
                    link.target.copy(link.remote_target)
                else:
                    link.source.copy(link.remote_source)
                link.open()
                if refuse[0]:
                    link.condition = Condition(refuse[0], refuse[1])
                link.close()
                return
            link.source.copy(link.remote_source)
            link.target.copy(link.remote_target)
            if not echo_filter:
                link.source.filter.clear()
            link.open()
            if offer and link.is_receiver:
                link.flow(offer)

        self._add(_Expect("attach", check, answer, label=label))

    def expect_dynamic_attach(
        self, address: str, check: Callable[[Attach], Any] | None = None,
        node_properties: list[Any] | None = None,
    ) -> None:
        """Answer a dynamic-target attach (a temporary destination) with the address of the node
        the peer 'created'; ``node_properties`` collects the requested node properties."""

        def answer(c: _Conn, link: Link) -> None:
            if node_properties is not None:
                props = link.remote_target.properties
                props.rewind()
                node_properties.append(props.get_object() if props.next() else None)
            link.source.copy(link.remote_source)
            link.target.copy(link.remote_target)
            link.target.address = address
            link.open()

        self._add(_Expect("attach", check, answer, label="dynamic attach"))

    def expect_flow(self, check: Callable[[Flow], Any] | None = None, *, send: Sequence[Any] = (),
                    settled: bool = False, drained: bool = False) -> None:
        """Match a flow; then send ``send`` messages (proton Messages or bytes) and/or, with
        ``drained``, answer a drain by consuming the remaining credit."""

        def respond(c: _Conn, link: Link) -> None:
            for m in send:
                self._transfer(c, link, m, settled)
            if drained:
                link.drained()

        self._add(_Expect("flow", check, respond, label="flow"))

    def expect_transfer(
        self,
        check: Callable[[Transfer], Any] | None = None,
        *,
        outcome: str | None = "accepted",
        condition: tuple[str, str] | None = None,
        settle: bool = True,
    ) -> None:
        """Match a message from the client; answer with ``outcome`` (None = no answer)."""

        def respond(c: _Conn, d: Delivery) -> None:
            if outcome is None or d.settled:
                if d.settled:
                    d.settle()
                return
            state = {
                "accepted": Delivery.ACCEPTED,
                "rejected": Delivery.REJECTED,
                "released": Delivery.RELEASED,
                "modified": Delivery.MODIFIED,
            }[outcome]
            if condition and outcome == "rejected":
                d.local.condition = Condition(condition[0], condition[1])
            d.update(state)
            if settle:
                d.settle()

        self._add(_Expect("transfer", check, respond, label="transfer"))

    def expect_declare(self, txn_id: bytes = b"txn-1", *, respond: bool = True,
                       hold: list[Delivery] | None = None) -> None:
        """Match a coordinator ``declare``; answer ``declared(txn_id)`` (``respond=False``:
        leave it unanswered; with ``hold``, the unanswered delivery is appended there, for
        ``answer_declare`` to answer later)."""

        def check(t: Transfer) -> bool:
            body: Any = t.message.body
            return isinstance(body, Described) and int(body.descriptor) == 0x31  # type: ignore[arg-type]

        def answer(c: _Conn, d: Delivery) -> None:
            if not respond:
                if hold is not None:
                    hold.append(d)
                return
            _declared(d, txn_id)

        self._add(_Expect("transfer", check, answer, label="declare"))

    def expect_discharge(
        self, fail: bool | None = None, *, reject: tuple[str, str] | None = None, respond: bool = True,
        hold: list[Delivery] | None = None, txn_id: bytes | None = None,
    ) -> None:
        """Match a ``discharge`` (with ``fail``, of ``txn_id``, if given); accept it, or reject
        with a condition; ``respond=False`` leaves it unanswered (an outcome the connection
        loses; with ``hold``, the delivery is appended there for ``answer_discharge``)."""

        def check(t: Transfer) -> bool:
            body: Any = t.message.body
            ok = isinstance(body, Described) and int(body.descriptor) == 0x32  # type: ignore[arg-type]
            ok = ok and (txn_id is None or bytes(body.value[0]) == txn_id)
            return ok and (fail is None or bool(body.value[1]) == fail)

        def answer(c: _Conn, d: Delivery) -> None:
            if not respond:
                if hold is not None:
                    hold.append(d)
                return
            _discharged(d, reject)

        self._add(_Expect("transfer", check, answer, label=f"discharge(fail={fail})"))

    def expect_disposition(self, check: Callable[[Disposition], Any] | None = None) -> None:
        self._add(_Expect("disposition", check, lambda c, d: None, label="disposition"))

    def expect_detach(self, check: Callable[[Closing], Any] | None = None, *, respond: bool = True) -> None:
        def answer(c: _Conn, link: Link) -> None:
            if respond:
                link.close()

        self._add(_Expect("detach", check, answer, label="detach"))

    def expect_end(self, *, respond: bool = True) -> None:
        self._add(_Expect("end", None, lambda c, s: s.close() if respond else None, label="end"))

    def expect_close(self, *, respond: bool = True) -> None:
        self._add(_Expect("close", None, lambda c, x: c.engine.connection.close() if respond else None,
                          label="close"))

    # -- unsolicited actions -------------------------------------------------------------------
    def answer_declare(self, delivery: Delivery, txn_id: bytes | None) -> None:
        """Answer a declare held by ``expect_declare(hold=...)``: ``declared(txn_id)``, or
        rejected (``txn_id=None``, condition ``amqp:internal-error``)."""
        self.run(lambda c: _declared(delivery, txn_id))

    def answer_discharge(self, delivery: Delivery, reject: tuple[str, str] | None = None) -> None:
        """Answer a discharge held by ``expect_discharge(hold=...)``: accepted, or rejected."""
        self.run(lambda c: _discharged(delivery, reject))

    def run(self, action: Callable[[_Conn], None]) -> None:
        """Run ``action(conn)`` on the peer thread (e.g. to detach a link or drop the socket)."""
        with self._lock:
            self._pending_actions.append(action)
        self._wake_w.send(b"x")

    def send(self, link_name: str, *messages: Any, settled: bool = False) -> None:
        """Send messages on the peer's sender for the client's receiver ``link_name``."""

        def act(c: _Conn) -> None:
            link = c.links[link_name]
            for m in messages:
                self._transfer(c, link, m, settled)

        self.run(act)

    def detach_link(self, link_name: str, condition: tuple[str, str] | None = None) -> None:
        def act(c: _Conn) -> None:
            link = c.links[link_name]
            if condition:
                link.condition = Condition(*condition)
            link.close()

        self.run(act)

    def drop(self) -> None:
        """Close the socket abruptly (connection loss)."""

        def act(c: _Conn) -> None:
            c.sock.close()
            self._conns.remove(c)

        self.run(act)

    def close_connection(self, condition: tuple[str, str]) -> None:
        def act(c: _Conn) -> None:
            c.engine.connection.condition = Condition(*condition)
            c.engine.connection.close()

        self.run(act)

    # -- verification --------------------------------------------------------------------------
    def wait(self, timeout: float = 5.0) -> None:
        """Wait until the script is done; raise AssertionError on unmet or unexpected frames."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.errors or not [e for e in self._script if not e.optional]:
                    break
            time.sleep(0.01)
        with self._lock:
            problems = list(self.errors)
            left = [e.label for e in self._script if not e.optional]
        if left:
            problems.append(f"expected but not received: {left}")
        if problems:
            raise AssertionError("test peer: " + "; ".join(problems))

    def close(self) -> None:
        self._stop = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._thread.join(5)
        for c in self._conns:
            c.sock.close()
        self._lsock.close()
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> TestPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- peer thread ---------------------------------------------------------------------------
    def _transfer(self, c: _Conn, link: Link, m: Any, settled: bool) -> None:
        c.tags += 1
        d = link.delivery(str(c.tags))
        payload = m.encode() if isinstance(m, Message) else bytes(m)
        link.stream(payload)
        link.advance()
        if settled:
            d.settle()

    def _main(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._lsock, selectors.EVENT_READ, "accept")
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        while not self._stop:
            for key, _ in sel.select(0.05):
                if key.data == "accept":
                    try:
                        s, _ = self._lsock.accept()
                    except BlockingIOError:
                        continue
                    s.setblocking(False)
                    try:  # a dropped connection's socket closed without unregistering: same fd
                        sel.unregister(s.fileno())
                    except KeyError:
                        pass
                    eng = Engine(
                        server=True,
                        sasl=self._sasl,
                        idle_timeout_s=self._idle_timeout_s,
                        max_frame_size=self._max_frame_size,
                    )
                    c = _Conn(s, eng)
                    if self._sasl is not None and self._sasl_outcomes:
                        c.sasl_outcome = self._sasl_outcomes.pop(0)
                    if self._trace_frames:
                        c.engine.trace_frames(self.frames.append)
                    self._conns.append(c)
                    sel.register(s, selectors.EVENT_READ, c)
                elif key.data == "wake":
                    self._wake_r.recv(4096)
                else:
                    c = key.data
                    try:
                        data = c.sock.recv(65536)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""
                    c.wire.feed(data)
                    c.engine.receive_data(data)
                    if not data:
                        sel.unregister(c.sock)
            with self._lock:
                actions, self._pending_actions = self._pending_actions, []
            for c in list(self._conns):
                for a in actions:
                    try:
                        a(c)
                    except Exception as e:  # a broken action is a test failure
                        self.errors.append(f"action failed: {e!r}")
                if c in self._conns:
                    self._pump(c, sel)

    def _pump(self, c: _Conn, sel: selectors.BaseSelector) -> None:
        eng = c.engine
        for ev in eng.events():
            self._on_event(c, ev)
        if c.sasl_outcome is not None and eng.transport.sasl().mech:
            # sasl-init has been read (proton names the mechanism), its outcome not yet
            # written: overriding proton's decision answers with the chosen code
            eng.transport.sasl().done(c.sasl_outcome)
        out = eng.data_to_send()
        if out:
            try:
                c.sock.sendall(out)
            except OSError:
                eng.write_failed()
        eng.tick(time.monotonic())
        if eng.closed and c in self._conns:
            try:
                sel.unregister(c.sock)
            except (KeyError, ValueError):
                pass
            c.sock.close()
            self._conns.remove(c)

    def _match(self, kind: str, info: Any, c: _Conn, target: Any) -> None:
        self.log.append(info)
        with self._lock:
            if not self._script:
                if kind in ("detach", "end", "close"):
                    # the script is done: answer the client's teardown without judging it
                    if kind == "close":
                        c.engine.connection.close()
                    elif target is not None:
                        target.close()
                    return
                self.errors.append(f"unexpected {kind}: {info}")
                return
            e = self._script[0]
            if e.kind != kind:
                self.errors.append(f"expected {e.label}, got {kind}: {info}")
                return
            self._script.pop(0)
        try:
            if e.check is not None and e.check(info) is False:
                self.errors.append(f"{e.label} did not match: {info}")
        except Exception as ex:
            self.errors.append(f"{e.label} check raised {ex!r} for {info}")
        e.respond(c, target)

    def _on_event(self, c: _Conn, ev: Any) -> None:
        t = ev.type
        if t == Event.CONNECTION_REMOTE_OPEN:
            conn = ev.connection
            props = {str(k): v for k, v in (conn.remote_properties or {}).items()}
            sasl_user = None
            try:
                sasl_user = eng_user(c)
            except Exception:
                pass
            info: Any = Open(conn.remote_container, conn.remote_hostname,
                        _syms(conn.remote_desired_capabilities), props, sasl_user,
                        int(c.engine.transport.remote_max_frame_size))
            self._match("open", info, c, None)
        elif t == Event.SESSION_REMOTE_OPEN:
            self._match("begin", "begin", c, ev.session)
        elif t == Event.LINK_REMOTE_OPEN:
            link = ev.link
            c.links[link.name] = link
            src, tgt = link.remote_source, link.remote_target
            info = Attach(
                name=link.name,
                role="receiver" if link.is_sender else "sender",
                source_address=src.address,
                target_address=tgt.address,
                source_capabilities=_syms(_data(src.capabilities)),
                target_capabilities=_syms(_data(tgt.capabilities)),
                target_is_coordinator=tgt.type == Terminus.COORDINATOR,
                outcomes=_syms(_data(src.outcomes)),
                filter=_filters(src.filter),
                snd_settle_mode=int(link.remote_snd_settle_mode),
                rcv_settle_mode=int(link.remote_rcv_settle_mode),
                durable=int(src.durability),
                expiry_policy=int(src.expiry_policy),
                distribution_mode=int(src.distribution_mode),
                dynamic=bool(tgt.dynamic if link.is_receiver else src.dynamic),
                default_outcome=c.wire.default_outcomes.get(link.name),
            )
            self._match("attach", info, c, link)
        elif t == Event.LINK_FLOW:
            link = ev.link
            if link.is_sender and link.state & Link.LOCAL_ACTIVE:
                f = Flow(link.name, link.credit, bool(link.drain_mode))
                self.flows.append(f)
                with self._lock:
                    nxt = self._script[0].kind if self._script else None
                if nxt == "flow":
                    self._match("flow", f, c, link)
        elif t == Event.DELIVERY:
            d = ev.delivery
            link = d.link
            if link.is_receiver:
                if d.partial or not d.readable:
                    return
                data = link.recv(d.pending)
                link.advance()
                msg = Message()
                msg.decode(data)
                info = Transfer(link.name, msg, bool(d.settled), int(d.remote_state or 0),
                                d.remote.data, str(d.tag), bytes(data))
                self._match("transfer", info, c, d)
            else:
                r = d.remote
                info2 = Disposition(link.name, str(d.tag), int(d.remote_state or 0), r.data,
                                    bool(d.settled), bool(r.failed), bool(r.undeliverable))
                if d.settled:
                    d.settle()
                self._match("disposition", info2, c, d)
        elif t in (Event.LINK_REMOTE_CLOSE, Event.LINK_REMOTE_DETACH):
            link = ev.link
            if link.state & Link.LOCAL_CLOSED:
                self.answered_detaches.append(link.name)  # the answer to our own detach
                return
            cond = link.remote_condition
            info3 = Closing("detach", link.name, t == Event.LINK_REMOTE_CLOSE,
                            str(cond.name) if cond is not None else None)
            self._match("detach", info3, c, link)
        elif t == Event.SESSION_REMOTE_CLOSE:
            s = ev.session
            if s.state & Link.LOCAL_CLOSED:
                return
            self._match("end", Closing("end", None, True, None), c, s)
        elif t == Event.CONNECTION_REMOTE_CLOSE:
            conn = ev.connection
            if conn.state & Link.LOCAL_CLOSED:
                return
            self._match("close", Closing("close", None, True, None), c, None)


def _declared(d: Delivery, txn_id: bytes | None) -> None:
    """Answer a declare: ``declared(txn_id)``, or rejected when ``txn_id`` is None."""
    if txn_id is None:
        d.local.condition = Condition("amqp:internal-error", "declare refused by the test peer")
        d.update(Delivery.REJECTED)
    else:
        d.local.data = [txn_id]  # type: ignore[list-item]
        d.update(0x33)
    d.settle()


def _discharged(d: Delivery, reject: tuple[str, str] | None) -> None:
    """Answer a discharge: accepted, or rejected with condition ``reject``."""
    if reject:
        d.local.condition = Condition(reject[0], reject[1])
        d.update(Delivery.REJECTED)
    else:
        d.update(Delivery.ACCEPTED)
    d.settle()


def eng_user(c: _Conn) -> str | None:
    user = c.engine.transport.user
    return str(user) if user else None


def _filters(d: Data) -> dict[str, Any] | None:
    obj = _data(d)
    if not isinstance(obj, dict):
        return None
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, Described):
            out[str(k)] = (int(v.descriptor) if isinstance(v.descriptor, ulong | int) else str(v.descriptor),
                           v.value)
        else:
            out[str(k)] = v
    return out
