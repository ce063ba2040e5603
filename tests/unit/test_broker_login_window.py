"""Failed logins per source address: the lockout, its window, and its bounded memory."""

from __future__ import annotations

from amqp_jms.broker.protocol.login_throttle import LoginThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_locks_an_address_after_max_failures_within_the_window() -> None:
    clock = Clock()
    t = LoginThrottle(3, 10.0, clock=clock)
    for _ in range(3):
        assert not t.blocked("10.0.0.1")
        t.failed("10.0.0.1")
        clock.now += 1
    assert t.blocked("10.0.0.1")
    assert not t.blocked("10.0.0.2")  # per address
    clock.now += 7.5  # the first failure is now 10.5 s old: one slot frees
    assert not t.blocked("10.0.0.1")


def test_refused_attempts_do_not_extend_the_lockout() -> None:
    clock = Clock()
    t = LoginThrottle(2, 5.0, clock=clock)
    t.failed("a")
    t.failed("a")
    for _ in range(100):
        clock.now += 0.01
        t.failed("a")  # still hammering while locked out: not counted
    assert t.blocked("a")
    clock.now = 1005.0
    assert not t.blocked("a")


def test_failures_spread_over_time_never_lock() -> None:
    clock = Clock()
    t = LoginThrottle(3, 10.0, clock=clock)
    for _ in range(50):
        t.failed("a")
        clock.now += 5.0
        assert not t.blocked("a")


def test_memory_is_bounded_by_max_addresses() -> None:
    t = LoginThrottle(1, 60.0, max_addresses=100, clock=Clock())
    for i in range(10_000):
        t.failed(f"10.0.{i // 256}.{i % 256}")
    assert len(t._failures) == 100
    assert t.blocked("10.0.39.15")  # the most recent stay


def test_zero_means_no_limit() -> None:
    t = LoginThrottle(0, 60.0, clock=Clock())
    for _ in range(100):
        t.failed("a")
    assert not t.blocked("a")
