"""The reconnect state machine against Qpid JMS's rules (FailoverProvider.ReconnectControls,
FailoverProviderTest's attempt counts, FailoverUriPoolTest's rotation and shuffling)."""

from __future__ import annotations

import random

import pytest

from amqp_jms.provider.config import ConnectionConfig
from amqp_jms.provider.failover import Connect, GiveUp, Reconnector, ReconnectPolicy


def _servers(*hosts: str) -> tuple[ConnectionConfig, ...]:
    return tuple(ConnectionConfig(host=h) for h in hosts)


def _run_until_give_up(r: Reconnector, limit: int = 1000) -> list[Connect]:
    """Fail every connect; return the instructions up to the GiveUp."""
    out: list[Connect] = []
    for _ in range(limit):
        step = r.next()
        if isinstance(step, GiveUp):
            return out
        out.append(step)
        r.failed()
    raise AssertionError(f"never gave up after {limit} connects")


def _pass_delays(r: Reconnector, passes: int) -> list[int]:
    """Fail ``passes`` whole passes; the delay before each."""
    delays = []
    for _ in range(passes):
        for i in range(len(r.servers)):
            step = r.next()
            assert isinstance(step, Connect)
            if i == 0:
                delays.append(step.delay_ms)
            else:
                assert step.delay_ms == 0  # servers within a pass are tried back to back
            r.failed()
    return delays


def test_max_reconnect_attempts_with_one_uri() -> None:
    # FailoverProviderTest.testMaxReconnectAttemptsWithOneURI: 5 connects, then give up
    r = Reconnector(ReconnectPolicy(max_reconnect_attempts=5, use_reconnect_back_off=False), _servers("h1"))
    steps = _run_until_give_up(r)
    assert len(steps) == 5
    assert r.next() == GiveUp(attempts=5)
    assert r.next() == GiveUp(attempts=5)  # giving up is final


def test_max_reconnect_attempts_scale_with_the_number_of_uris() -> None:
    # FailoverProviderTest.testMaxReconnectAttemptsWithMultipleURIs: 5 passes x 3 servers = 15
    policy = ReconnectPolicy(max_reconnect_attempts=5, reconnect_delay_ms=1, use_reconnect_back_off=False)
    r = Reconnector(policy, _servers("192.168.2.1", "192.168.2.2", "192.168.2.3"))
    steps = _run_until_give_up(r)
    assert len(steps) == 15
    assert [s.server.host for s in steps[:4]] == ["192.168.2.1", "192.168.2.2", "192.168.2.3", "192.168.2.1"]
    assert [s.attempt for s in steps] == [n for n in range(1, 6) for _ in range(3)]
    assert [s.delay_ms for s in steps[::3]] == [0, 1, 1, 1, 1]


def test_startup_max_reconnect_attempts_limits_only_the_first_connection() -> None:
    # FailoverProviderTest.testStartupMaxReconnectAttempts
    policy = ReconnectPolicy(startup_max_reconnect_attempts=5, use_reconnect_back_off=False)
    assert len(_run_until_give_up(Reconnector(policy, _servers("h")))) == 5
    r = Reconnector(policy, _servers("h"))
    r.next()
    r.connected()
    for _ in range(50):  # after a connection, maxReconnectAttempts (-1: never) applies
        assert isinstance(r.next(), Connect)
        r.failed()


def test_max_reconnect_attempts_zero_allows_one_pass() -> None:
    r = Reconnector(ReconnectPolicy(max_reconnect_attempts=0), _servers("a", "b"))
    assert [s.server.host for s in _run_until_give_up(r)] == ["a", "b"]


def test_back_off_doubles_up_to_the_maximum() -> None:
    # FailoverProviderTest.testMaxReconnectAttemptsWithBackOff's settings
    policy = ReconnectPolicy(max_reconnect_attempts=6, max_reconnect_delay_ms=60, reconnect_delay_ms=10)
    steps = _run_until_give_up(Reconnector(policy, _servers("h")))
    # first pass immediate; the second uses reconnectDelay; then x2 each pass, capped
    assert [s.delay_ms for s in steps] == [0, 10, 20, 40, 60, 60]


def test_multiplier_result_is_truncated_to_whole_milliseconds() -> None:
    policy = ReconnectPolicy(reconnect_delay_ms=10, reconnect_back_off_multiplier=1.5)
    assert _pass_delays(Reconnector(policy, _servers("h")), 5) == [0, 10, 15, 22, 33]


def test_without_back_off_every_delay_is_reconnect_delay() -> None:
    policy = ReconnectPolicy(reconnect_delay_ms=250, use_reconnect_back_off=False)
    assert _pass_delays(Reconnector(policy, _servers("a", "b")), 5) == [0, 250, 250, 250, 250]


def test_initial_reconnect_delay_at_startup_is_the_second_pass() -> None:
    # ReconnectControls.scheduleReconnect, never connected: immediate, then initialReconnectDelay;
    # the back-off has already counted the pass, so the third pass is 2 x reconnectDelay
    policy = ReconnectPolicy(initial_reconnect_delay_ms=100, reconnect_delay_ms=10)
    assert _pass_delays(Reconnector(policy, _servers("h")), 4) == [0, 100, 20, 40]


def test_after_a_loss_the_first_pass_waits_the_initial_delay() -> None:
    policy = ReconnectPolicy(initial_reconnect_delay_ms=100, reconnect_delay_ms=10)
    r = Reconnector(policy, _servers("h"))
    r.next()
    r.connected()
    assert _pass_delays(r, 4) == [100, 10, 20, 40]
    # without an initial delay, the first pass after a loss is immediate
    r = Reconnector(ReconnectPolicy(reconnect_delay_ms=10), _servers("h"))
    r.next()
    r.connected()
    assert _pass_delays(r, 3) == [0, 10, 20]


def test_a_connection_resets_attempts_and_back_off() -> None:
    r = Reconnector(ReconnectPolicy(reconnect_delay_ms=10, max_reconnect_attempts=3), _servers("h"))
    r.next()
    r.connected()
    assert _pass_delays(r, 2) == [0, 10]
    step = r.next()
    assert isinstance(step, Connect) and step.attempt == 3 and step.delay_ms == 20
    r.connected()  # the third pass worked: the limit and the back-off start over
    assert r.attempts == 0
    assert _pass_delays(r, 3) == [0, 10, 20]
    assert r.next() == GiveUp(attempts=3)


def test_the_list_rotates_so_the_lost_server_is_tried_last() -> None:
    # FailoverUriPool.getNext moves the server read to the end
    r = Reconnector(ReconnectPolicy(), _servers("a", "b", "c"))
    first = r.next()
    assert isinstance(first, Connect) and first.server.host == "a"
    r.connected()
    assert r.servers == _servers("b", "c", "a")
    hosts = []
    for _ in range(3):
        step = r.next()
        assert isinstance(step, Connect)
        hosts.append(step.server.host)
        r.failed()
    assert hosts == ["b", "c", "a"]


def test_warn_after_reconnect_attempts() -> None:
    policy = ReconnectPolicy(warn_after_reconnect_attempts=3, max_reconnect_attempts=8, reconnect_delay_ms=0)
    steps = _run_until_give_up(Reconnector(policy, _servers("a", "b")))
    # the warning is due before pass 4 and pass 7 (after 3 and 6 failed passes), once each
    assert [(s.attempt, s.server.host) for s in steps if s.warn] == [(4, "a"), (7, "a")]
    quiet = ReconnectPolicy(warn_after_reconnect_attempts=0, max_reconnect_attempts=30)
    assert not any(s.warn for s in _run_until_give_up(Reconnector(quiet, _servers("a"))))


def test_a_fatal_failure_gives_up_at_once() -> None:
    # ReconnectControls.isStoppageCause: a refused login is not retried, even with no limit
    r = Reconnector(ReconnectPolicy(), _servers("a", "b", "c"))
    r.next()
    r.failed(fatal=True)
    assert r.next() == GiveUp(attempts=1, fatal=True)


def test_an_outcome_is_required_before_the_next_step() -> None:
    r = Reconnector(ReconnectPolicy(), _servers("a"))
    r.next()
    with pytest.raises(RuntimeError, match="no outcome yet"):
        r.next()


def test_randomize_shuffles_at_start_and_after_each_connection() -> None:
    # FailoverUriPoolTest.testConnectedShufflesWhenRandomizing / ...DoesNotShufflesWhenNoRandomizing
    hosts = [f"h{i}" for i in range(8)]

    def orders(randomize: bool) -> list[list[str]]:
        r = Reconnector(ReconnectPolicy(randomize=randomize), _servers(*hosts), rng=random.Random(7))
        seen = [[s.host for s in r.servers]]
        for _ in range(5):
            r.next()
            r.connected()
            seen.append([s.host for s in r.servers])
        return seen

    shuffled = orders(True)
    assert shuffled[0] != hosts
    assert len({tuple(o) for o in shuffled}) > 1
    assert all(sorted(o) == hosts for o in shuffled)
    plain = orders(False)
    assert plain[0] == hosts
    # without randomize only the read-and-rotate moves servers: one place per connection
    assert plain[1] == hosts[1:] + hosts[:1]


def test_update_servers_is_read_by_the_next_pass() -> None:
    r = Reconnector(ReconnectPolicy(reconnect_delay_ms=0), _servers("a", "b", "c"))
    r.next()
    r.failed()
    r.update_servers(_servers("x", "y"))  # mid-pass: at most the new list's length is left
    hosts = []
    for _ in range(4):
        step = r.next()
        assert isinstance(step, Connect)
        hosts.append((step.attempt, step.server.host))
        r.failed()
    assert hosts == [(1, "x"), (1, "y"), (2, "x"), (2, "y")]
    with pytest.raises(ValueError):
        r.update_servers(())
    with pytest.raises(ValueError):
        Reconnector(ReconnectPolicy(), ())
