"""On a real connection, a waiting send's transfer is made and written by the sending thread in one
C call (``write_through``) where that is built, and its answer read by another, and the broker
gets every message whole, in order, big or small; sends it does not fit (a transaction's, a
presettled one) take the Python path, as does everything when the accelerator is off, with the
same messages arriving. Against the embedded broker in its own process, as the other tests of
who writes and who reads.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue, Session
from amqp_jms.provider.amqp import write_through
from amqp_jms.testing.broker_process import BrokerProcess

pytestmark = pytest.mark.skipif(write_through.transfer_out is None,
                                reason="the C accelerator _ctransfer was not built")


@pytest.fixture
def broker(broker_process: BrokerProcess) -> BrokerProcess:
    return broker_process


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """``write_through.transfer_out``'s calls, as (thread name, what came back as ``rest``)."""
    calls: list[tuple[str, Any]] = []
    original = write_through.transfer_out
    assert original is not None

    def spy(*args: Any) -> Any:
        out = original(*args)
        calls.append((threading.current_thread().name, out[1]))
        return out

    monkeypatch.setattr(write_through, "transfer_out", spy)
    return calls


def _bodies(url: str, queue: str, n: int) -> list[bytes | None]:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue(queue))
        got = [c.receive(3000) for _ in range(n)]
        assert c.receive(200) is None
        return [m.get_body(bytes) if m is not None else None for m in got]


def _payloads() -> list[bytes]:
    return [os.urandom(n) for n in (1, 300, 5_000, 30_000, 60_000, 10, 60_000)]


@pytest.mark.parametrize("failover", [False, True], ids=["plain", "failover"])
def test_waiting_sends_are_written_through_and_arrive_whole(
    broker: BrokerProcess, monkeypatch: pytest.MonkeyPatch, failover: bool,
) -> None:
    calls = _spy(monkeypatch)
    payloads = _payloads() * 5
    queue = f"through-{failover}"
    url = f"failover:({broker.url})" if failover else broker.url
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue(queue))
        for data in payloads:
            m = s.create_bytes_message()
            m.write_bytes(data)
            p.send(m)  # PERSISTENT: waits for the broker's outcome
    assert _bodies(broker.url, queue, len(payloads)) == payloads
    mine = [rest for name, rest in calls if name == threading.current_thread().name]
    # (a loaded machine may find the I/O thread awake now and then: that send is handed over)
    assert len(mine) >= len(payloads) // 2, calls
    assert None in mine  # written whole by the C call


def test_the_answers_are_read_by_the_sender_into_proton_and_found_alone(
    broker: BrokerProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[tuple[str, int]] = []
    original = write_through.read_in
    assert original is not None

    def spy(*args: Any) -> int:
        status = original(*args)
        reads.append((threading.current_thread().name, status))
        return status

    monkeypatch.setattr(write_through, "read_in", spy)
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("through-answers"))
        for i in range(40):
            p.send(s.create_text_message(f"m{i}"))
            assert conn.metrics().sends_accepted == i + 1
    alone = [name for name, status in reads if status == write_through.SOLE]
    # (a loaded machine may find the I/O thread awake now and then: that answer is its)
    assert alone.count(threading.current_thread().name) >= 20, reads
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue("through-answers"))
        assert [c.receive(2000).get_text() for _ in range(40)] == [f"m{i}" for i in range(40)]  # type: ignore[union-attr]


def test_a_transactions_sends_and_presettled_ones_take_the_python_path(
    broker: BrokerProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _spy(monkeypatch)
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session(True, Session.SESSION_TRANSACTED)
        p = s.create_producer(Queue("through-tx"))
        for i in range(10):
            m = s.create_bytes_message()
            m.write_bytes(bytes([i]))
            p.send(m)
        s.commit()
    presettled = f"{broker.url}?jms.presettlePolicy.presettleProducers=true"
    with ConnectionFactory(presettled).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("through-presettled"))
        for i in range(10):
            m = s.create_bytes_message()
            m.write_bytes(bytes([i]))
            p.send(m)
    assert calls == []
    assert _bodies(broker.url, "through-tx", 10) == [bytes([i]) for i in range(10)]
    assert _bodies(broker.url, "through-presettled", 10) == [bytes([i]) for i in range(10)]


def test_without_the_accelerator_the_same_messages_arrive(
    broker: BrokerProcess, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(write_through, "transfer_out", None)
    monkeypatch.setattr(write_through, "read_in", None)
    payloads = _payloads()
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("through-off"))
        for data in payloads:
            m = s.create_bytes_message()
            m.write_bytes(data)
            p.send(m)
    assert _bodies(broker.url, "through-off", len(payloads)) == payloads
