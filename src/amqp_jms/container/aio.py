"""``AsyncListenerContainer``: the asyncio face of the listener container (a task per worker).

::

    async def handle(message):
        await store(message.get_body(str))

    async with AsyncListenerContainer(url, handle, "queue://orders", concurrency=8) as c:
        await c.run()      # until c.stop() (or SIGTERM / SIGINT): a graceful stop

The same policy as ``ListenerContainer`` (``policy.py`` decides, ``_core.Outcomes`` records);
only the waiting differs: receives await ``AsyncConsumer``, a plain (not ``async``) handler runs
in a worker thread so the event loop never blocks, commit and rollback run in a thread as every
blocking call of the asyncio API does.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import signal
import time
from typing import Any

from ..aio import AsyncConnection, AsyncConsumer, AsyncSession
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
from .policy import COMMIT, ROLLBACK, ContainerPolicy, Step

__all__ = ["AsyncListenerContainer"]


class AsyncListenerContainer:
    """As ``ListenerContainer``; ``handler`` may be an ``async def``."""

    def __init__(self, factory: Any, handler: Any, destination: Any = None, *,
                 policy: ContainerPolicy | None = None, error_handler: Any = None,
                 telemetry: bool | None = None, **options: Any) -> None:
        if policy is None:
            if destination is None:
                raise ValueError("an AsyncListenerContainer needs a destination (or a policy)")
            policy = ContainerPolicy.of(destination, **options)
        if not callable(handler):
            raise TypeError(f"the handler must be callable, got {handler!r}")
        self.policy = policy
        self._factory = container_factory(factory, policy)
        self._handler = handler
        self._is_async = inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
            type(handler).__call__)
        self._stats = Stats()
        self._outcomes = Outcomes(policy, self._stats, Telemetry(policy, telemetry, self._factory),
                                 error_handler)
        self._stopping = asyncio.Event()
        self._lost = asyncio.Event()
        self._workers: dict[asyncio.Task[None], Any] = {}
        self._busy = 0
        self._spawning = False
        self._generation = 0
        self._state = "new"
        self._detail = ""
        self._supervisor: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._supervisor is None:
            self._state = "starting"
            self._supervisor = asyncio.create_task(self._supervise(), name="amqp-jms-container")

    async def run(self, install_signal_handlers: bool = True) -> None:
        """Start, then wait until stopped; SIGTERM and SIGINT stop gracefully."""
        loop = asyncio.get_running_loop()
        if install_signal_handlers:
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, self._stopping.set)
        await self.start()
        assert self._supervisor is not None
        await self._supervisor

    async def stop(self) -> bool:
        self._stopping.set()
        if self._supervisor is not None:
            await self._supervisor
        return self._state == "stopped"

    async def __aenter__(self) -> AsyncListenerContainer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def stats(self) -> StatsSnapshot:
        consumers = [c for c in self._workers.values() if c is not None]
        return self._stats.snapshot(len(consumers), sum(len(c.sync.internal.local_queue) for c in consumers))

    def health(self) -> Health:
        consuming = sum(1 for c in self._workers.values() if c is not None)
        state = self._state
        return Health(live=state != "stopped", ready=state == "running" and consuming > 0, state=state,
                      detail=self._detail)

    # -- supervisor ----------------------------------------------------------------------------
    async def _supervise(self) -> None:
        policy = self.policy
        attempt = 0
        served = False
        loop = asyncio.get_running_loop()

        def lost(e: JMSException) -> None:  # on the connection's listener thread
            loop.call_soon_threadsafe(self._on_lost, e)

        try:
            while not self._stopping.is_set():
                conn = None
                try:
                    conn = AsyncConnection(await asyncio.to_thread(self._factory.create_connection))
                    self._lost.clear()
                    conn.sync.set_exception_listener(lost)
                    await conn.start()  # opens the connection: a refused one backs off here
                except JMSException as e:
                    if conn is not None:
                        await self._close(conn)
                    attempt += 1
                    delay = policy.reconnect.delay(attempt)
                    self._state, self._detail = "reconnecting", log_connect_failure(policy, attempt, delay, e)
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._stopping.wait(), delay)
                    continue
                if served:
                    self._stats.reconnects += 1
                served, attempt = True, 0
                await self._serve(conn)
        finally:
            self._state = "stopped"

    async def _serve(self, conn: AsyncConnection) -> None:
        policy = self.policy
        self._generation += 1
        for _ in range(policy.concurrency.minimum):
            self._spawn(conn)
        self._state, self._detail = "running", ""
        stop = asyncio.ensure_future(self._stopping.wait())
        lost = asyncio.ensure_future(self._lost.wait())
        await asyncio.wait([stop, lost], return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        lost.cancel()
        graceful = not self._lost.is_set()
        self._state = "stopping" if graceful else "reconnecting"
        if not graceful:
            await self._close(conn)
        self._generation += 1
        workers = list(self._workers)
        if workers:
            _, late = await asyncio.wait(workers, timeout=policy.shutdown_timeout_s if graceful else 5.0)
            if late:
                log_late(policy, len(late))
                for t in late:
                    t.cancel()
        await self._close(conn)

    @staticmethod
    async def _close(conn: AsyncConnection) -> None:
        try:
            await conn.close()
        except JMSException as e:
            LOG.debug("closing the container's connection: %s", e)

    def _on_lost(self, exc: BaseException) -> None:
        if not self._stopping.is_set() and not self._lost.is_set():
            self._detail = log_lost(self.policy, exc)
        self._lost.set()

    # -- workers -------------------------------------------------------------------------------
    def _spawn(self, conn: AsyncConnection) -> None:
        name = f"amqp-jms-worker-{len(self._workers) + 1}"
        t = asyncio.create_task(self._work(conn, self._generation), name=name)
        self._workers[t] = None

    def _maybe_scale_up(self, conn: AsyncConnection) -> None:
        c = self.policy.concurrency
        if (c.scales and not self._spawning and len(self._workers) < c.top
                and self._busy >= len(self._workers) and not self._stopping.is_set()):
            self._spawning = True
            self._spawn(conn)

    def _current(self, gen: int) -> bool:
        return gen == self._generation and not self._stopping.is_set()

    async def _work(self, conn: AsyncConnection, gen: int) -> None:
        me = asyncio.current_task()
        assert me is not None
        policy = self.policy
        session: AsyncSession | None = None
        consumer: AsyncConsumer | None = None
        pending, dirty, idle = 0, False, 0
        timeout_ms = max(1, int(policy.receive_timeout_s * 1000))
        try:
            session = await conn.create_session(policy.session_mode)
            consumer = AsyncConsumer(await asyncio.to_thread(create_consumer, session.sync, policy))
            self._workers[me] = consumer
            self._spawning = False
            while self._current(gen):
                msg = await consumer.receive(timeout_ms)
                if msg is None:
                    if not self._current(gen):
                        break
                    await self._run_steps(session, policy.on_idle(pending, dirty))
                    pending, dirty = 0, False
                    idle += 1
                    if (idle >= policy.idle_receives_to_retire
                            and len(self._workers) > policy.concurrency.minimum):
                        break
                    continue
                idle = 0
                self._busy += 1
                try:
                    self._maybe_scale_up(conn)
                    pending, dirty = await self._handle(session, msg, pending, dirty)
                finally:
                    self._busy -= 1
            if self._stopping.is_set() and not self._lost.is_set():
                await self._run_steps(session, policy.on_stop(pending))
        except JMSException as e:
            if not self._stopping.is_set() or self._lost.is_set():
                self._on_lost(e)
        except asyncio.CancelledError:
            raise
        except Exception:
            LOG.exception("%s: a worker failed", policy.describes)
            self._on_lost(RuntimeError("a worker failed"))
        finally:
            self._workers.pop(me, None)
            if consumer is None:
                self._spawning = False
            if session is not None and not self._lost.is_set():
                with contextlib.suppress(JMSException):
                    await session.close()

    async def _call(self, msg: Any) -> None:
        if self._is_async:
            await self._handler(msg)
        else:
            await asyncio.to_thread(self._handler, msg)

    async def _handle(self, session: AsyncSession, msg: Any, pending: int, dirty: bool) -> tuple[int, bool]:
        out = self._outcomes
        self._stats.started()
        t0 = time.perf_counter()
        try:
            with out.telemetry.span(msg):
                await self._call(msg)
        except Exception as exc:
            failure = out.failed(msg, exc, time.perf_counter() - t0)
            if failure.delay_s:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), failure.delay_s)
            for step in failure.steps:
                if not out.settle_now(msg, step, failure.outcome):
                    await self._run_steps(session, (step,))
            return (0, True) if step is ROLLBACK else (pending, dirty)
        steps = out.succeeded(time.perf_counter() - t0, pending + 1)
        for step in steps:
            if not out.settle_now(msg, step, 0):
                await self._run_steps(session, (step,))
        return (0, False) if COMMIT in steps else (pending + 1, dirty)

    @staticmethod
    async def _run_steps(session: AsyncSession, steps: tuple[Step, ...]) -> None:
        for step in steps:
            if step is COMMIT:
                await session.commit()
            elif step is ROLLBACK:
                await session.rollback()
