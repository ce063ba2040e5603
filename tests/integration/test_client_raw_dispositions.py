"""The producer reads ``accepted`` straight from proton-c (``AmqpProducer.on_delivery_raw``), and
everything else through proton's Python API: both must complete sends exactly as before (a
rejection mixed with acceptances: test_client_peer_subscriptions_temporaries_browsers), and the
address table the raw path finds links by must not outlive the links."""

from __future__ import annotations

import threading
from typing import Any

from amqp_jms import ConnectionFactory, Queue, TextMessage


def test_sync_async_and_transacted_sends_all_complete(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        producer = session.create_producer(Queue("raw-d"))
        for i in range(50):
            producer.send(TextMessage(f"sync-{i}"))  # waits for accepted
        done = threading.Event()
        outcomes: list[Exception | None] = []

        def listener(_message: object, exc: Exception | None) -> None:
            outcomes.append(exc)
            if len(outcomes) == 200:
                done.set()

        for i in range(200):
            producer.send(TextMessage(f"async-{i}"), completion_listener=listener)
        assert done.wait(30)
        assert outcomes == [None] * 200
        tx = conn.create_session(True)  # transactional-state outcomes: the wrapped path
        tx_producer = tx.create_producer(Queue("raw-d"))
        for i in range(20):
            tx_producer.send(TextMessage(f"tx-{i}"))
        tx.commit()
        consumer = session.create_consumer(Queue("raw-d"))
        texts = []
        while (m := consumer.receive(2000)) is not None:
            texts.append(m.get_text())
        assert texts == (
            [f"sync-{i}" for i in range(50)]
            + [f"async-{i}" for i in range(200)]
            + [f"tx-{i}" for i in range(20)]
        )


def test_links_leave_the_address_table_when_closed(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        session = conn.create_session()
        provider = conn._provider
        producer = session.create_producer(Queue("raw-t"))
        consumer = session.create_consumer(Queue("raw-t"))
        producer.send(TextMessage("x"))
        assert len(provider.links_by_addr) == 2
        producer.close()
        consumer.close()
        assert provider.links_by_addr == {}


def test_consumers_read_multi_frame_and_empty_bodies_whole(broker: Any) -> None:
    from amqp_jms import BytesMessage, Session

    big = bytes(range(256)) * 1200  # ~300 KB: several transfer frames (the broker's are 64 KB)
    with ConnectionFactory(broker.url + "?jms.prefetchPolicy.all=5").create_connection() as conn:
        conn.start()
        session = conn.create_session()
        producer = session.create_producer(Queue("raw-big"))
        for body in (big, b"", b"x"):
            m = BytesMessage()
            m.write_bytes(body)
            producer.send(m)
        for mode in (Session.AUTO_ACKNOWLEDGE, Session.CLIENT_ACKNOWLEDGE):
            consumer = conn.create_session(False, mode).create_consumer(Queue("raw-big"))
            got = [consumer.receive(5000) for _ in range(3)]
            assert [m.get_body(bytes) if m.get_body_length() else b"" for m in got if m] == [big, b"", b"x"]
            if mode == Session.CLIENT_ACKNOWLEDGE:
                got[-1].acknowledge()  # type: ignore[union-attr]
            else:
                for body in (big, b"", b"x"):  # again, for the client-acknowledged pass
                    m = BytesMessage()
                    m.write_bytes(body)
                    producer.send(m)
            consumer.close()
        assert session.create_consumer(Queue("raw-big")).receive(300) is None
