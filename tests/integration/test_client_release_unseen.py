"""Prefetched messages the application never saw go back ``released`` (count unchanged), as in
Qpid JMS, on consumer close, session close, connection close, ``stop()`` with pull consumers
and rollback. Before, closing left them to the source's default outcome
``modified{delivery-failed}``: after three short-lived consumers the unseen messages arrived
with ``JMSRedelivered=true`` and ``JMSXDeliveryCount=4``, and with
``jms.redeliveryPolicy.maxRedeliveries=1`` they were dead-lettered without reaching the
application."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue, Session, TextMessage


def _fill(url: str, name: str, n: int) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        p = conn.create_session().create_producer(Queue(name))
        for i in range(n):
            p.send(TextMessage(f"m{i}"))


def _wait_prefetched(consumer: Any, n: int) -> None:
    deadline = time.monotonic() + 5
    while len(consumer._queue) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(consumer._queue) >= n


def _drain_all(url: str, name: str) -> list[tuple[str, bool, int]]:
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue(name))
        while (m := c.receive(1000)) is not None:
            out.append((m.get_text(), m.get_jms_redelivered(), m.get_int_property("JMSXDeliveryCount")))
    return out


def _close_consumer(conn: Any, session: Any, consumer: Any) -> None:
    consumer.close()


def _close_session(conn: Any, session: Any, consumer: Any) -> None:
    session.close()


def _close_connection(conn: Any, session: Any, consumer: Any) -> None:
    conn.close()


@pytest.mark.parametrize("close", [_close_consumer, _close_session, _close_connection])
@pytest.mark.parametrize("mode", [Session.AUTO_ACKNOWLEDGE, Session.CLIENT_ACKNOWLEDGE,
                                  Session.SESSION_TRANSACTED])
def test_unseen_prefetched_messages_are_released_on_close(broker: Any, close: Callable[..., None],
                                                          mode: int) -> None:
    _fill(broker.url, "unseen", 6)
    seen = []
    for _ in range(3):  # three short-lived consumers, each taking one message
        conn = ConnectionFactory(broker.url + "?jms.redeliveryPolicy.maxRedeliveries=1").create_connection()
        conn.start()
        session = conn.create_session(mode == Session.SESSION_TRANSACTED, mode)
        consumer = session.create_consumer(Queue("unseen"))
        m = consumer.receive(5000)
        assert m is not None
        seen.append(m.get_text())
        assert m.get_int_property("JMSXDeliveryCount") == 1 and not m.get_jms_redelivered()
        if mode == Session.CLIENT_ACKNOWLEDGE:
            m.acknowledge()
        elif mode == Session.SESSION_TRANSACTED:
            session.commit()
        _wait_prefetched(consumer, 6 - len(seen))
        close(conn, session, consumer)
        conn.close()
    assert seen == ["m0", "m1", "m2"]
    assert _drain_all(broker.url, "unseen") == [(f"m{i}", False, 1) for i in range(3, 6)]


def test_rollback_releases_prefetched_and_redelivers_delivered(broker: Any) -> None:
    _fill(broker.url, "unseen-tx", 4)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(True)
        consumer = session.create_consumer(Queue("unseen-tx"))
        assert consumer.receive(5000).get_text() == "m0"  # type: ignore[union-attr]
        _wait_prefetched(consumer, 3)
        session.rollback()
        consumer.close()
    assert _drain_all(broker.url, "unseen-tx") == [("m0", True, 2)] + [(f"m{i}", False, 1) for i in (1, 2, 3)]


def test_a_recovered_message_not_delivered_again_counts_its_delivery(broker: Any) -> None:
    _fill(broker.url, "unseen-rec", 2)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue("unseen-rec"))
        assert consumer.receive(5000).get_text() == "m0"  # type: ignore[union-attr]
        _wait_prefetched(consumer, 1)
        session.recover()
        consumer.close()
    assert _drain_all(broker.url, "unseen-rec") == [("m0", True, 2), ("m1", False, 1)]


def test_stop_takes_back_a_pull_listener_credit(broker: Any) -> None:
    got: list[str] = []
    arrived = threading.Semaphore(0)

    def on_message(m: Any) -> None:
        got.append(m.get_text())
        arrived.release()

    with ConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0").create_connection() as conn, \
            ConnectionFactory(broker.url).create_connection() as other:
        producer = other.create_session().create_producer(Queue("pull-stop"))
        conn.create_session().create_consumer(Queue("pull-stop")).set_message_listener(on_message)
        conn.start()
        producer.send(TextMessage("first"))
        assert arrived.acquire(timeout=5)
        conn.stop()
        producer.send(TextMessage("while-stopped"))
        other.start()
        rival = other.create_session().create_consumer(Queue("pull-stop"))
        m = rival.receive(3000)  # the stopped pull consumer holds no credit and no message
        assert m is not None and m.get_text() == "while-stopped"
        assert m.get_int_property("JMSXDeliveryCount") == 1
        rival.close()
        conn.start()
        producer.send(TextMessage("after-start"))
        assert arrived.acquire(timeout=5)
    assert got == ["first", "after-start"]


def test_stop_takes_back_a_blocked_pull_receive(broker: Any) -> None:
    results: list[Any] = []
    with ConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0").create_connection() as conn, \
            ConnectionFactory(broker.url).create_connection() as other:
        producer = other.create_session().create_producer(Queue("pull-stop2"))
        consumer = conn.create_session().create_consumer(Queue("pull-stop2"))
        conn.start()
        t = threading.Thread(target=lambda: results.append(consumer.receive(15000)))
        t.start()
        time.sleep(0.3)  # the receive has pulled (one credit out)
        conn.stop()
        producer.send(TextMessage("while-stopped"))
        other.start()
        rival = other.create_session().create_consumer(Queue("pull-stop2"))
        m = rival.receive(3000)
        assert m is not None and m.get_text() == "while-stopped"
        rival.close()
        conn.start()
        producer.send(TextMessage("after-start"))
        t.join(10)
        assert not t.is_alive()
    assert [r.get_text() for r in results] == ["after-start"]


def test_stop_takes_back_an_asyncio_pull_receive(broker: Any) -> None:
    import asyncio

    from amqp_jms.aio import AsyncConnectionFactory

    async def main() -> str:
        conn = await AsyncConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0").create_connection()
        other = await AsyncConnectionFactory(broker.url).create_connection()
        async with conn, other:
            consumer = await (await conn.create_session()).create_consumer(Queue("pull-aio"))
            producer = await (await other.create_session()).create_producer(Queue("pull-aio"))
            await conn.start()
            waiting = asyncio.ensure_future(consumer.receive(15000))
            await asyncio.sleep(0.3)  # pulled: one credit out
            await conn.stop()
            await producer.send(TextMessage("while-stopped"))
            await other.start()
            rival = await (await other.create_session()).create_consumer(Queue("pull-aio"))
            m = await rival.receive(3000)
            assert m is not None and m.get_text() == "while-stopped"
            await rival.close()
            await conn.start()
            await producer.send(TextMessage("after-start"))
            got = await asyncio.wait_for(waiting, 10)
            assert got is not None
            return str(got.get_text())

    assert asyncio.run(main()) == "after-start"
