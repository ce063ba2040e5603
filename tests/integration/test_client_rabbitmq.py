"""The JMS client against RabbitMQ 3.10 + rabbitmq_amqp1_0: what it supports works, what it
lacks fails fast with a clear exception (or uses the documented fallback)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import (
    BytesMessage,
    Connection,
    ConnectionFactory,
    JMSException,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    StreamMessage,
    TextMessage,
    Topic,
)
from amqp_jms.types import Byte, Float, Int, Short

pytestmark = pytest.mark.rabbitmq


@pytest.fixture
def conn(rabbitmq: Any) -> Iterator[Connection]:
    url = rabbitmq.url + "?jms.requestTimeout=10000&jms.closeTimeout=5000"
    c = ConnectionFactory(url).create_connection()
    c.start()
    yield c
    c.close()


def _q() -> Queue:
    return Queue(f"/queue/jms-{uuid.uuid4().hex[:8]}")


def test_send_and_receive_through_a_queue(conn: Connection) -> None:
    s = conn.create_session()
    q = _q()
    p = s.create_producer(q)
    for i in range(5):
        p.send(s.create_text_message(f"m{i}"))
    c = s.create_consumer(q)
    got = [c.receive(5000) for _ in range(5)]
    assert [m.get_text() for m in got if isinstance(m, TextMessage)] == [f"m{i}" for i in range(5)]
    assert c.receive(300) is None


def test_properties_and_every_body_type_round_trip(conn: Connection) -> None:
    s = conn.create_session()
    q = _q()
    p = s.create_producer(q)
    t = s.create_text_message("héllo")
    for name, value in (("b", True), ("y", Byte(-3)), ("s", Short(7)), ("i", Int(70000)),
                        ("l", 2**40), ("f", Float(1.5)), ("d", 2.25), ("str", "v")):
        t.set_object_property(name, value)
    t.set_jms_correlation_id("corr")
    t.set_jms_type("kind")
    bm = s.create_bytes_message()
    bm.write_bytes(b"\x00\xff")
    mm = s.create_map_message()
    mm.set_int("n", 1)
    mm.set_string("t", "x")
    sm = s.create_stream_message()
    sm.write_string("a")
    sm.write_int(2)
    # an amqp-value holding a list makes RabbitMQ 3.10 abort the connection (framing-error):
    # a map (or any scalar) travels fine
    om = s.create_object_message({"k": [1, "two"]})
    for m in (t, bm, mm, sm, om, s.create_message()):
        p.send(m)
    c = s.create_consumer(q)
    r = c.receive(5000)
    assert isinstance(r, TextMessage) and r.get_text() == "héllo"
    for name, value in (("b", True), ("y", Byte(-3)), ("s", Short(7)), ("i", Int(70000)),
                        ("l", 2**40), ("f", Float(1.5)), ("d", 2.25), ("str", "v")):
        got = r.get_object_property(name)
        assert got == value and type(got) is type(value), name
    assert r.get_jms_correlation_id() == "corr" and r.get_jms_type() == "kind"
    assert r.get_jms_message_id() == t.get_jms_message_id()
    rb = c.receive(5000)
    assert isinstance(rb, BytesMessage) and rb.get_body(bytes) == b"\x00\xff"
    rm = c.receive(5000)
    assert isinstance(rm, MapMessage) and (rm.get_int("n"), rm.get_string("t")) == (1, "x")
    rs = c.receive(5000)
    assert isinstance(rs, StreamMessage) and (rs.read_string(), rs.read_int()) == ("a", 2)
    ro = c.receive(5000)
    assert isinstance(ro, ObjectMessage) and ro.get_object() == {"k": [1, "two"]}
    assert type(c.receive(5000)) is Message


def test_topics_fan_out(conn: Connection) -> None:
    s = conn.create_session()
    t = Topic(f"/topic/news-{uuid.uuid4().hex[:6]}")
    a, b = s.create_consumer(t), s.create_consumer(t)
    time.sleep(0.2)
    s.create_producer(t).send(s.create_text_message("flash"))
    for c in (a, b):
        m = c.receive(5000)
        assert isinstance(m, TextMessage) and m.get_text() == "flash"


def test_listener_and_client_ack(conn: Connection) -> None:
    import threading

    from amqp_jms import Session

    s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
    q = _q()
    got: list[Message] = []
    done = threading.Event()
    s.create_consumer(q).set_message_listener(lambda m: (got.append(m), done.set()))
    conn.create_session().create_producer(q).send(s.create_text_message("x"))
    assert done.wait(5)
    got[0].acknowledge()


def test_transacted_session_fails_fast(conn: Connection) -> None:
    t0 = time.monotonic()
    with pytest.raises(JMSException):
        conn.create_session(True)
    assert time.monotonic() - t0 < 5
    # the connection is still usable
    s = conn.create_session()
    q = _q()
    s.create_producer(q).send(s.create_text_message("still fine"))
    assert s.create_consumer(q).receive(5000) is not None


def test_selector_on_a_queue_is_refused_clearly(conn: Connection) -> None:
    s = conn.create_session()
    with pytest.raises(JMSException, match="does not apply message selectors"):
        s.create_consumer(_q(), "color = 'red'")


def test_selector_on_a_topic_is_evaluated_by_the_client(conn: Connection) -> None:
    s = conn.create_session()
    t = Topic(f"/topic/sel-{uuid.uuid4().hex[:6]}")
    c = s.create_consumer(t, "color = 'red'")
    time.sleep(0.2)
    p = s.create_producer(t)
    for color in ("blue", "red"):
        m = s.create_text_message(color)
        m.set_string_property("color", color)
        p.send(m)
    m = c.receive(5000)
    assert isinstance(m, TextMessage) and m.get_text() == "red"
    assert c.receive(300) is None


def test_temporary_queue_fails_fast(conn: Connection) -> None:
    s = conn.create_session()
    t0 = time.monotonic()
    with pytest.raises(JMSException):
        s.create_temporary_queue()
    assert time.monotonic() - t0 < 5


def test_anonymous_producer_uses_the_per_destination_fallback(conn: Connection) -> None:
    s = conn.create_session()
    q = _q()
    p = s.create_producer(None)
    p.send(q, s.create_text_message("fallback"))
    m = s.create_consumer(q).receive(5000)
    assert isinstance(m, TextMessage) and m.get_text() == "fallback"


def test_empty_receives_do_not_drain_rabbitmq_3_10(conn: Connection) -> None:
    """RabbitMQ before 3.12 ends the session when a classic queue answers such a drain
    (rabbitmq-server#7119), so the client looks locally only there, and the session lives on."""
    s = conn.create_session()
    q = _q()
    c = s.create_consumer(q)
    assert c.receive_no_wait() is None
    assert c.receive(200) is None
    s.create_producer(q).send(s.create_text_message("after"))
    got = c.receive(5000)
    assert isinstance(got, TextMessage) and got.get_text() == "after"


def test_prefetch_zero_pulls_without_draining_rabbitmq_3_10(rabbitmq: Any) -> None:
    """A pull consumer (prefetch 0) would drain; RabbitMQ 3.10 ends the session on that, so the
    client leaves its one credit out instead: empty receives answer None, nothing is lost."""
    url = rabbitmq.url + "?jms.prefetchPolicy.all=0&jms.requestTimeout=10000"
    with ConnectionFactory(url).create_connection() as c:
        c.start()
        s = c.create_session()
        q = _q()
        consumer = s.create_consumer(q)
        assert consumer.receive_no_wait() is None
        assert consumer.receive(200) is None
        consumer.drain()  # a no-op there, not a crash
        producer = s.create_producer(q)
        for i in range(3):
            producer.send(s.create_text_message(f"p{i}"))
        got = [consumer.receive(5000) for _ in range(3)]
        assert [m.get_text() for m in got if isinstance(m, TextMessage)] == ["p0", "p1", "p2"]
