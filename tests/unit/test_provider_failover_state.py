"""FailoverState's rules, without a connection or a thread: which loss counts, what is owed to a
caller when the connection goes or ends, and the temporaries' renames. (The same rules end to end,
frame by frame: tests/unit/test_failover_peer_frames*.py.)"""

from __future__ import annotations

import concurrent.futures
from typing import Any

import pytest

from amqp_jms import IllegalStateException, JMSException
from amqp_jms._logs import PROVIDER, with_ids
from amqp_jms.message import TextMessage, snapshot
from amqp_jms.provider.config import parse_url
from amqp_jms.provider.failover.pending_send import PendingSend
from amqp_jms.provider.failover.reconnect import Reconnector
from amqp_jms.provider.failover.state import FailoverState
from amqp_jms.provider.failover.uri import ReconnectPolicy

Future = concurrent.futures.Future


def _state() -> FailoverState:
    config = parse_url("amqp://127.0.0.1:5672?jms.sendTimeout=100")
    return FailoverState(config, "ID:c1", Reconnector(ReconnectPolicy(), [config]),
                         with_ids(PROVIDER, connection="ID:c1"), None)


def _owed_send(sync: bool) -> PendingSend:
    producer: Any = None  # never run: the state only queues or fails it here
    return PendingSend(producer, snapshot(TextMessage("x")), 0, Future() if sync else None)


def test_only_the_live_generation_going_counts_as_a_loss_and_only_once() -> None:
    state = _state()
    state.gen, state.online = 2, True
    state.lose(1, JMSException("an older connection"))  # a late event of a connection since replaced
    assert state.online and state.lost_gen == 0 and not state.wake.is_set()
    state.lose(2, JMSException("gone"))
    assert not state.online and state.lost_gen == 2 and state.wake.is_set()
    state.lose(2, JMSException("again"))
    assert state.last_failure.reason == "gone"


def test_an_answer_owed_on_loss_is_given_at_the_loss_or_at_once_if_already_lost() -> None:
    state = _state()
    state.gen, state.online = 1, True
    given: list[str] = []
    state.when_lost(1, lambda: given.append("commit"), Future())
    answered: Future[None] = Future()
    state.when_lost(1, lambda: given.append("answered first"), answered)
    answered.set_result(None)  # the connection answered: nothing to give at the loss
    assert given == []
    state.lose(1, JMSException("gone"))
    assert given == ["commit"] and state.lost_calls == {}
    state.when_lost(1, lambda: given.append("late"), Future())
    assert given == ["commit", "late"]


def test_waiters_for_the_connection_hear_the_close() -> None:
    state = _state()
    waiting = state.when_online()
    assert not waiting.done()
    state.closed = True
    state.wake_online_waiters()
    assert isinstance(waiting.exception(), IllegalStateException)
    with pytest.raises(IllegalStateException):
        state.wait_online(1.0, "create a session")


def test_a_send_after_failover_gave_up_fails_with_its_failure() -> None:
    state = _state()
    state.failure = JMSException("failover gave up after 3 attempt(s): refused")
    waited = _owed_send(sync=True)
    state.queue_send(waited)  # a waiting send hears it through its future
    assert isinstance(waited.future, Future) and "gave up" in str(waited.future.exception())
    with pytest.raises(JMSException, match="gave up"):  # a send nobody waits for raises
        state.queue_send(_owed_send(sync=False))
    assert not state.has_queued_sends()


def test_sends_made_offline_are_queued_in_order_and_a_full_queue_times_out(monkeypatch: Any) -> None:
    monkeypatch.setattr("amqp_jms.provider.failover.state.MAX_QUEUED_SENDS", 2)
    state = _state()
    first, second = _owed_send(sync=False), _owed_send(sync=False)
    state.queue_send(first)
    state.queue_send(second)
    with pytest.raises(JMSException, match=r"send timed out after 0\.1 s"):
        state.queue_send(_owed_send(sync=False))
    assert list(state.sends) == [first, second]
    assert state.take_sends() == [first, second] and not state.has_queued_sends()


def test_a_temporary_destination_moved_twice_maps_both_old_addresses_until_deleted() -> None:
    state = _state()
    state.add_temporary("tmp-1", topic=False)
    (temp,) = state.live_temporaries()
    temp.moved("tmp-2")
    temp.moved("tmp-3")
    state.update_aliases()
    assert state.aliases == {"tmp-1": "tmp-3", "tmp-2": "tmp-3"}
    assert state.remove_temporary("tmp-1") is temp
    assert state.aliases == {} and state.live_temporaries() == []
    assert state.remove_temporary("tmp-1") is None
