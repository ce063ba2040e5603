"""``broker/routing/dead_letter.py``: the DLQ copy's bytes, its bounds, and the transaction path's cause."""

from __future__ import annotations

import mmap
import tempfile
from typing import Any

from proton import Described, symbol

from amqp_jms.broker.protocol.links import _outcome_of
from amqp_jms.broker.routing.dead_letter import MAX_CONDITION, MAX_DEATHS, Cause, Failure, dead_letter_bytes
from amqp_jms.broker.routing.nodes import Router
from amqp_jms.broker.routing.transactions import REJECTED, Outcome, TransactionManager
from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.mapping.codec import DATA, Header, decode_sections, encode_sections
from amqp_jms.types import Symbol


class _NoStore:
    def add(self, queue: str, msg: BrokerMessage) -> None: ...
    def remove(self, queue: str, msg: BrokerMessage) -> None: ...
    def remove_many(self, queue: str, msgs: list[BrokerMessage]) -> None: ...
    def update_count(self, queue: str, msg: BrokerMessage) -> None: ...
    def save_queue(self, name: str, kind: str, meta: dict[str, Any] | None) -> None: ...
    def delete_queue(self, name: str) -> None: ...


def _message(**kw: Any) -> bytes:
    return encode_sections(
        header=Header(durable=True, delivery_count=2),
        message_annotations={"x-opt-jms-msg-type": 3},
        application_properties={"region": "EU"},
        body_type=DATA,
        body=[b"payload" * 10],
        **kw,
    )


def test_only_annotations_and_application_properties_change() -> None:
    data = _message()
    cause = Cause.rejected("app:x", "bad")
    out = dead_letter_bytes(data, cause, address="orders", queue="orders", now=1000.0)
    before, after = decode_sections(data), decode_sections(out)
    assert after.raw(0x70) == before.raw(0x70)  # header
    assert after.body == before.body
    assert after.application_properties == {
        "region": "EU",
        "dlqDeliveryFailureCause": "rejected by a consumer: app:x: bad",
        "dlqDeliveryFailureReason": "rejected",
        "dlqDeliveryFailureTime": 1_000_000,
        "_AMQ_ORIG_ADDRESS": "orders",
        "_AMQ_ORIG_QUEUE": "orders",
    }
    ann = after.message_annotations
    assert ann is not None
    assert ann[Symbol("x-opt-jms-msg-type")] == 3  # the JMS mapping's annotations stay
    assert ann[Symbol("x-opt-ORIG-ADDRESS")] == "orders"


def test_dead_lettered_again_counts_per_queue_and_reason_and_keeps_the_first() -> None:
    once = dead_letter_bytes(_message(), Cause.rejected(), address="a", queue="a", now=1.0)
    twice = dead_letter_bytes(once, Cause.rejected(), address="a", queue="a", now=2.0)
    limit = Cause.delivery_limit(3, 3, Failure.ROLLBACK)
    third = dead_letter_bytes(twice, limit, address="b", queue="b", now=3.0)
    ann = decode_sections(third).message_annotations
    assert ann is not None
    deaths = ann[Symbol("x-opt-deaths")]
    assert [(d[Symbol("queue")], d[Symbol("reason")], d[Symbol("count")]) for d in deaths] == [
        ("b", "delivery_limit", 1), ("a", "rejected", 2)]  # the most recent first
    assert deaths[1][Symbol("first-time")] == 1000 and deaths[1][Symbol("last-time")] == 2000
    assert ann[Symbol("x-first-death-queue")] == "a"
    assert ann[Symbol("x-last-death-queue")] == "b"
    assert ann[Symbol("x-last-death-reason")] == "delivery_limit"


def test_the_death_history_is_bounded() -> None:
    data = _message()
    for i in range(MAX_DEATHS + 5):
        data = dead_letter_bytes(data, Cause.rejected(), address=f"q{i}", queue=f"q{i}", now=float(i))
    ann = decode_sections(data).message_annotations
    assert ann is not None
    assert len(ann[Symbol("x-opt-deaths")]) == MAX_DEATHS


def test_a_huge_condition_is_cut() -> None:
    cause = Cause.rejected("c" * 100_000, None)
    assert len(cause.text) <= len("rejected by a consumer: ") + MAX_CONDITION


def test_an_undecodable_message_goes_to_the_dlq_unchanged() -> None:
    bad = b"\x00\x53\x74\xc1\xff"  # application-properties claiming more bytes than there are
    assert dead_letter_bytes(bad, Cause.rejected(), address="a", queue="a", now=1.0) == bad


def test_a_large_message_gets_a_new_mapped_file() -> None:
    data = _message()
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    out = dead_letter_bytes(mapped, Cause.rejected(), address="a", queue="a", now=1.0)
    assert type(out) is mmap.mmap
    expect = dead_letter_bytes(data, Cause.rejected(), address="a", queue="a", now=1.0)
    assert bytes(out) == expect


def test_a_rejected_outcome_in_a_transaction_keeps_its_error() -> None:
    error = Described(symbol("amqp:error"), [symbol("app:invalid"), "no such customer", None])
    outcome = _outcome_of(Described(REJECTED, [error]))
    assert outcome.error == ("app:invalid", "no such customer")

    router = Router(store=_NoStore(), clock=lambda: 5.0, schedule=lambda q, t: None)
    q = router.queue("orders")
    msg = BrokerMessage.parse(_message(), now=5.0)
    txns = TransactionManager(router)
    txn = txns.declare(owner=1)
    txn.acks.append((q, msg, outcome))
    txns.discharge(txn, fail=False)
    (copy,) = list(router.queue("DLQ").browse())
    assert copy.lookup("dlqDeliveryFailureCause") == (
        "rejected by a consumer in a committed transaction: app:invalid: no such customer"
    )
    assert copy.lookup("_AMQ_ORIG_QUEUE") == "orders"
    assert copy.delivery_count == 2 and copy.durable  # as the original had them


def test_a_rejected_outcome_without_an_error() -> None:
    assert _outcome_of(Described(REJECTED, [])) == Outcome(REJECTED, error=(None, None))
