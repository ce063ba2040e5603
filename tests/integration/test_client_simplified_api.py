"""The simplified API (JMS 2.0 chapter 11) end to end on the embedded broker."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from amqp_jms import (
    BytesMessage,
    ConnectionFactory,
    DeliveryMode,
    IllegalStateRuntimeException,
    InvalidDestinationRuntimeException,
    InvalidSelectorRuntimeException,
    JMSContext,
    JMSRuntimeException,
    MapMessage,
    MessageFormatRuntimeException,
    Queue,
    TextMessage,
    Topic,
)


def test_bodies_of_every_kind_and_receive_body(broker: Any) -> None:
    q = Queue("ctx-bodies")
    with ConnectionFactory(broker.url).create_context() as ctx:
        p = ctx.create_producer()
        p.send(q, "text").send(q, b"\x00\x01").send(q, {"k": 1, "s": "v"}).send(q, [1, 2])
        c = ctx.create_consumer(q)  # autostart: no start() needed
        assert c.receive_body(str, 2000) == "text"
        assert c.receive_body(bytes, 2000) == b"\x00\x01"
        assert c.receive_body(dict, 2000) == {"k": 1, "s": "v"}
        m = c.receive(2000)
        assert m is not None and m.get_body(object) == [1, 2]
        assert c.receive_body_no_wait(str) is None


def test_message_types_from_bodies(broker: Any) -> None:
    q = Queue("ctx-types")
    with ConnectionFactory(broker.url).create_context() as ctx:
        ctx.create_producer().send(q, "t").send(q, b"b").send(q, {"a": 1})
        c = ctx.create_consumer(q)
        kinds = [type(c.receive(2000)) for _ in range(3)]
    assert kinds == [TextMessage, BytesMessage, MapMessage]


def test_receive_body_of_the_wrong_type_is_a_runtime_format_error(broker: Any) -> None:
    q = Queue("ctx-wrong")
    with ConnectionFactory(broker.url).create_context() as ctx:
        ctx.create_producer().send(q, "text")
        with pytest.raises(MessageFormatRuntimeException):
            ctx.create_consumer(q).receive_body(bytes, 2000)


def test_producer_settings_properties_and_headers(broker: Any) -> None:
    q = Queue("ctx-props")
    with ConnectionFactory(broker.url).create_context() as ctx:
        reply = Queue("replies")
        p = (ctx.create_producer().set_priority(7).set_delivery_mode(DeliveryMode.NON_PERSISTENT)
             .set_time_to_live(60_000).set_property("color", "red").set_property("n", 3)
             .set_jms_correlation_id("corr-1").set_jms_type("kind").set_jms_reply_to(reply))
        assert p.get_property_names() == ["color", "n"] and p.get_priority() == 7
        p.send(q, "x")
        m = ctx.create_consumer(q).receive(2000)
        assert m is not None
        assert m.get_jms_priority() == 7 and m.get_jms_delivery_mode() == DeliveryMode.NON_PERSISTENT
        assert m.get_jms_expiration() > 0
        assert m.get_string_property("color") == "red" and m.get_long_property("n") == 3
        assert m.get_jms_correlation_id() == "corr-1" and m.get_jms_type() == "kind"
        assert m.get_jms_reply_to() == reply
        with pytest.raises(JMSRuntimeException):
            p.set_priority(12)
        with pytest.raises(ValueError):  # Java: IllegalArgumentException
            p.set_property("", 1)


def test_runtime_exceptions(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_context() as ctx:
        with pytest.raises(InvalidSelectorRuntimeException):
            ctx.create_consumer(Queue("q"), "a = ")
        with pytest.raises(IllegalStateRuntimeException):
            ctx.commit()  # not transacted
        with pytest.raises(InvalidDestinationRuntimeException):
            ctx.create_producer().send(None, "x")
        with pytest.raises(IllegalStateRuntimeException):
            ctx.create_durable_consumer(Topic("t"), "needs-client-id")
    with pytest.raises(IllegalStateRuntimeException):
        ctx.create_producer()  # closed


def test_transacted_context_commit_and_rollback(broker: Any) -> None:
    q = Queue("ctx-tx")
    f = ConnectionFactory(broker.url)
    with f.create_context(JMSContext.SESSION_TRANSACTED) as ctx, f.create_context() as reader:
        assert ctx.get_transacted() and ctx.get_session_mode() == JMSContext.SESSION_TRANSACTED
        p = ctx.create_producer()
        p.send(q, "rolled back")
        ctx.rollback()
        p.send(q, "committed")
        ctx.commit()
        c = reader.create_consumer(q)
        assert c.receive_body(str, 2000) == "committed"
        assert c.receive_body(str, 300) is None


def test_shared_connection_closes_with_the_last_context(broker: Any) -> None:
    q = Queue("ctx-share")
    ctx1 = ConnectionFactory(broker.url).create_context()
    ctx2 = ctx1.create_context(JMSContext.CLIENT_ACKNOWLEDGE)
    assert ctx2.internal.connection is ctx1.internal.connection
    ctx1.create_producer().send(q, "shared")
    ctx1.close()
    c = ctx2.create_consumer(q)  # the connection is still open
    m = c.receive(2000)
    assert m is not None and m.get_body(str) == "shared"
    ctx2.acknowledge()
    ctx2.close()
    with pytest.raises(Exception, match="closed"):
        ctx2.internal.connection.create_session()


def test_async_send_via_set_async(broker: Any) -> None:
    done = threading.Event()
    seen: list[Any] = []

    class Listener:
        def on_completion(self, message: Any) -> None:
            seen.append(message.get_body(str))
            done.set()

        def on_exception(self, message: Any, exception: Exception) -> None:
            seen.append(exception)
            done.set()

    with ConnectionFactory(broker.url).create_context() as ctx:
        listener = Listener()
        p = ctx.create_producer().set_async(listener)
        assert p.get_async() is listener
        p.send(Queue("ctx-async"), "async body")
        assert done.wait(5)
    assert seen == ["async body"]


def test_context_with_credentials_and_mode(broker: Any) -> None:
    f = ConnectionFactory(broker.url)
    with f.create_context("guest", "guest", JMSContext.DUPS_OK_ACKNOWLEDGE) as ctx:
        assert ctx.get_session_mode() == JMSContext.DUPS_OK_ACKNOWLEDGE
        assert ctx.get_meta_data().get_jms_version() == "2.0"
        ctx.set_autostart(False)
        c = ctx.create_consumer(Queue("ctx-nostart"))
        ctx.create_producer().send(Queue("ctx-nostart"), "x")
        assert c.receive_no_wait() is None  # not started
        ctx.start()
        assert c.receive_body(str, 2000) == "x"
