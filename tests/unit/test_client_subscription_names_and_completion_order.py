"""Pure logic: subscription link names (Qpid JMS's tracker) and the order completion listeners are told."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import pytest

from amqp_jms import IllegalStateException, JMSException, Topic
from amqp_jms.client.completion import Completions
from amqp_jms.client.subscriptions import SubscriptionTracker, validate_subscription_name


class _Consumer:
    def __init__(self) -> None:
        self.closed = False


def _shared(
    t: SubscriptionTracker, durable: bool, cid: bool, topic: str = "t", sel: str | None = None
) -> str:
    name = t.reserve_shared("sub", durable, Topic(topic), sel, cid)
    t.bind("sub", True, durable, _Consumer())
    return name


def test_shared_durable_names_with_and_without_client_id() -> None:
    t = SubscriptionTracker()
    assert [_shared(t, True, True) for _ in range(3)] == ["sub", "sub|2", "sub|3"]
    g = SubscriptionTracker()
    assert [_shared(g, True, False) for _ in range(3)] == ["sub|global", "sub|global2", "sub|global3"]


def test_shared_volatile_names_and_separate_namespace() -> None:
    t = SubscriptionTracker()
    assert [_shared(t, False, True) for _ in range(2)] == ["sub|volatile1", "sub|volatile2"]
    assert _shared(t, True, True) == "sub"  # durable and volatile counters are separate
    g = SubscriptionTracker()
    assert _shared(g, False, False) == "sub|global-volatile1"


def test_counter_restarts_once_every_consumer_closed() -> None:
    t = SubscriptionTracker()
    consumers = []
    for _ in range(2):
        t.reserve_shared("sub", True, Topic("t"), None, True)
        c = _Consumer()
        t.bind("sub", True, True, c)
        consumers.append(c)
    consumers[0].closed = True
    assert t.reserve_shared("sub", True, Topic("t"), None, True) == "sub|3"  # one still open
    t.release("sub", True, True)
    consumers[1].closed = True
    assert t.reserve_shared("sub", True, Topic("t"), None, True) == "sub"
    assert t.is_active("sub")


def test_mismatched_shared_consumer_and_exclusive_clash() -> None:
    t = SubscriptionTracker()
    _shared(t, True, True, "t", "a = 1")
    with pytest.raises(JMSException, match="selector"):
        t.reserve_shared("sub", True, Topic("t"), "a = 2", True)
    with pytest.raises(JMSException, match="topic"):
        t.reserve_shared("sub", True, Topic("other"), "a = 1", True)
    with pytest.raises(JMSException, match="shared durable"):
        t.reserve_durable("sub", Topic("t"), None)
    assert t.reserve_durable("solo", Topic("t"), None) == "solo"
    t.bind("solo", False, True, _Consumer())
    with pytest.raises(IllegalStateException):
        t.reserve_durable("solo", Topic("t"), None)
    with pytest.raises(JMSException, match="non-shared"):
        t.reserve_shared("solo", True, Topic("t"), None, True)


def test_failed_attach_releases_the_reservation() -> None:
    t = SubscriptionTracker()
    t.reserve_durable("d", Topic("t"), None)
    t.release("d", False, True)
    assert not t.is_active("d")
    t.reserve_shared("s", True, Topic("t"), None, True)
    t.release("s", True, True)
    assert t.reserve_shared("s", True, Topic("t"), None, True) == "s"


@pytest.mark.parametrize("bad", ["", "a|b", None, 3])
def test_invalid_subscription_names(bad: Any) -> None:
    with pytest.raises(JMSException):
        validate_subscription_name(bad)


def test_completions_run_in_send_order_even_if_outcomes_do_not() -> None:
    c = Completions("test-completions")
    order: list[str] = []
    threads: set[str] = set()
    done = threading.Event()

    def listener(message: Any, exc: Exception | None) -> None:
        order.append(f"{message}:{'err' if exc else 'ok'}")
        threads.add(threading.current_thread().name)
        if len(order) == 3:
            done.set()

    futs: list[concurrent.futures.Future[None]] = [concurrent.futures.Future() for _ in range(3)]
    for i, f in enumerate(futs):
        c.add(f, f"m{i}", listener)
    futs[2].set_result(None)
    futs[1].set_exception(JMSException("refused"))
    assert not done.wait(0.2)  # m0 is not complete: nothing may be reported yet
    assert order == []
    futs[0].set_result(None)
    assert done.wait(5)
    assert order == ["m0:ok", "m1:err", "m2:ok"]
    assert all(t.startswith("test-completions") for t in threads)
    assert c.wait_all(1)
    c.stop()


def test_presettled_send_completes_at_once_and_wait_all() -> None:
    c = Completions("test-completions")
    ev = threading.Event()
    c.add(None, "m", lambda m, e: ev.set())
    assert ev.wait(5)
    pending: concurrent.futures.Future[None] = concurrent.futures.Future()
    c.add(pending, "m2", lambda m, e: None, producer="p")
    assert c.wait_all(0.1, producer="other")  # only p's sends are incomplete
    assert not c.wait_all(0.1, producer="p")
    pending.set_result(None)
    assert c.wait_all(5)
    c.stop()
    with pytest.raises(IllegalStateException):
        c.add(None, "late", lambda m, e: None)


def test_listener_waiting_for_its_own_session_is_refused() -> None:
    c = Completions("test-completions")
    seen: list[Exception] = []
    ev = threading.Event()

    def listener(message: Any, exc: Exception | None) -> None:
        try:
            c.wait_all(1)
        except IllegalStateException as e:
            seen.append(e)
        ev.set()

    c.add(None, "m", listener)
    assert ev.wait(5) and len(seen) == 1
    c.stop()
