"""A send nobody waits for (NON_PERSISTENT, transacted) that comes after a pause is written by the
sending thread while the connection's I/O thread sleeps (``SPARSE_SEND_SECONDS``): a reply, a
sparse event, then costs no wake-up of the I/O thread. Sends in a burst are still handed over
and batched. Either way every message arrives once and in order. Against the embedded broker in
its own process, as the other tests of who writes and who reads.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from waiting import threads_calling

from amqp_jms import ConnectionFactory, DeliveryMode, Queue
from amqp_jms.provider.amqp.producer import AmqpProducer
from amqp_jms.testing.broker_process import BrokerProcess


@pytest.fixture
def broker(broker_process: BrokerProcess) -> BrokerProcess:
    return broker_process


def _received(url: str, queue: str, n: int) -> list[str | None]:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue(queue))
        got = [c.receive(2000) for _ in range(n)]
        assert c.receive(200) is None
        return [m.get_text() if m is not None else None for m in got]


@pytest.mark.parametrize("failover", [False, True], ids=["plain", "failover"])
def test_a_send_after_a_pause_is_written_by_the_sender(
    broker: BrokerProcess, monkeypatch: Any, failover: bool,
) -> None:
    writers = threads_calling(monkeypatch, AmqpProducer, "_transfer")
    url = f"failover:({broker.url})" if failover else broker.url
    queue = f"sparse-{failover}"
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(queue))
        p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
        for i in range(30):
            time.sleep(0.003)
            p.send(s.create_text_message(f"m{i}"))
    assert len(writers) == 30
    here = writers.count(threading.current_thread().name)
    # (a loaded machine may find the I/O thread awake now and then; handed over, it is none)
    assert here >= 15, writers
    assert _received(broker.url, queue, 30) == [f"m{i}" for i in range(30)]


def test_a_burst_is_handed_over_and_arrives_in_order(broker: BrokerProcess, monkeypatch: Any) -> None:
    writers = threads_calling(monkeypatch, AmqpProducer, "_transfer")
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("burst"))
        p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
        for i in range(500):
            p.send(s.create_text_message(f"m{i}"))
    assert len(writers) == 500
    here = writers.count(threading.current_thread().name)
    assert here < 250, f"{here} of a burst of 500 were written one by one by the sender"
    assert _received(broker.url, "burst", 500) == [f"m{i}" for i in range(500)]


def test_sparse_transacted_sends_commit_and_roll_back_as_before(broker: BrokerProcess) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session(True)
        p = s.create_producer(Queue("sparse-tx"))
        for i in range(3):
            time.sleep(0.003)
            p.send(s.create_text_message(f"kept{i}"))
        s.commit()
        time.sleep(0.003)
        p.send(s.create_text_message("dropped"))
        s.rollback()
    assert _received(broker.url, "sparse-tx", 3) == ["kept0", "kept1", "kept2"]
