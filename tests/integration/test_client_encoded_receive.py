"""The client API pipelines build on: encoded receive, drain, replay-stable message ids.

Against the embedded broker: ``receive_encoded`` hands back the bytes the message arrived as and
acknowledges like ``receive``; ``drain`` makes an empty ``receive_no_wait`` mean "the queue was
empty" without a guessed wait; ``set_message_id_prefix`` makes a re-send reuse the same ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import Connection, ConnectionFactory, JMSException, Queue, TextMessage
from amqp_jms.client import EncodedMessage
from amqp_jms.mapping import decode


@pytest.fixture
def conn(broker: Any) -> Iterator[Connection]:
    c = ConnectionFactory(broker.url + "?jms.closeTimeout=5000").create_connection()
    c.start()
    yield c
    c.close()


def _send(conn: Connection, queue: str, texts: list[str]) -> None:
    producer = conn.create_session(False).create_producer(Queue(queue))
    for text in texts:
        message = TextMessage(text)
        message.set_int_property("n", len(text))
        producer.send(message)


def test_receive_encoded_returns_the_arrived_bytes(conn: Connection) -> None:
    _send(conn, "enc1", ["hello", "world!"])
    consumer = conn.create_session(False).create_consumer(Queue("enc1"))
    got = consumer.receive_encoded(2000)
    assert isinstance(got, EncodedMessage)
    assert got.message.get_text() == "hello"
    again = decode(got.data)  # the bytes are a complete AMQP message: the same message
    assert again.get_text() == "hello"
    assert again.get_int_property("n") == 5
    assert again.get_jms_message_id() == got.message.get_jms_message_id()
    second = consumer.receive_encoded_no_wait() or consumer.receive_encoded(2000)
    assert second is not None and second.message.get_text() == "world!"
    assert consumer.receive_encoded(100) is None


def test_receive_encoded_is_acknowledged_like_receive(conn: Connection) -> None:
    _send(conn, "enc2", ["a", "b"])
    session = conn.create_session(True)
    consumer = session.create_consumer(Queue("enc2"))
    assert [consumer.receive_encoded(2000).message.get_text() for _ in range(2)] == ["a", "b"]  # type: ignore[union-attr]
    session.rollback()  # not accepted: delivered again, flagged as redelivered
    again = consumer.receive_encoded(2000)
    assert again is not None and again.message.get_text() == "a"
    assert again.message.get_jms_redelivered()
    assert consumer.receive_encoded(2000) is not None
    session.commit()
    consumer.close()
    assert conn.create_session(False).create_consumer(Queue("enc2")).receive(200) is None


def test_receive_encoded_rejects_a_negative_timeout(conn: Connection) -> None:
    consumer = conn.create_session(False).create_consumer(Queue("enc3"))
    with pytest.raises(ValueError, match="must not be negative"):
        consumer.receive_encoded(-1)


def test_drain_makes_an_empty_receive_no_wait_mean_empty(conn: Connection) -> None:
    _send(conn, "enc4", [f"m{i}" for i in range(30)])
    consumer = conn.create_session(False).create_consumer(Queue("enc4"))
    got = []
    while True:
        message = consumer.receive_no_wait()
        if message is None:
            assert consumer.drain()  # the peer answered: what it had is local now
            message = consumer.receive_no_wait()
            if message is None:
                break
        got.append(message.get_text())
    assert got == [f"m{i}" for i in range(30)]
    # the credit was topped up again: later messages still arrive
    _send(conn, "enc4", ["late"])
    late = consumer.receive(2000)
    assert late is not None and late.get_text() == "late"


def test_drain_on_a_closed_consumer_is_an_error(conn: Connection) -> None:
    consumer = conn.create_session(False).create_consumer(Queue("enc5"))
    consumer.close()
    with pytest.raises(JMSException, match="closed"):
        consumer.drain()


def test_message_id_prefix_makes_a_resend_reuse_the_ids(conn: Connection) -> None:
    session = conn.create_session(False)
    ids = []
    for _attempt in range(2):  # the same job run twice (a replay)
        producer = session.create_producer(Queue("enc6"))
        producer.set_message_id_prefix("ID:job-7:batch-3")
        for text in ("x", "y"):
            message = TextMessage(text)
            producer.send(message)
            ids.append(message.get_jms_message_id())
        producer.close()
    assert ids == ["ID:job-7:batch-3:1", "ID:job-7:batch-3:2"] * 2
    consumer = session.create_consumer(Queue("enc6"))
    received = [consumer.receive(2000) for _ in range(4)]
    assert [m.get_jms_message_id() for m in received if m is not None] == ids


@pytest.mark.parametrize("bad", ["job-7", "", None, 5])
def test_message_id_prefix_must_be_a_jms_id(conn: Connection, bad: Any) -> None:
    producer = conn.create_session(False).create_producer(Queue("enc7"))
    with pytest.raises(JMSException, match="invalid message id prefix"):
        producer.set_message_id_prefix(bad)


def test_drain_says_so_when_the_peer_cannot_be_asked(conn: Connection) -> None:
    consumer = conn.create_session(False).create_consumer(Queue("enc8"))
    consumer._provider_consumer.provider.drain_unsafe = True  # what the provider sets for RabbitMQ < 3.12
    assert consumer.drain() is False  # at once, and an empty receive_no_wait proves nothing
