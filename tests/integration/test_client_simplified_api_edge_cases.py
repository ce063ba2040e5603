"""The simplified API as JMS 2.0 and Qpid JMS define it, against the embedded broker:
``receive_body`` of a body of another type keeps the message, ``set_client_id`` right after
``create_context``, ``JMSProducer``'s typed properties and binary correlation id, and listeners
that try to close their own consumer or context."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    IllegalStateRuntimeException,
    JMSContext,
    MessageFormatRuntimeException,
    Queue,
)
from amqp_jms.aio import AsyncConnectionFactory
from amqp_jms.exceptions import JMSRuntimeException


@pytest.mark.parametrize("mode", [JMSContext.AUTO_ACKNOWLEDGE, JMSContext.DUPS_OK_ACKNOWLEDGE])
def test_receive_body_of_another_type_keeps_the_message(broker: Any, mode: int) -> None:
    with ConnectionFactory(broker.url).create_context(mode) as ctx:
        q = Queue("rb-keep")
        ctx.create_producer().send(q, "text body")
        consumer = ctx.create_consumer(q)
        with pytest.raises(MessageFormatRuntimeException):
            consumer.receive_body(dict, 5000)
        assert consumer.receive_body(str, 5000) == "text body"  # the same message, again
        assert consumer.receive_no_wait() is None
    with ConnectionFactory(broker.url).create_context() as ctx:  # and it was acknowledged once
        assert list(ctx.create_browser(Queue("rb-keep"))) == []


def test_asyncio_receive_body_of_another_type_keeps_the_message(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_context() as ctx:
        ctx.create_producer().send(Queue("rb-aio"), b"\x01")

    async def main() -> bytes:
        ctx = await AsyncConnectionFactory(broker.url).create_context(JMSContext.AUTO_ACKNOWLEDGE)
        try:
            consumer = await ctx.create_consumer(Queue("rb-aio"))
            with pytest.raises(MessageFormatRuntimeException):
                await consumer.receive_body(str, 5000)
            body = await consumer.receive_body(bytes, 5000)
            assert isinstance(body, bytes)
            return body
        finally:
            await ctx.close()

    assert asyncio.run(main()) == b"\x01"


def test_set_client_id_right_after_create_context(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_context() as ctx:
        ctx.set_client_id("ctx-client-1")
        assert ctx.get_client_id() == "ctx-client-1"
        ctx.create_producer().send(Queue("cid"), "x")  # the session opens now, named
        assert ctx.create_consumer(Queue("cid")).receive_body(str, 5000) == "x"


def test_jms_producer_typed_properties_and_binary_correlation_id(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_context() as ctx:
        p = ctx.create_producer()
        p.set_int_property("i", 7).set_string_property("s", "42").set_boolean_property("b", True)
        p.set_double_property("d", 1.5).set_property("o", 3)
        assert p.get_int_property("i") == 7 and p.get_long_property("i") == 7
        assert p.get_int_property("s") == 42  # String -> int, as the message's table says
        assert p.get_boolean_property("b") is True and p.get_string_property("b") == "true"
        assert p.get_double_property("d") == 1.5
        with pytest.raises(MessageFormatRuntimeException):
            p.get_boolean_property("d")  # double -> boolean is not allowed
        assert p.property_exists("o") and sorted(p.get_property_names()) == ["b", "d", "i", "o", "s"]
        raw = bytes(range(5))
        p.set_jms_correlation_id_as_bytes(raw)
        assert p.get_jms_correlation_id_as_bytes() == raw
        p.send(Queue("jp"), "x")
        m = ctx.create_consumer(Queue("jp")).receive(5000)
        assert m is not None and m.get_jms_correlation_id_as_bytes() == raw
        assert m.get_int_property("i") == 7 and m.get_boolean_property("b") is True
        p.clear_properties()
        assert p.get_property_names() == []
        with pytest.raises(JMSRuntimeException):
            p.set_jms_correlation_id("ID:AMQP_ULONG:foo")  # refused at the set


def test_listener_closing_its_own_consumer_is_refused(broker: Any) -> None:
    errors: list[BaseException] = []
    done = threading.Event()
    with ConnectionFactory(broker.url).create_connection() as conn:
        session = conn.create_session()
        consumer = session.create_consumer(Queue("own"))
        other = session.create_consumer(Queue("own-other"))

        def on_message(m: Any) -> None:
            try:
                consumer.close()
            except IllegalStateException as e:
                errors.append(e)
            other.close()  # another consumer of the session may be closed
            done.set()

        consumer.set_message_listener(on_message)
        conn.start()
        session.create_producer(Queue("own")).send(session.create_text_message("x"))
        assert done.wait(5)
        assert len(errors) == 1 and other._closed and not consumer._closed
        consumer.close()  # from another thread: fine


def test_jms_consumer_listener_closing_itself_and_its_context(broker: Any) -> None:
    errors: list[BaseException] = []
    done = threading.Event()
    ctx = ConnectionFactory(broker.url).create_context()
    consumer = ctx.create_consumer(Queue("own-ctx"))

    def on_message(m: Any) -> None:
        for closer in (consumer.close, ctx.close):
            try:
                closer()
            except IllegalStateRuntimeException as e:
                errors.append(e)
        done.set()

    consumer.set_message_listener(on_message)
    ctx.create_producer().send(Queue("own-ctx"), "x")
    assert done.wait(5)
    assert len(errors) == 2
    before = {t.name for t in threading.enumerate()}
    assert any(n.startswith("amqp-jms-io") for n in before)
    ctx.close()  # the context stayed open: this really closes it, and its threads end
    deadline = time.monotonic() + 5
    conn = ctx.internal.connection
    provider = conn._provider
    while time.monotonic() < deadline and provider is not None and provider.loop_thread._thread.is_alive():
        time.sleep(0.05)
    assert conn._closed
    assert not conn._provider.loop_thread._thread.is_alive()
