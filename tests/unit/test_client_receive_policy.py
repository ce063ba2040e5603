"""The receive policy (``amqp_jms.client.receive_policy``) on its own: the steps of a receive,
driven by a script instead of a queue, a provider and a clock. Both faces run this flow
(``tests/integration/test_aio_end_to_end.py``, ``test_client_receive_policy_faces.py`` end to end)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from amqp_jms.client.receive_policy import STOPPED, Op, ReceiveFlow, ready_prefetched, receive_flow


@dataclass
class State:
    running: bool = True
    closed: bool = False
    stops: int = 0


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def drive(flow: ReceiveFlow, answer: Callable[[Op, Any], Any], limit: int = 50) -> list[tuple[Op, Any]]:
    """Run ``flow`` to its end (or to the first DELIVER ``answer`` accepts), recording the steps."""
    steps: list[tuple[Op, Any]] = []
    try:
        step = next(flow)
        for _ in range(limit):
            steps.append(step)
            got = answer(*step)
            delivering = step[0] in (Op.DELIVER, Op.DELIVER_PREFETCHED)
            if delivering and got is True:
                return steps
            step = flow.send(None if delivering else got)
    except StopIteration:
        return steps
    raise AssertionError(f"the flow did not end within {limit} steps: {steps}")


def script(*answers: Any) -> Callable[[Op, Any], Any]:
    """Answer each non-DELIVER, non-TOP_UP step with the next of ``answers``; accept DELIVER."""
    it = iter(answers)

    def answer(op: Op, arg: Any) -> Any:
        if op in (Op.DELIVER, Op.DELIVER_PREFETCHED):
            return True
        if op in (Op.TOP_UP, Op.PULL, Op.PULL_DRAIN, Op.DRAIN):
            return None
        return next(it)

    return answer


def ops(steps: list[tuple[Op, Any]]) -> list[Op]:
    return [op for op, _ in steps]


# -- prefetching consumer ------------------------------------------------------------------------
def test_prefetch_takes_tops_up_and_delivers() -> None:
    steps = drive(receive_flow(State(), 1000, None), script("m1"))
    assert steps == [(Op.TAKE, None), (Op.DELIVER_PREFETCHED, "m1")]


def test_prefetch_receive_with_timeout_waits_for_the_rest_of_the_deadline() -> None:
    clock = Clock()
    steps = drive(receive_flow(State(), 10, 2.0, clock=clock), script("m1"))
    assert steps[0] == (Op.TAKE, 2.0)


def test_prefetch_empty_bounded_receive_drains_before_answering_none() -> None:
    """Qpid JMS: an empty local buffer is not "no message" until the peer says so; the drain
    spends the credit, so the provider tops it up whether it brought a message or not."""
    steps = drive(receive_flow(State(), 10, 0.5), script(None, None))
    assert ops(steps) == [Op.TAKE, Op.DRAIN, Op.TAKE, Op.TOP_UP]
    assert steps[1] == (Op.DRAIN, "receive (drain)")
    assert steps[2] == (Op.TAKE, 0.0)

    steps = drive(receive_flow(State(), 10, 0.0), script(None, "late"))
    assert ops(steps) == [Op.TAKE, Op.DRAIN, Op.TAKE, Op.TOP_UP, Op.DELIVER]
    assert steps[1] == (Op.DRAIN, "receive_no_wait (drain)")
    assert steps[-1] == (Op.DELIVER, "late")


@pytest.mark.parametrize("why", ["ask_peer", "local_only", "peer_drains", "stopped", "closed", "forever"])
def test_prefetch_empty_receive_answers_none_without_asking(why: str) -> None:
    state = State(running=why != "stopped", closed=False)
    kw: dict[str, Any] = {"ask_peer": why != "ask_peer", "local_only": why == "local_only",
                          "peer_drains": why != "peer_drains"}

    def answer(op: Op, arg: Any) -> Any:
        if why == "closed":
            state.closed = True  # closed while waiting: the take answers None
        return None

    steps = drive(receive_flow(state, 10, None if why == "forever" else 1.0, **kw), answer)
    assert ops(steps) == [Op.TAKE]


def test_a_message_settled_away_lets_the_flow_take_the_next_within_the_deadline() -> None:
    clock = Clock()
    taken = iter(["expired", "good"])

    def answer(op: Op, arg: Any) -> Any:
        if op is Op.TAKE:
            clock.now += 0.75  # each take waited
            return next(taken)
        if op is Op.DELIVER_PREFETCHED:
            return arg == "good"
        return None

    steps = drive(receive_flow(State(), 10, 2.0, clock=clock), answer)
    assert ops(steps) == [Op.TAKE, Op.DELIVER_PREFETCHED, Op.TAKE, Op.DELIVER_PREFETCHED]
    assert steps[2] == (Op.TAKE, 1.25)  # what is left of the 2 s
    assert steps[-1] == (Op.DELIVER_PREFETCHED, "good")


def test_a_closed_queue_ends_the_flow_before_any_step() -> None:
    assert drive(receive_flow(State(closed=True), 10, None), script()) == []
    assert drive(receive_flow(State(closed=True), 0, None), script()) == []


# -- pull consumer (prefetch 0) ------------------------------------------------------------------
def test_pull_receive_no_wait_pulls_with_drain() -> None:
    steps = drive(receive_flow(State(), 0, 0.0), script(None, "m"))
    assert steps == [(Op.TAKE, 0.0), (Op.PULL_DRAIN, "receive_no_wait (drain)"), (Op.TAKE, 0.0),
                     (Op.DELIVER, "m")]


def test_pull_consumer_delivers_what_is_already_local_without_pulling() -> None:
    steps = drive(receive_flow(State(), 0, 1.0), script("m"))
    assert steps == [(Op.TAKE, 0.0), (Op.DELIVER, "m")]


def test_pull_receive_no_wait_on_a_stopped_connection_asks_nothing() -> None:
    assert ops(drive(receive_flow(State(running=False), 0, 0.0), script(None))) == [Op.TAKE]


def test_pull_receive_pulls_one_credit_then_waits_for_its_message() -> None:
    steps = drive(receive_flow(State(stops=3), 0, None), script(None, "m"))
    assert steps == [(Op.TAKE, 0.0), (Op.PULL, "receive (credit)"), (Op.TAKE_SINCE, (3, None)),
                     (Op.DELIVER, "m")]


def test_pull_receive_drains_its_credit_back_at_the_deadline() -> None:
    steps = drive(receive_flow(State(), 0, 1.5, clock=Clock()), script(None, None, None))
    assert ops(steps) == [Op.TAKE, Op.PULL, Op.TAKE_SINCE, Op.DRAIN, Op.TAKE]
    assert steps[2] == (Op.TAKE_SINCE, (0, 1.5))
    assert steps[3] == (Op.DRAIN, "receive (drain at timeout)")


def test_pull_receive_waits_for_start_and_pulls_again_after_a_stop() -> None:
    """A stop takes the pull's credit back (and releases what came): the receive waits for the
    start and pulls again, instead of waiting for a message that will not come."""
    state = State(running=False)

    def answer(op: Op, arg: Any) -> Any:
        if op is Op.WAIT_RUNNING:
            state.running = True
            return True
        if op is Op.TAKE:
            return None
        if op is Op.TAKE_SINCE:
            if arg[0] == 0:  # the first pull: stopped while waiting
                state.stops = 1
                return STOPPED
            return "m"
        return True if op is Op.DELIVER else None

    steps = drive(receive_flow(state, 0, None), answer)
    assert ops(steps) == [Op.TAKE, Op.WAIT_RUNNING, Op.PULL, Op.TAKE_SINCE, Op.PULL, Op.TAKE_SINCE,
                          Op.DELIVER]
    assert steps[5] == (Op.TAKE_SINCE, (1, None))


def test_pull_receive_gives_up_when_the_start_does_not_come_in_time() -> None:
    steps = drive(receive_flow(State(running=False), 0, 1.0, clock=Clock()), script(None, False))
    assert steps == [(Op.TAKE, 0.0), (Op.WAIT_RUNNING, 1.0)]


def test_pull_consumer_pulls_even_when_it_must_not_ask_the_peer() -> None:
    """A pull consumer has nothing local to answer from: ``ask_peer`` False still pulls."""
    steps = drive(receive_flow(State(), 0, 0.0, ask_peer=False), script(None, None))
    assert ops(steps) == [Op.TAKE, Op.PULL_DRAIN, Op.TAKE]


# -- the shortcut a driver may take ---------------------------------------------------------------
class Queue(State):
    def __init__(self, items: list[Any], running: bool = True, closed: bool = False) -> None:
        super().__init__(running=running, closed=closed)
        self.items = items

    def pop_nowait(self) -> Any:
        return self.items.pop(0) if self.running and self.items else None


@pytest.mark.parametrize(("prefetch", "items", "running", "closed"), [
    (10, ["m"], True, False), (10, [], True, False), (10, ["m"], False, False), (10, ["m"], True, True),
    (0, ["m"], True, False),
])
def test_ready_prefetched_is_the_flows_first_two_steps(prefetch: int, items: list[Any], running: bool,
                                                       closed: bool) -> None:
    """``ready_prefetched`` answers a message exactly when the flow's first steps would be TAKE
    (answered at once) then DELIVER_PREFETCHED of it, and takes nothing otherwise."""
    shortcut = ready_prefetched(Queue(list(items), running, closed), prefetch)
    q = Queue(list(items), running, closed)
    flow = receive_flow(q, prefetch, 0.0, clock=Clock())
    expected = None
    first = next(flow, None)
    if first is not None and first[0] is Op.TAKE:
        try:
            second = flow.send(q.pop_nowait())
        except StopIteration:
            second = None
        if second is not None and second[0] is Op.DELIVER_PREFETCHED:
            expected = second[1]
    assert shortcut == expected
