"""Why a message went to the DLQ: each cause end to end, read as a JMS user and as an AMQP tool.

The DLQ copy carries ActiveMQ 5's ``dlqDeliveryFailureCause`` and Artemis's ``_AMQ_ORIG_ADDRESS``
/ ``_AMQ_ORIG_QUEUE`` as JMS properties, Artemis's ``x-opt-ORIG-*`` and RabbitMQ's
``x-opt-deaths`` / ``x-first-death-*`` as message annotations (``broker/routing/dead_letter.py``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from proton import Condition, Delivery, symbol
from proton import Message as PMessage
from proton.utils import BlockingConnection

from amqp_jms import ConnectionFactory, Queue, Session, TextMessage, Topic
from amqp_jms.broker.routing.dead_letter import MAX_DESCRIPTION
from amqp_jms.cli.main import main
from amqp_jms.testing.broker_process import BrokerProcess


def _send(url: str, dest: Any, text: str = "hello", *, persistent: bool = False) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        p = conn.create_session().create_producer(dest)
        p.delivery_mode = 2 if persistent else 1
        p.send(TextMessage(text))


def _dlq_jms(url: str, name: str = "DLQ") -> Any:
    """The one message on the DLQ, received by the JMS client."""
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        m = conn.create_session().create_consumer(Queue(name)).receive(5000)
        assert m is not None, "nothing on the DLQ"
        return m


def _dlq_raw(url: str, address: str = "DLQ") -> PMessage:
    """The one message on the DLQ as an AMQP tool (proton) reads it: annotations and all."""
    c = BlockingConnection(url, timeout=10)
    try:
        r = c.create_receiver(address, credit=1)
        m = r.receive(timeout=5)
        r.accept()
        return m
    finally:
        c.close()


def _reject_with(url: str, address: str, condition: str, description: str) -> None:
    """A plain AMQP consumer settles the message ``rejected`` with an error."""
    c = BlockingConnection(url, timeout=10)
    try:
        r = c.create_receiver(address, credit=1)
        r.receive(timeout=5)
        dlv = r.fetcher.unsettled[0]
        dlv.local.condition = Condition(condition, description)
        dlv.update(Delivery.REJECTED)
        dlv.settle()
        c.container.process()
        r.close()
    finally:
        c.close()


def _reject_by_jms(url: str, name: str) -> None:
    """A JMS consumer rejects the message (``JMS_AMQP_ACK_TYPE`` = REJECTED, Qpid JMS's way)."""
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        m = session.create_consumer(Queue(name)).receive(5000)
        assert m is not None
        m.set_int_property("JMS_AMQP_ACK_TYPE", 2)  # REJECTED
        m.acknowledge()


def test_rejected_by_a_jms_consumer(broker: Any) -> None:
    _send(broker.url, Queue("dl-orders"), "bad order")
    before = int(time.time() * 1000)
    _reject_by_jms(broker.url, "dl-orders")
    got = _dlq_jms(broker.url)
    assert got.get_text() == "bad order"
    assert got.get_string_property("dlqDeliveryFailureCause") == "rejected by a consumer (no error given)"
    assert got.get_string_property("dlqDeliveryFailureReason") == "rejected"
    assert got.get_string_property("_AMQ_ORIG_ADDRESS") == "dl-orders"
    assert got.get_string_property("_AMQ_ORIG_QUEUE") == "dl-orders"
    assert before <= got.get_long_property("dlqDeliveryFailureTime") <= int(time.time() * 1000)


def test_a_consumers_error_condition_and_description_are_kept_and_annotations_written(broker: Any) -> None:
    _send(broker.url, Queue("dl-err"))
    _reject_with(broker.url, "dl-err", "app:invalid-order", "customer 42 does not exist")
    m = _dlq_raw(broker.url)
    props = m.properties
    assert props["dlqDeliveryFailureCause"] == (
        "rejected by a consumer: app:invalid-order: customer 42 does not exist"
    )
    ann = m.annotations
    assert ann[symbol("x-opt-ORIG-ADDRESS")] == "dl-err"
    assert ann[symbol("x-opt-ORIG-QUEUE")] == "dl-err"
    assert ann[symbol("x-first-death-reason")] == "rejected"
    assert ann[symbol("x-first-death-queue")] == "dl-err"
    assert ann[symbol("x-last-death-reason")] == "rejected"
    (death,) = list(ann[symbol("x-opt-deaths")])
    assert death[symbol("queue")] == "dl-err"
    assert death[symbol("reason")] == "rejected"
    assert death[symbol("count")] == 1
    assert abs(int(death[symbol("last-time")]) / 1000 - time.time()) < 60
    assert m.body == "hello"


def test_an_oversize_error_description_is_cut_to_the_bound(broker: Any) -> None:
    _send(broker.url, Queue("dl-long"))
    _reject_with(broker.url, "dl-long", "app:x", "y" * 10_000)  # in one frame, past the bound
    cause = _dlq_jms(broker.url).get_string_property("dlqDeliveryFailureCause")
    assert cause.startswith("rejected by a consumer: app:x: yyy")
    assert cause.endswith("...")
    assert len(cause) <= len("rejected by a consumer: app:x: ") + MAX_DESCRIPTION


def _give_back(url: str, name: str, times: int, *, transacted: bool) -> None:
    """Receive the message and give it back ``times`` times: rollback or recover."""
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        mode = Session.SESSION_TRANSACTED if transacted else Session.CLIENT_ACKNOWLEDGE
        s = conn.create_session(transacted, mode)
        c = s.create_consumer(Queue(name))
        for _ in range(times):
            assert c.receive(5000) is not None
            if transacted:
                s.rollback()
            else:
                s.recover()


def test_delivery_limit_by_rollbacks(broker_factory: Any) -> None:
    b = broker_factory(data_dir=None, max_delivery_attempts=3)
    _send(b.url, Queue("dl-tx"), "again")
    _give_back(b.url, "dl-tx", 3, transacted=True)
    got = _dlq_jms(b.url)
    assert got.get_string_property("dlqDeliveryFailureReason") == "delivery_limit"
    cause = got.get_string_property("dlqDeliveryFailureCause")
    assert cause.startswith("delivery limit reached: 3 attempts (max_delivery_attempts 3)")
    assert "rolled back" in cause


def test_delivery_limit_by_recover(broker_factory: Any) -> None:
    # recover() redelivers locally (as Qpid JMS does); the broker counts the attempt when the
    # consumer gives the message back unsettled
    b = broker_factory(data_dir=None, max_delivery_attempts=1)
    _send(b.url, Queue("dl-recover"))
    _give_back(b.url, "dl-recover", 2, transacted=False)
    cause = _dlq_jms(b.url).get_string_property("dlqDeliveryFailureCause")
    assert cause.startswith("delivery limit reached: 1 attempt (max_delivery_attempts 1)")
    assert "modified delivery-failed" in cause


def test_a_poison_message_the_client_cannot_read(broker_factory: Any) -> None:
    b = broker_factory(data_dir=None, max_delivery_attempts=1)
    c = BlockingConnection(b.url, timeout=10)
    try:
        poison = PMessage(body="unreadable")
        poison.annotations = {symbol("x-opt-jms-msg-type"): 9}  # no JMS message type 9
        c.create_sender("dl-poison").send(poison)
    finally:
        c.close()
    with ConnectionFactory(b.url).create_connection() as conn:
        conn.start()
        assert conn.create_session().create_consumer(Queue("dl-poison")).receive(500) is None
    m = _dlq_raw(b.url)
    assert "modified undeliverable-here: a poison message" in m.properties["dlqDeliveryFailureCause"]
    assert m.properties["dlqDeliveryFailureReason"] == "delivery_limit"
    assert m.annotations[symbol("x-opt-ORIG-QUEUE")] == "dl-poison"


def test_a_topic_subscriptions_dead_letter_names_the_topic_and_its_queue(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.set_client_id("dl-client")
        conn.start()
        s = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        c = s.create_durable_consumer(Topic("dl-prices"), "sub1")
        _send(broker.url, Topic("dl-prices"))
        m = c.receive(5000)
        assert m is not None
        m.set_int_property("JMS_AMQP_ACK_TYPE", 2)
        m.acknowledge()
        c.close()
        s.unsubscribe("sub1")
    got = _dlq_jms(broker.url)
    assert got.get_string_property("_AMQ_ORIG_ADDRESS") == "dl-prices"
    queue = got.get_string_property("_AMQ_ORIG_QUEUE")
    assert queue != "dl-prices" and "sub1" in queue


def test_prefix_mode_names_the_address_as_the_broker_does(broker_factory: Any) -> None:
    b = broker_factory(data_dir=None, address_prefixes=("queue://", "topic://"))
    for name in ("other", "orders"):
        _send(b.url, Queue(name), f"from {name}")
        _reject_by_jms(b.url, name)
    # an operator picks the dead letters of one queue by origin, as an Artemis user does;
    # Queue("DLQ") is queue://DLQ to a prefixing client
    with ConnectionFactory(b.url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue("DLQ"), "_AMQ_ORIG_ADDRESS = 'queue://orders'")
        got = c.receive(5000)
        assert got is not None and got.get_text() == "from orders"
        assert got.get_string_property("_AMQ_ORIG_QUEUE") == "queue://orders"
        assert c.receive(300) is None


def test_a_durable_dead_letter_keeps_its_cause_over_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "store"
    p = BrokerProcess("--data-dir", str(data), "--max-delivery-attempts", "1")
    try:
        _send(p.url, Queue("dl-durable"), "keep me", persistent=True)
        _reject_with(p.url, "dl-durable", "app:boom", "kept across restarts")
    finally:
        p.stop()
    p = BrokerProcess("--data-dir", str(data), "--max-delivery-attempts", "1")
    try:
        got = _dlq_jms(p.url)
        assert got.get_text() == "keep me"
        assert got.get_string_property("dlqDeliveryFailureCause") == (
            "rejected by a consumer: app:boom: kept across restarts"
        )
        assert got.get_string_property("_AMQ_ORIG_QUEUE") == "dl-durable"
    finally:
        p.stop()


def test_browse_dlq_shows_the_cause(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    _send(broker.url, Queue("dl-browse"))
    _reject_with(broker.url, "dl-browse", "app:invalid", "no such customer [/]")
    assert main(["browse", "DLQ", "--url", broker.url]) == 0
    out = capsys.readouterr().out
    assert "dead-lettered" in out  # its own column
    # the table wraps the cell over lines: its last column, line by line, read back as one text
    cell = " ".join(line.split("│")[-2].strip() for line in out.splitlines() if line.count("│") > 2)
    assert "rejected by a consumer: app:invalid: no such customer [/] (from dl-browse at 20" in cell
    assert "_AMQ_ORIG_QUEUE" not in out  # said once, in that column
