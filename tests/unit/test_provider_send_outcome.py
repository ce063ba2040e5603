"""A waiting send's future (``SendOutcome``) behaves as any ``concurrent.futures.Future`` for
every party that uses it: the waiting caller, another thread, a callback, asyncio's
``wrap_future``; its condition is made only when one of them needs it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time

import pytest

from amqp_jms.exceptions import JMSException
from amqp_jms.provider.base import SendOutcome


def test_a_result_set_and_read_on_one_thread_needs_no_condition() -> None:
    fut = SendOutcome()
    assert not fut.done()
    fut.set_result(None)
    assert fut.done() and fut.result(0) is None and fut.exception() is None
    with pytest.raises(concurrent.futures.InvalidStateError):
        fut.set_result(None)  # a second outcome is refused, as Future refuses it


def test_a_thread_waiting_is_woken_by_the_result_set_on_another() -> None:
    for _ in range(200):  # the waiter and the setter race for the condition's making
        fut = SendOutcome()
        got: list[object] = []
        waiter = threading.Thread(target=lambda f=fut, g=got: g.append(f.result(5)))
        waiter.start()
        fut.set_result(None)
        waiter.join(5)
        assert not waiter.is_alive() and got == [None]


def test_a_callback_added_before_or_after_the_outcome_runs_once() -> None:
    before, after = SendOutcome(), SendOutcome()
    calls: list[str] = []
    before.add_done_callback(lambda f: calls.append("before"))
    before.set_result(None)
    after.set_result(None)
    after.add_done_callback(lambda f: calls.append("after"))
    assert calls == ["before", "after"]


def test_a_failure_and_a_cancellation_read_as_a_future_reads_them() -> None:
    failed = SendOutcome()
    failed.set_exception(JMSException("refused"))
    with pytest.raises(JMSException, match="refused"):
        failed.result(0)
    cancelled = SendOutcome()
    assert cancelled.cancel() and cancelled.done() and cancelled.cancelled()
    with pytest.raises(concurrent.futures.CancelledError):
        cancelled.result(0)
    with pytest.raises(concurrent.futures.InvalidStateError):
        cancelled.set_result(None)


def test_a_wait_times_out_and_wait_and_as_completed_see_the_outcome() -> None:
    fut = SendOutcome()
    started = time.monotonic()
    with pytest.raises(concurrent.futures.TimeoutError):
        fut.result(0.05)
    assert time.monotonic() - started >= 0.04
    threading.Timer(0.02, fut.set_result, (None,)).start()
    done, _ = concurrent.futures.wait([fut], timeout=5)
    assert done == {fut}
    assert list(concurrent.futures.as_completed([fut], timeout=5)) == [fut]


def test_asyncio_awaits_it_through_wrap_future() -> None:
    async def main() -> None:
        fut = SendOutcome()
        asyncio.get_running_loop().call_later(0.01, lambda: threading.Thread(target=fut.set_result,
                                                                               args=(None,)).start())
        assert await asyncio.wait_for(asyncio.wrap_future(fut), 5) is None

    asyncio.run(main())
