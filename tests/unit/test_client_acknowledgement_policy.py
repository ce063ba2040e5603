"""The acknowledgement policy (``amqp_jms.client.acknowledgement``) on its own: what each mode
settles and when, which outcome a settlement carries, what vetting settles away. End to end the
same rules are in ``tests/integration/test_client_acknowledgement.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from amqp_jms import JMSException, Queue, TextMessage, Topic
from amqp_jms.client import acknowledgement as ack
from amqp_jms.message._data import view
from amqp_jms.provider.base import (
    ACCEPTED,
    MODIFIED_FAILED,
    MODIFIED_FAILED_UNDELIVERABLE,
    REJECTED,
    RELEASED,
)
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Int


@dataclass
class Inbound:
    name: str
    local_redeliveries: int = 0
    decoded: Any = field(default="decoded")

    def reset(self) -> None:
        self.decoded = None


def _msg(**props: Any) -> TextMessage:
    m = TextMessage("x")
    m = with_properties(m, props)
    return m


@pytest.mark.parametrize(("value", "outcome"), [
    (None, ACCEPTED), (0, ACCEPTED), (-3, ACCEPTED), (1, ACCEPTED), (2, REJECTED), (3, RELEASED),
    (4, MODIFIED_FAILED), (5, MODIFIED_FAILED_UNDELIVERABLE), ("2", REJECTED),
])
def test_ack_type_values(value: Any, outcome: int) -> None:
    assert ack.outcome_for_ack_type(value) == outcome


@pytest.mark.parametrize("value", [6, 99, "x", 2.5j])
def test_an_unknown_ack_type_is_refused_naming_it(value: Any) -> None:
    with pytest.raises(JMSException, match="JMS_AMQP_ACK_TYPE"):
        ack.outcome_for_ack_type(value)


def test_auto_outcome_falls_back_to_accepted_for_an_invalid_type() -> None:
    assert ack.auto_outcome(_msg(JMS_AMQP_ACK_TYPE=Int(3))) == RELEASED
    assert ack.auto_outcome(_msg(JMS_AMQP_ACK_TYPE=Int(42))) == ACCEPTED  # nobody to refuse it to
    with pytest.raises(JMSException):
        ack.ack_type_of(_msg(JMS_AMQP_ACK_TYPE=Int(42)))  # acknowledge() does refuse it


def test_unseen_messages_are_released_unless_recover_gave_them_once() -> None:
    assert ack.unseen_outcome(Inbound("a")) == RELEASED
    assert ack.unseen_outcome(Inbound("b", local_redeliveries=1)) == MODIFIED_FAILED


@pytest.mark.parametrize(("mode", "back"), [
    (ack.AUTO_ACKNOWLEDGE, True), (ack.DUPS_OK_ACKNOWLEDGE, True), (ack.CLIENT_ACKNOWLEDGE, False),
    (ack.INDIVIDUAL_ACKNOWLEDGE, False), (ack.SESSION_TRANSACTED, False), (ack.NO_ACKNOWLEDGE, False),
])
def test_only_self_acknowledging_modes_hand_a_refused_message_back(mode: int, back: bool) -> None:
    assert ack.hands_back_refused(mode) is back


def test_a_local_redelivery_is_counted_once_into_the_message() -> None:
    inbound, m = Inbound("a", local_redeliveries=2), _msg()
    ack.count_local_redelivery(inbound, m)
    assert m.get_jms_redelivered() and view(m).properties["JMSXDeliveryCount"] == 2
    assert type(view(m).properties["JMSXDeliveryCount"]) is Int and inbound.local_redeliveries == 0
    ack.count_local_redelivery(inbound, m)  # nothing more to count
    assert view(m).properties["JMSXDeliveryCount"] == 2
    fresh = _msg(JMSXDeliveryCount=Int(3))
    ack.count_local_redelivery(Inbound("b", local_redeliveries=1), fresh)
    assert view(fresh).properties["JMSXDeliveryCount"] == 4


class Selector:
    def __init__(self, match: bool) -> None:
        self.match = match

    def matches(self, msg: Any) -> bool:
        return self.match


@dataclass
class Receiver:
    destination: Any


def _vet(msg: Any, **kw: Any) -> int | None:
    args: dict[str, Any] = {"clock": lambda: 10.0, "local_expiry": True, "redelivery_max": -1,
                            "redelivery_outcome": MODIFIED_FAILED_UNDELIVERABLE, "local_selector": None,
                            "receiver": Receiver(Queue("q"))}
    args.update(kw)
    return ack.settle_away_outcome(msg, **args)


def test_vetting_settles_away_expired_over_delivered_and_filtered_messages() -> None:
    assert _vet(_msg()) is None
    expired = _msg()
    expired.set_jms_expiration(9_000)
    assert _vet(expired) == MODIFIED_FAILED_UNDELIVERABLE
    assert _vet(expired, local_expiry=False) is None  # jms.localMessageExpiry=false
    over = _msg(JMSXDeliveryCount=Int(4))  # 3 redeliveries
    assert _vet(over, redelivery_max=3) is None
    assert _vet(over, redelivery_max=2) == MODIFIED_FAILED_UNDELIVERABLE
    assert _vet(over, redelivery_max=2, redelivery_outcome=REJECTED) == REJECTED
    assert _vet(_msg(), local_selector=Selector(False), receiver=Receiver(Topic("t"))) == ACCEPTED
    assert _vet(_msg(), local_selector=Selector(False), receiver=Receiver(Queue("q"))) \
        == MODIFIED_FAILED_UNDELIVERABLE
    assert _vet(_msg(), local_selector=Selector(True)) is None


@pytest.mark.parametrize(("mode", "now", "kept"), [
    (ack.AUTO_ACKNOWLEDGE, ACCEPTED, False), (ack.DUPS_OK_ACKNOWLEDGE, ACCEPTED, False),
    (ack.SESSION_TRANSACTED, ACCEPTED, True), (ack.CLIENT_ACKNOWLEDGE, None, True),
    (ack.INDIVIDUAL_ACKNOWLEDGE, None, True), (ack.NO_ACKNOWLEDGE, None, False),
])
def test_what_each_mode_settles_as_a_message_is_delivered(mode: int, now: int | None, kept: bool) -> None:
    ledger = ack.DeliveredLedger(mode)
    consumer = object()
    assert ledger.delivered(consumer, Inbound("a"), _msg()) == now
    assert ledger.pending(consumer) is kept


def test_the_ack_type_chosen_by_a_listener_is_the_auto_outcome() -> None:
    ledger = ack.DeliveredLedger(ack.AUTO_ACKNOWLEDGE)
    assert ledger.delivered(object(), Inbound("a"), _msg(JMS_AMQP_ACK_TYPE=Int(2))) == REJECTED


def test_client_acknowledge_settles_all_with_the_type_of_the_message_it_is_called_on() -> None:
    ledger = ack.DeliveredLedger(ack.CLIENT_ACKNOWLEDGE)
    calls: list[Any] = []
    m = _msg(JMS_AMQP_ACK_TYPE=Int(5))
    cb = ledger.acknowledge_callback(lambda outcome: calls.append(("all", outcome)),
                                     lambda: calls.append("one"), m)
    assert cb is not None
    cb()
    assert calls == [("all", MODIFIED_FAILED_UNDELIVERABLE)]


def test_individual_acknowledge_settles_one_and_other_modes_ignore_acknowledge() -> None:
    calls: list[Any] = []
    ind = ack.DeliveredLedger(ack.INDIVIDUAL_ACKNOWLEDGE).acknowledge_callback(
        lambda outcome: calls.append("all"), lambda: calls.append("one"), _msg())
    assert ind is not None
    ind()
    assert calls == ["one"]
    for mode in (ack.AUTO_ACKNOWLEDGE, ack.DUPS_OK_ACKNOWLEDGE, ack.SESSION_TRANSACTED, ack.NO_ACKNOWLEDGE):
        assert ack.DeliveredLedger(mode).acknowledge_callback(print, print, _msg()) is None


def test_the_ledger_keeps_delivery_order_and_forgets_what_is_taken() -> None:
    ledger = ack.DeliveredLedger(ack.INDIVIDUAL_ACKNOWLEDGE)
    c1, c2 = object(), object()
    a, b, c = Inbound("a"), Inbound("b"), Inbound("c")
    for cons, inb in ((c1, a), (c2, b), (c1, c)):
        ledger.delivered(cons, inb, _msg())
    assert ledger.pending_consumers() == {id(c1), id(c2)}
    ledger.take_one(b)
    assert not ledger.pending(c2) and ledger.pending(c1)
    assert ledger.take_all() == [(c1, a), (c1, c)]
    assert ledger.take_all() == [] and not ledger.pending(c1)


def test_recover_gives_back_per_consumer_in_order_counting_a_redelivery() -> None:
    c1, c2 = object(), object()
    a, b, c = Inbound("a"), Inbound("b"), Inbound("c")
    groups = ack.DeliveredLedger.recover([(c1, a), (c2, b), (c1, c)])
    assert [(cons, [i.name for i in items]) for cons, items in groups] == [(c1, ["a", "c"]), (c2, ["b"])]
    assert all(i.local_redeliveries == 1 and i.decoded is None for i in (a, b, c))  # decoded afresh
