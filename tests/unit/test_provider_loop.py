"""The loop thread bridge and the AMQP-error seam (no sockets)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from amqp_jms import (
    IllegalStateException,
    InvalidClientIDException,
    InvalidDestinationException,
    JMSException,
    JMSSecurityException,
    ResourceAllocationException,
    TransactionRolledBackException,
)
from amqp_jms.provider.errors import to_jms
from amqp_jms.provider.loop import LoopThread, PostedBatch


def test_run_returns_results_and_raises_timeouts() -> None:
    lt = LoopThread("test-loop")
    try:
        async def add() -> int:
            return 1 + 1

        assert lt.run(add(), 1.0) == 2

        async def slow() -> None:
            import asyncio

            await asyncio.sleep(5)

        with pytest.raises(JMSException, match="timed out"):
            lt.run(slow(), 0.05, "slow thing")
    finally:
        lt.stop()
    assert not lt.thread.is_alive()


def test_run_on_the_loop_thread_is_refused() -> None:
    lt = LoopThread("test-loop")
    try:
        seen: list[BaseException] = []

        async def inner() -> None:
            return None

        async def outer() -> None:
            try:
                lt.run(inner(), 1.0)
            except IllegalStateException as e:
                seen.append(e)

        lt.run(outer(), 1.0)
        assert seen and "deadlock" in str(seen[0])
    finally:
        lt.stop()


def test_posted_work_runs_in_order_in_batches_then_after_ops() -> None:
    lt = LoopThread("test-loop")
    out: list[object] = []
    flushed = threading.Event()
    batches: list[int] = []
    lt.set_after_ops(lambda: (batches.append(len(out)), flushed.set()))
    try:
        gate = threading.Event()
        lt.post(lambda: gate.wait(1))  # hold the loop while more work queues up
        for i in range(100):
            lt.post(lambda i=i: out.append(i))
        gate.set()
        assert flushed.wait(2)

        async def noop() -> None:
            return None

        lt.run(noop(), 1.0)
        assert out == list(range(100))
        assert len(batches) <= 3  # 100 posts cost a few wake-ups, not 100
    finally:
        lt.stop()


@pytest.mark.parametrize(
    "condition, cls",
    [
        ("amqp:not-found", InvalidDestinationException),
        ("amqp:unauthorized-access", JMSSecurityException),
        ("amqp:resource-limit-exceeded", ResourceAllocationException),
        ("amqp:transaction:rollback", TransactionRolledBackException),
        ("amqp:internal-error", JMSException),
        (None, JMSException),
    ],
)
def test_conditions_map_to_jms_exceptions(condition: str | None, cls: type) -> None:
    e = to_jms(condition, "details here", "doing a thing")
    assert type(e) is cls
    assert e.error_code == condition
    assert "doing a thing" in str(e) and "details here" in str(e)


def test_refused_container_id_is_invalid_client_id() -> None:
    e = to_jms("amqp:invalid-field", "in use", "open", container_id_refused=True)
    assert isinstance(e, InvalidClientIDException) and e.error_code == "amqp:invalid-field"


def test_submitted_coroutines_start_in_order_with_posted_work() -> None:
    lt = LoopThread("test-loop")
    order: list[str] = []
    try:
        gate = threading.Event()
        lt.post(lambda: gate.wait(1))

        async def first_step() -> None:
            order.append("submitted")

        fut = lt.submit(first_step())
        lt.post(lambda: order.append("posted"))
        gate.set()
        fut.result(2)

        async def noop() -> None:
            return None

        lt.run(noop(), 1.0)
        assert order == ["submitted", "posted"]
    finally:
        lt.stop()


def test_work_submitted_as_the_loop_stops_fails_instead_of_hanging() -> None:
    """A future handed out by ``submit`` must resolve even when the loop stops before the work
    starts (a close racing a send): the caller waits on it, and an unresolved one would hang
    until its timeout (or forever without one) with its coroutine never awaited."""
    import concurrent.futures
    import time

    lt = LoopThread("test-loop")
    gate = threading.Event()
    # the loop is busy with a posted step, so the submissions behind it cannot start yet
    lt.post(lambda: gate.wait(2.0))
    ran: list[int] = []

    async def work(i: int) -> int:
        ran.append(i)
        return i

    futures = [lt.submit(work(i)) for i in range(3)]
    stopper = threading.Thread(target=lt.stop)
    stopper.start()
    time.sleep(0.1)  # the stop request is queued behind the busy step, ahead of nothing new
    gate.set()
    stopper.join(5.0)
    for f in futures:
        try:
            f.result(timeout=2.0)
        except concurrent.futures.TimeoutError:
            pytest.fail("a submitted future was left unresolved when the loop stopped")
        except (JMSException, concurrent.futures.CancelledError):
            pass  # refused: the I/O thread stopped
    # and work posted after the stop is refused at once, not queued into nothing
    with pytest.raises(IllegalStateException):
        lt.submit(work(9))


def _wait_until(cond: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.005)
    return False


def test_run_if_idle_runs_on_the_caller_only_when_the_loop_sleeps_with_nothing_queued() -> None:
    """A waiting send's direct path: the work runs on the calling thread while the loop thread
    sleeps in select, never ahead of work handed over earlier, never while the loop runs."""
    lt = LoopThread("test-loop")
    try:
        ran: list[str] = []
        me = threading.current_thread().name
        assert _wait_until(lambda: lt.run_if_idle(lambda: ran.append(threading.current_thread().name)))
        assert ran == [me]
        # while posted work is queued (the loop is held up inside an earlier op) it is refused
        release = threading.Event()
        lt.post(lambda: release.wait(5))
        lt.post(lambda: ran.append("posted"))
        assert not lt.run_if_idle(lambda: ran.append("direct"))
        release.set()
        assert _wait_until(lambda: lt.run_if_idle(lambda: ran.append("direct")))
        assert ran == [me, "posted", "direct"]
        # the loop thread cannot run while the direct work holds the lock
        inside = threading.Event()
        seen: list[bool] = []

        def direct() -> None:
            lt.loop.call_soon_threadsafe(lambda: seen.append(inside.is_set()))
            inside.set()
            time.sleep(0.05)
            inside.clear()

        assert _wait_until(lambda: lt.run_if_idle(direct))
        assert _wait_until(lambda: bool(seen)) and seen == [False]
    finally:
        lt.stop()
    assert not lt.run_if_idle(lambda: ran.append("after stop"))
    assert "after stop" not in ran


def test_a_second_stop_while_the_first_cancels_what_is_left_does_not_kill_the_thread() -> None:
    """A connection's close stops its loop, and a shutdown may stop it again while the loop
    cancels its last tasks; that second stop used to end the cancelling run and the I/O thread
    died with "Event loop stopped before Future completed" (seen in a full run after a failover
    test)."""
    import asyncio

    lt = LoopThread("test-loop")
    cancelling = threading.Event()
    deaths: list[BaseException | None] = []
    previous = threading.excepthook
    threading.excepthook = lambda args: deaths.append(args.exc_value)
    try:
        async def slow_to_cancel() -> None:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelling.set()
                await asyncio.sleep(0.3)  # still tidying up when the second stop lands
                raise

        lt.submit(slow_to_cancel())
        time.sleep(0.05)
        lt.stop(timeout=0)  # the first stop: run_forever ends, _main cancels what is left
        assert cancelling.wait(5.0)
        lt.stop(timeout=5.0)  # the second, during that cancelling run
        assert not lt.thread.is_alive()
    finally:
        threading.excepthook = previous
    assert deaths == []


def test_posted_batch_serves_a_batch_with_one_run_and_keeps_the_order_of_posts_between() -> None:
    """A prefetching consumer's accepts: items added while the batch's run is still the last
    queued op join it; an op posted in between (a commit) runs after the items added before it
    and before those added after it."""
    lt = LoopThread("test-loop")
    try:
        release = threading.Event()
        order: list[Any] = []
        batch: PostedBatch[int] = PostedBatch(lt, lambda items: order.append(items))
        lt.post(lambda: release.wait(5))  # hold the loop while the batch forms
        batch.add(1)
        first_run = batch.run
        batch.add(2)
        assert batch.run is first_run and lt.is_last(first_run)  # one queued run for both
        lt.post(lambda: order.append("commit"))
        batch.add(3)
        assert batch.run is not first_run
        release.set()
        assert _wait_until(lambda: len(order) == 3)
        assert order == [[1, 2], "commit", [3]]
        # taken by a caller holding the loop (run_if_idle), the queued run finds nothing
        release.clear()
        lt.post(lambda: release.wait(5))
        batch.add(4)
        assert batch.take_now() == [4]
        release.set()
        lt.post(lambda: order.append("end"))
        assert _wait_until(lambda: order[-1] == "end")
        assert order == [[1, 2], "commit", [3], "end"]
    finally:
        lt.stop()


def test_run_if_idle_with_queued_allows_only_that_op_in_the_queue() -> None:
    """The receiving thread's credit write takes the queued accepts' run's work with it, so that
    run (and only it) queued does not make the loop busy; it still runs later, finding its batch
    empty."""
    lt = LoopThread("test-loop")
    try:
        ran: list[str] = []

        def drain() -> None:
            ran.append("drain")

        def other() -> None:
            ran.append("other")

        assert _wait_until(lambda: lt.run_if_idle(lambda: None))  # the loop sleeps in select
        lt._ops.append(drain)  # posted, the loop not woken yet (what post leaves for a moment)
        assert not lt.run_if_idle(lambda: ran.append("direct"))
        assert lt.run_if_idle(lambda: ran.append("direct"), queued=drain)
        lt._ops.append(other)
        assert not lt.run_if_idle(lambda: ran.append("direct again"), queued=drain)
        lt.post(lambda: None)  # wake the loop for what was queued
        assert _wait_until(lambda: ran == ["direct", "drain", "other"])
    finally:
        lt.stop()
