"""The listener container's policy (``amqp_jms.container.policy``): pure decisions, no broker."""

from __future__ import annotations

import pytest

from amqp_jms import Queue, Topic
from amqp_jms.client import acknowledgement as ack
from amqp_jms.container import Backoff, Concurrency, ContainerPolicy, Mode
from amqp_jms.container.policy import ACKNOWLEDGE, COMMIT, ROLLBACK, SETTLE


def test_backoff_grows_to_its_cap() -> None:
    b = Backoff(0.5, 2.0, 3.0)
    assert [b.delay(n) for n in range(0, 6)] == [0.0, 0.5, 1.0, 2.0, 3.0, 3.0]
    assert Backoff(1, 2, 10).delay(10_000) == 10  # no overflow
    with pytest.raises(ValueError):
        Backoff(1, 0.5, 2)


def test_concurrency_forms() -> None:
    assert Concurrency.parse("1-8") == Concurrency(1, 8) and Concurrency.parse("1-8").scales
    assert Concurrency.parse(4).top == 4 and not Concurrency.parse("4").scales
    assert Concurrency.parse((2, 3)) == Concurrency(2, 3)
    for bad in ("0", "5-2", "x", "1-"):
        with pytest.raises(ValueError):
            Concurrency.parse(bad)


def test_auto_acknowledges_only_after_success_and_gives_back_failures_counted() -> None:
    p = ContainerPolicy.of("queue://orders", max_deliveries=3, backoff=Backoff(1, 2, 10))
    assert p.destination == Queue("orders") and p.session_mode == ack.INDIVIDUAL_ACKNOWLEDGE
    assert p.on_success(1) == (ACKNOWLEDGE,)
    f1, f2, f3 = p.on_failure(1), p.on_failure(2), p.on_failure(3)
    assert (f1.dead_letter, f1.delay_s, f1.steps, f1.outcome) == (False, 1.0, (SETTLE,), ack.OUTCOME_BY_NAME[
        "MODIFIED_FAILED"])
    assert f2.delay_s == 2.0 and not f2.dead_letter
    assert f3.dead_letter and f3.delay_s == 0
    assert f3.outcome == ack.OUTCOME_BY_NAME["MODIFIED_FAILED_UNDELIVERABLE"]
    assert p.redelivery.client_max_redeliveries == 2  # the client settles away a 4th delivery
    assert not ContainerPolicy.of("q", max_deliveries=0).on_failure(1000).dead_letter


def test_client_mode_leaves_acknowledging_to_the_handler() -> None:
    p = ContainerPolicy.of("q", mode="client")
    assert p.on_success(1) == () and p.session_mode == ack.INDIVIDUAL_ACKNOWLEDGE


def test_transacted_commits_per_batch_and_rolls_back_failures() -> None:
    p = ContainerPolicy.of("q", mode="transacted", batch_size=3)
    assert p.mode is Mode.TRANSACTED and p.session_mode == ack.SESSION_TRANSACTED
    assert [p.on_success(n) for n in (1, 2, 3)] == [(), (), (COMMIT,)]
    assert p.on_failure(1).steps == (ROLLBACK,)
    assert p.on_idle(2, False) == (COMMIT,) and p.on_idle(0, True) == (COMMIT,) and p.on_idle(0, False) == ()
    assert p.on_stop(1) == (COMMIT,) and p.on_stop(0) == ()


def test_the_rejected_dead_letter_outcome() -> None:
    p = ContainerPolicy.of("q", max_deliveries=1, dead_letter_outcome="REJECTED")
    assert p.on_failure(1).outcome == ack.OUTCOME_BY_NAME["REJECTED"]
    with pytest.raises(ValueError, match="dead-letter outcome"):
        ContainerPolicy.of("q", dead_letter_outcome="DROP")


@pytest.mark.parametrize("options, match", [
    (dict(batch_size=5), "batch_size > 1 needs"),
    (dict(destination="topic://t", durable=True), "subscription name"),
    (dict(subscription="s"), "on a topic"),
    (dict(destination="topic://t", subscription="s", durable=True, concurrency=2), "unshared durable"),
    (dict(destination="topic://t", concurrency=2), "shared subscription for several"),
])
def test_settings_that_cannot_work_are_refused(options: dict, match: str) -> None:
    dest = options.pop("destination", "queue://q")
    with pytest.raises(ValueError, match=match):
        ContainerPolicy.of(dest, **options)


def test_an_invalid_selector_is_refused_before_anything_connects() -> None:
    from amqp_jms import InvalidSelectorException

    with pytest.raises(InvalidSelectorException):
        ContainerPolicy.of("q", selector="region = ")


def test_a_shared_durable_subscription_may_have_several_workers() -> None:
    p = ContainerPolicy.of("topic://t", subscription="s", durable=True, shared=True, concurrency="2-4")
    assert p.destination == Topic("t") and "shared durable subscription s" in p.describes
