"""``ListenerContainer``: the blocking face (a thread per worker, a supervisor thread).

::

    def handle(message):            # called on several threads at once with concurrency > 1
        process(message.get_body(str))

    with ListenerContainer("amqp://localhost:5672", handle, "queue://orders",
                           concurrency="1-8", mode="transacted") as c:
        c.run()                     # until SIGTERM / SIGINT / c.stop(): a graceful stop

The supervisor opens the connection (again, with the policy's reconnect back-off, when it is
lost: a ``failover:`` URL rides through drops by itself and only a connection failover gave up
on reaches this), starts the minimum of workers, and lets workers start another while every
one is busy (up to the maximum); a worker idle ``idle_receives_to_retire`` receives in a row
retires while more than the minimum run (Spring DMLC's idle-consumer scaling). A stop takes no
more messages, lets each handler finish and its message settle (or the batch commit), then
closes; whatever was not settled goes back to the broker with the connection.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import JMSException
from ._core import (
    LOG,
    Health,
    Outcomes,
    Stats,
    StatsSnapshot,
    Telemetry,
    container_factory,
    create_consumer,
    log_connect_failure,
    log_late,
    log_lost,
)
from .policy import ACKNOWLEDGE_ONLY, COMMIT, ROLLBACK, ContainerPolicy, Step

__all__ = ["ListenerContainer"]

_clock = time.perf_counter
Handler = Callable[[Any], Any]
ErrorHandler = Callable[[BaseException, Any], Any]


class ListenerContainer:
    """Consume ``destination`` with ``handler``; options are ``ContainerPolicy``'s fields
    (``selector``, ``subscription``, ``durable``, ``shared``, ``concurrency``, ``mode``,
    ``batch_size``, ``max_deliveries``, ``backoff``, ``reconnect``, ``receive_timeout_s``,
    ``shutdown_timeout_s``...), or a ready ``policy``."""

    def __init__(self, factory: Any, handler: Handler, destination: Any = None, *,
                 policy: ContainerPolicy | None = None, error_handler: ErrorHandler | None = None,
                 telemetry: bool | None = None, **options: Any) -> None:
        if policy is None:
            if destination is None:
                raise ValueError("a ListenerContainer needs a destination (or a policy)")
            policy = ContainerPolicy.of(destination, **options)
        elif options or destination is not None:
            raise ValueError("give a policy or a destination with options, not both")
        if not callable(handler):
            raise TypeError(f"the handler must be callable, got {handler!r}")
        self.policy = policy
        self._factory = container_factory(factory, policy)
        self._handler = handler
        self._stats = Stats()
        self._outcomes = Outcomes(policy, self._stats, Telemetry(policy, telemetry, self._factory),
                                 error_handler)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._lost = threading.Event()
        self._stopped = threading.Event()
        self._workers: dict[threading.Thread, Any] = {}  # worker -> its consumer (once made)
        self._busy = 0
        self._spawning = False
        self._connection: Any = None
        self._generation = 0
        self._state = "new"
        self._detail = ""
        self._supervisor: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start consuming (returns at once; ``health().ready`` says when workers consume)."""
        if self._supervisor is not None:
            return
        self._state = "starting"
        self._supervisor = threading.Thread(target=self._supervise, name="amqp-jms-container", daemon=True)
        self._supervisor.start()

    def run(self, install_signal_handlers: bool = True) -> None:
        """Start, then block until stopped; SIGTERM and SIGINT stop gracefully (main thread)."""
        if install_signal_handlers and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self._stopping.set())
        self.start()
        while not self._stopped.wait(0.2):
            if self._stopping.is_set():
                self.stop()

    def stop(self, timeout: float | None = None) -> bool:
        """Graceful stop: take no more, finish in-flight, settle or commit, close. True when
        every handler finished within ``timeout`` (default: the policy's shutdown timeout)."""
        self._stopping.set()
        sup = self._supervisor
        if sup is None:
            self._stopped.set()
            return True
        if sup is not threading.current_thread():
            sup.join(self.policy.shutdown_timeout_s + 5 if timeout is None else timeout + 5)
        return self._state == "stopped"

    def __enter__(self) -> ListenerContainer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- operations ----------------------------------------------------------------------------
    def stats(self) -> StatsSnapshot:
        with self._lock:
            consumers = [c for c in self._workers.values() if c is not None]
        backlog = sum(len(c.internal.local_queue) for c in consumers)
        return self._stats.snapshot(len(consumers), backlog)

    def health(self) -> Health:
        state = self._state
        with self._lock:
            consuming = sum(1 for c in self._workers.values() if c is not None)
        ready = state == "running" and consuming > 0
        live = state not in ("stopped", "new") or not self._stopping.is_set()
        return Health(live=live and state != "stopped", ready=ready, state=state, detail=self._detail)

    # -- supervisor ----------------------------------------------------------------------------
    def _supervise(self) -> None:
        policy = self.policy
        attempt = 0
        served = False
        try:
            while not self._stopping.is_set():
                conn = None
                try:
                    conn = self._factory.create_connection()
                    self._lost.clear()
                    conn.set_exception_listener(self._on_lost)
                    conn.start()  # opens the connection: a refused one backs off here
                except JMSException as e:
                    if conn is not None:
                        self._close(conn)
                    attempt += 1
                    delay = policy.reconnect.delay(attempt)
                    self._state, self._detail = "reconnecting", log_connect_failure(policy, attempt, delay, e)
                    self._stopping.wait(delay)
                    continue
                if served:
                    self._stats.reconnects += 1
                served, attempt = True, 0
                self._serve(conn)
        finally:
            self._state = "stopped"
            self._stopped.set()

    def _serve(self, conn: Any) -> None:
        """Run workers on ``conn`` until it is lost or the container stops; then close it."""
        policy = self.policy
        with self._lock:
            self._generation += 1
            self._connection = conn
        for _ in range(policy.concurrency.minimum):
            self._spawn(conn)
        self._state, self._detail = "running", ""
        while not self._stopping.is_set() and not self._lost.is_set():
            self._lost.wait(0.2)
        graceful = self._stopping.is_set() and not self._lost.is_set()
        self._state = "stopping" if graceful else "reconnecting"
        deadline = time.monotonic() + (policy.shutdown_timeout_s if graceful else 5.0)
        if not graceful:
            self._close(conn)  # a receive blocked on the dead connection returns
        with self._lock:
            self._generation += 1  # workers of this connection finish after their message
        for t in list(self._workers):
            t.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            late = [t.name for t in self._workers if t.is_alive()]
        if late:
            log_late(policy, len(late))
        self._close(conn)

    def _close(self, conn: Any) -> None:
        try:
            conn.close()
        except JMSException as e:
            LOG.debug("closing the container's connection: %s", e)

    def _on_lost(self, exc: BaseException) -> None:
        if not self._stopping.is_set() and not self._lost.is_set():
            self._detail = log_lost(self.policy, exc)
        self._lost.set()

    # -- workers -------------------------------------------------------------------------------
    def _spawn(self, conn: Any) -> None:
        with self._lock:
            gen = self._generation
            n = len(self._workers) + 1
            t = threading.Thread(target=self._work, args=(conn, gen), name=f"amqp-jms-worker-{n}",
                                 daemon=True)
            self._workers[t] = None
        t.start()

    def _maybe_scale_up(self, conn: Any) -> None:
        """Every worker busy and room for one more: start it (one at a time)."""
        c = self.policy.concurrency
        if not c.scales:
            return
        with self._lock:
            if (self._spawning or len(self._workers) >= c.top
                    or self._busy < len(self._workers) or self._stopping.is_set()):
                return
            self._spawning = True
        self._spawn(conn)

    def _may_retire(self) -> bool:
        with self._lock:
            if len(self._workers) > self.policy.concurrency.minimum:
                self._workers.pop(threading.current_thread(), None)
                return True
        return False

    def _current(self, gen: int) -> bool:
        return gen == self._generation and not self._stopping.is_set()

    def _work(self, conn: Any, gen: int) -> None:
        me = threading.current_thread()
        policy = self.policy
        session = consumer = None
        pending, dirty, idle = 0, False, 0
        timeout_ms = max(1, int(policy.receive_timeout_s * 1000))
        scales = policy.concurrency.scales  # only then is "every worker busy" worth counting
        try:
            session = conn.create_session(policy.session_mode)
            consumer = create_consumer(session, policy)
            with self._lock:
                self._workers[me] = consumer
                self._spawning = False
            while self._current(gen):
                msg = consumer.receive(timeout_ms)
                if msg is None:
                    if not self._current(gen):
                        break
                    self._run_steps(session, policy.on_idle(pending, dirty))
                    pending, dirty = 0, False
                    idle += 1
                    if idle >= policy.idle_receives_to_retire and self._may_retire():
                        break
                    continue
                idle = 0
                if not scales:
                    pending, dirty = self._handle(session, msg, pending, dirty)
                    continue
                with self._lock:
                    self._busy += 1
                try:
                    self._maybe_scale_up(conn)
                    pending, dirty = self._handle(session, msg, pending, dirty)
                finally:
                    with self._lock:
                        self._busy -= 1
            if self._stopping.is_set() and not self._lost.is_set():
                self._run_steps(session, policy.on_stop(pending))
        except JMSException as e:
            if not self._stopping.is_set() or self._lost.is_set():
                self._on_lost(e)
            else:
                LOG.warning("%s: a worker could not settle while stopping: %s", policy.describes, e)
        except Exception:  # a bug, not the handler's (that one is caught in _handle)
            LOG.exception("%s: a worker failed", policy.describes)
            self._on_lost(RuntimeError("a worker failed"))
        finally:
            with self._lock:
                self._workers.pop(me, None)
                if consumer is None:
                    self._spawning = False
            if session is not None and not self._lost.is_set():
                try:
                    session.close()  # releases what was prefetched and never handled
                except JMSException:
                    pass

    def _handle(self, session: Any, msg: Any, pending: int, dirty: bool) -> tuple[int, bool]:
        """One message through the handler and the policy; returns (pending, dirty)."""
        out = self._outcomes
        self._stats.started()
        t0 = _clock()
        try:
            if out.telemetry.on:
                with out.telemetry.span(msg):
                    self._handler(msg)
            else:  # (a few microseconds a message: the container's own cost is measured)
                self._handler(msg)
        except Exception as exc:
            failure = out.failed(msg, exc, _clock() - t0)
            if failure.delay_s:
                self._stopping.wait(failure.delay_s)  # held meanwhile; a stop cuts it short
            for step in failure.steps:
                if not out.settle_now(msg, step, failure.outcome):
                    self._run_steps(session, (step,))
            return (0, True) if step is ROLLBACK else (pending, dirty)
        steps = out.succeeded(_clock() - t0, pending + 1)
        if steps is ACKNOWLEDGE_ONLY:
            msg.acknowledge()
            return pending + 1, dirty
        for step in steps:
            if not out.settle_now(msg, step, 0):
                self._run_steps(session, (step,))
        return (0, False) if COMMIT in steps else (pending + 1, dirty)

    @staticmethod
    def _run_steps(session: Any, steps: tuple[Step, ...]) -> None:
        for step in steps:
            if step is COMMIT:
                session.commit()
            elif step is ROLLBACK:
                session.rollback()
