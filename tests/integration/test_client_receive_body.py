"""``MessageConsumer.receive_body(cls, timeout_ms)``: the typed receive (``cls | None``), as
JMSConsumer's, with the same timeout and wrong-type rules."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import ConnectionFactory, MessageFormatException, Queue, Session


def test_receive_body_returns_the_typed_body_none_on_timeout_and_keeps_a_wrong_type(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.AUTO_ACKNOWLEDGE)
        q = Queue("typed-receive")
        producer = session.create_producer(q)
        producer.send(session.create_text_message("hello"))
        consumer = session.create_consumer(q)
        text: str | None = consumer.receive_body(str, 5000)
        assert text == "hello"
        assert consumer.receive_body(str, 200) is None
        with pytest.raises(ValueError, match="must not be negative"):
            consumer.receive_body(str, -1)
        m = session.create_map_message()
        m.set_int("qty", 2)
        producer.send(m)
        with pytest.raises(MessageFormatException):
            consumer.receive_body(str, 5000)
        assert consumer.receive_body(dict, 5000) == {"qty": 2}  # the same message, not lost
        consumer.close()  # (else its prefetch takes the next message)
        with ConnectionFactory(broker.url).create_context() as context:
            context.create_producer().send(q, "via context")
            assert context.create_consumer(q).receive_body(str, 5000) == "via context"
