"""The JMS client end to end against the embedded broker: every feature of issue 6."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import (
    BytesMessage,
    Connection,
    ConnectionFactory,
    DeliveryMode,
    IllegalStateException,
    InvalidClientIDException,
    InvalidSelectorException,
    JMSException,
    JMSSecurityException,
    MapMessage,
    Message,
    ObjectMessage,
    Queue,
    Session,
    StreamMessage,
    TextMessage,
    Topic,
)
from amqp_jms.types import Byte, Float, Int, Short


@pytest.fixture
def conn(broker: Any) -> Iterator[Connection]:
    c = ConnectionFactory(broker.url + "?jms.closeTimeout=5000").create_connection()
    c.start()
    yield c
    c.close()


def _io_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("amqp-jms")]


def test_send_receive_auto_ack(conn: Connection) -> None:
    s = conn.create_session()
    p = s.create_producer(Queue("q1"))
    for i in range(10):
        p.send(s.create_text_message(f"m{i}"))
    c = s.create_consumer(Queue("q1"))
    got = [c.receive(2000) for _ in range(10)]
    assert [m.get_text() for m in got if isinstance(m, TextMessage)] == [f"m{i}" for i in range(10)]
    assert c.receive_no_wait() is None
    # acknowledged: a new consumer sees nothing
    c.close()
    assert s.create_consumer(Queue("q1")).receive(200) is None


def test_every_message_type_and_property_type_round_trips(conn: Connection) -> None:
    s = conn.create_session()
    q = Queue("types")
    p = s.create_producer(q)
    c = s.create_consumer(q)
    text = s.create_text_message("héllo")
    text.set_boolean_property("b", True)
    text.set_byte_property("y", -5)
    text.set_short_property("s", 300)
    text.set_int_property("i", 70000)
    text.set_long_property("l", 2**40)
    text.set_float_property("f", 1.5)
    text.set_double_property("d", 2.25)
    text.set_string_property("str", "x")
    text.set_jms_correlation_id("corr-1")
    text.set_jms_type("kind")
    text.set_jms_reply_to(Queue("replies"))
    bm = s.create_bytes_message()
    bm.write_bytes(b"\x00\x01\xff")
    bm.write_int(7)
    mm = s.create_map_message()
    mm.set_int("n", 3)
    mm.set_string("t", "v")
    mm.set_bytes("raw", b"ab")
    sm = s.create_stream_message()
    sm.write_string("a")
    sm.write_long(9)
    om = s.create_object_message({"k": [1, 2]})
    plain = s.create_message()
    for m in (text, bm, mm, sm, om, plain):
        p.send(m)
    r = c.receive(2000)
    assert isinstance(r, TextMessage) and r.get_text() == "héllo"
    assert r.get_boolean_property("b") is True
    assert r.get_object_property("y") == Byte(-5) and type(r.get_object_property("y")) is Byte
    assert type(r.get_object_property("s")) is Short and type(r.get_object_property("i")) is Int
    assert r.get_long_property("l") == 2**40
    assert type(r.get_object_property("f")) is Float and r.get_double_property("d") == 2.25
    assert r.get_string_property("str") == "x"
    assert r.get_jms_correlation_id() == "corr-1" and r.get_jms_type() == "kind"
    assert r.get_jms_reply_to() == Queue("replies") and r.get_jms_destination() == q
    assert r.get_jms_delivery_mode() == DeliveryMode.PERSISTENT
    assert r.get_jms_message_id() == text.get_jms_message_id()
    rb = c.receive(2000)
    assert isinstance(rb, BytesMessage)
    buf = bytearray(3)
    assert rb.read_bytes(buf) == 3 and bytes(buf) == b"\x00\x01\xff" and rb.read_int() == 7
    rm = c.receive(2000)
    assert isinstance(rm, MapMessage)
    assert (rm.get_int("n"), rm.get_string("t"), rm.get_bytes("raw")) == (3, "v", b"ab")
    rs = c.receive(2000)
    assert isinstance(rs, StreamMessage) and rs.read_string() == "a" and rs.read_long() == 9
    ro = c.receive(2000)
    assert isinstance(ro, ObjectMessage) and ro.get_object() == {"k": [1, 2]}
    rp = c.receive(2000)
    assert type(rp) is Message


def test_producer_defaults_and_per_send_overrides(conn: Connection) -> None:
    s = conn.create_session()
    q = Queue("over")
    p = s.create_producer(q)
    p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
    p.set_priority(2)
    p.send(s.create_text_message("defaults"))
    p.send(s.create_text_message("override"), DeliveryMode.PERSISTENT, 8, 60000)
    c = s.create_consumer(q)
    got = {m.get_text(): m for m in (c.receive(2000), c.receive(2000)) if isinstance(m, TextMessage)}
    d, o = got["defaults"], got["override"]
    assert d.get_jms_delivery_mode() == DeliveryMode.NON_PERSISTENT and d.get_jms_priority() == 2
    assert d.get_jms_expiration() == 0
    assert o.get_jms_delivery_mode() == DeliveryMode.PERSISTENT and o.get_jms_priority() == 8
    assert o.get_jms_expiration() == o.get_jms_timestamp() + 60000
    with pytest.raises(JMSException):
        p.send(s.create_text_message("x"), DeliveryMode.PERSISTENT, 10, 0)


def test_listener_runs_serially_off_the_io_thread(conn: Connection) -> None:
    s = conn.create_session()
    c = s.create_consumer(Queue("lq"))
    seen: list[str] = []
    threads: set[str] = set()
    done = threading.Event()
    active = [0]
    overlap = [False]

    def on_message(m: Message) -> None:
        active[0] += 1
        overlap[0] = overlap[0] or active[0] > 1
        threads.add(threading.current_thread().name)
        seen.append(m.get_text() or "" if isinstance(m, TextMessage) else repr(m))
        time.sleep(0.001)
        active[0] -= 1
        if len(seen) == 20:
            done.set()

    c.set_message_listener(on_message)
    with pytest.raises(IllegalStateException):
        c.receive_no_wait()
    p = conn.create_session().create_producer(Queue("lq"))
    for i in range(20):
        p.send(s.create_text_message(str(i)))
    assert done.wait(10)
    assert seen == [str(i) for i in range(20)]
    assert not overlap[0]
    assert len(threads) == 1 and not next(iter(threads)).startswith("amqp-jms-io")


def test_listener_that_raises_gets_the_message_again(conn: Connection) -> None:
    s = conn.create_session()
    calls: list[tuple[str, bool]] = []
    done = threading.Event()

    def flaky(m: Message) -> None:
        text = m.get_text() or "" if isinstance(m, TextMessage) else repr(m)
        calls.append((text, m.get_jms_redelivered()))
        if len(calls) == 1:
            raise RuntimeError("boom")
        done.set()

    s.create_consumer(Queue("flaky")).set_message_listener(flaky)
    s.create_producer(Queue("flaky")).send(s.create_text_message("once"))
    assert done.wait(5)
    assert calls == [("once", False), ("once", True)]


def test_stop_pauses_listener_delivery(conn: Connection) -> None:
    s = conn.create_session()
    got: list[Message] = []
    s.create_consumer(Queue("pause")).set_message_listener(got.append)
    conn.stop()
    s.create_producer(Queue("pause")).send(s.create_text_message("x"))
    time.sleep(0.3)
    assert got == []
    conn.start()
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(got) == 1


def test_transacted_commit_and_rollback(conn: Connection) -> None:
    s = conn.create_session(True)
    q = Queue("tx")
    p = s.create_producer(q)
    c = s.create_consumer(q)
    p.send(s.create_text_message("t1"))
    assert c.receive(300) is None  # not visible before commit
    s.commit()
    m = c.receive(2000)
    assert isinstance(m, TextMessage) and m.get_text() == "t1" and not m.get_jms_redelivered()
    s.rollback()
    again = c.receive(2000)
    assert isinstance(again, TextMessage) and again.get_text() == "t1" and again.get_jms_redelivered()
    s.commit()
    assert c.receive(300) is None
    p.send(s.create_text_message("dropped"))
    s.rollback()
    assert c.receive(300) is None


def test_client_ack_and_recover(conn: Connection) -> None:
    s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
    q = Queue("ca")
    p = s.create_producer(q)
    for i in range(3):
        p.send(s.create_text_message(str(i)))
    c = s.create_consumer(q)
    first = [c.receive(2000) for _ in range(3)]
    s.recover()
    again = [c.receive(2000) for _ in range(3)]
    assert [m.get_text() for m in again if isinstance(m, TextMessage)] == ["0", "1", "2"]
    assert all(m is not None and m.get_jms_redelivered() for m in again)
    assert first[0] is not None and again[1] is not None
    again[1].acknowledge()  # CLIENT_ACKNOWLEDGE: acknowledges all three
    s.close()
    s2 = conn.create_session()
    assert s2.create_consumer(q).receive(300) is None  # all three were acknowledged


def test_unacknowledged_messages_come_back_after_session_close(conn: Connection) -> None:
    s = conn.create_session(Session.CLIENT_ACKNOWLEDGE)
    q = Queue("unacked")
    s.create_producer(q).send(s.create_text_message("keep"))
    m = s.create_consumer(q).receive(2000)
    assert m is not None
    s.close()
    s2 = conn.create_session()
    back = s2.create_consumer(q).receive(2000)
    assert isinstance(back, TextMessage) and back.get_text() == "keep" and back.get_jms_redelivered()


def test_individual_ack(conn: Connection) -> None:
    s = conn.create_session(Session.INDIVIDUAL_ACKNOWLEDGE)
    q = Queue("ind")
    p = s.create_producer(q)
    p.send(s.create_text_message("a"))
    p.send(s.create_text_message("b"))
    c = s.create_consumer(q)
    a, b = c.receive(2000), c.receive(2000)
    assert a is not None and b is not None
    b.acknowledge()
    s.close()
    left = conn.create_session().create_consumer(q).receive(2000)
    assert isinstance(left, TextMessage) and left.get_text() == "a"


def test_selector_filters_on_the_broker(conn: Connection) -> None:
    s = conn.create_session()
    q = Queue("sel")
    p = s.create_producer(q)
    for color in ("red", "blue", "red"):
        m = s.create_text_message(color)
        m.set_string_property("color", color)
        p.send(m)
    c = s.create_consumer(q, "color = 'blue'")
    m = c.receive(2000)
    assert isinstance(m, TextMessage) and m.get_text() == "blue"
    assert c.receive(200) is None
    with pytest.raises(InvalidSelectorException):
        s.create_consumer(q, "color = = 'x'")


def test_topic_fan_out_and_no_local(broker: Any, conn: Connection) -> None:
    s = conn.create_session()
    t = Topic("news")
    a = s.create_consumer(t)
    local = s.create_consumer(t, no_local=True)
    other = ConnectionFactory(broker.url).create_connection()
    other.start()
    try:
        remote = other.create_session().create_consumer(t)
        s.create_producer(t).send(s.create_text_message("hello"))
        for c in (a, remote):
            m = c.receive(2000)
            assert isinstance(m, TextMessage) and m.get_text() == "hello"
        assert local.receive(300) is None
    finally:
        other.close()


def test_pull_consumers_do_not_hoard(broker: Any) -> None:
    with ConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0").create_connection() as conn:
        conn.start()
        s = conn.create_session()
        q = Queue("pull")
        c1, c2 = s.create_consumer(q), s.create_consumer(q)
        assert c1.receive_no_wait() is None
        p = s.create_producer(q)
        p.send(s.create_text_message("1"))
        p.send(s.create_text_message("2"))
        m1 = c1.receive(2000)
        m2 = c2.receive(2000)
        assert {m.get_text() for m in (m1, m2) if isinstance(m, TextMessage)} == {"1", "2"}
        t0 = time.monotonic()
        assert c1.receive(200) is None
        assert time.monotonic() - t0 < 2


def test_expired_messages_are_not_delivered(conn: Connection) -> None:
    s = conn.create_session()
    q = Queue("exp")
    p = s.create_producer(q)
    p.send(s.create_text_message("short"), DeliveryMode.PERSISTENT, 4, 50)
    p.send(s.create_text_message("long"))
    time.sleep(0.2)
    m = s.create_consumer(q).receive(2000)
    assert isinstance(m, TextMessage) and m.get_text() == "long"


def test_anonymous_producer_via_relay(conn: Connection) -> None:
    s = conn.create_session()
    p = s.create_producer(None)
    p.send(Queue("anon"), s.create_text_message("via relay"))
    m = s.create_consumer(Queue("anon")).receive(2000)
    assert isinstance(m, TextMessage) and m.get_text() == "via relay"


def test_consumer_is_iterable_until_closed(conn: Connection) -> None:
    s = conn.create_session()
    q = Queue("iter")
    p = s.create_producer(q)
    for i in range(3):
        p.send(s.create_text_message(str(i)))
    c = s.create_consumer(q)
    out: list[str] = []
    for m in c:
        assert isinstance(m, TextMessage)
        out.append(m.get_text() or "")
        if len(out) == 3:
            threading.Timer(0.1, c.close).start()
    assert out == ["0", "1", "2"]


def test_client_id_in_use_is_refused(broker: Any) -> None:
    f = ConnectionFactory(broker.url, client_id="only-one")
    with f.create_connection():
        with pytest.raises(InvalidClientIDException):
            f.create_connection()


def test_sasl_plain_with_users(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "secret"})
    with ConnectionFactory(b.url, username="alice", password="secret").create_connection() as c:
        c.start()
        c.create_session()
    bad = ConnectionFactory(b.url, username="alice", password="wrong").create_connection()
    with pytest.raises(JMSSecurityException):
        bad.start()
    bad.close()


def test_close_is_idempotent_and_leaks_no_threads(broker: Any) -> None:
    before = set(_io_threads())
    c = ConnectionFactory(broker.url).create_connection()
    s = c.create_session()
    s.create_consumer(Queue("x")).set_message_listener(lambda m: None)
    s.create_producer(Queue("x"))
    c.start()
    c.close()
    c.close()
    time.sleep(0.05)
    assert set(_io_threads()) - before == set()
    with pytest.raises(IllegalStateException):
        s.create_producer(Queue("x"))


def test_sasl_mechanism_allow_list(broker_factory: Any) -> None:
    b = broker_factory(users={"alice": "secret"})
    conn = ConnectionFactory(b.url + "?amqp.saslMechanisms=ANONYMOUS").create_connection()
    with pytest.raises(JMSSecurityException):
        conn.start()
    conn.close()
    url = b.url + "?amqp.saslMechanisms=PLAIN"
    with ConnectionFactory(url, username="alice", password="secret").create_connection() as ok:
        ok.start()


def test_large_messages_span_many_frames(broker: Any) -> None:
    body = bytes(range(256)) * 1024  # 256 KiB, frames of 16 KiB
    with ConnectionFactory(broker.url + "?amqp.maxFrameSize=16384").create_connection() as conn:
        conn.start()
        s = conn.create_session()
        m = s.create_bytes_message()
        m.write_bytes(body)
        s.create_producer(Queue("big")).send(m)
        r = s.create_consumer(Queue("big")).receive(5000)
        assert isinstance(r, BytesMessage) and r.get_body(bytes) == body


def test_broker_going_away_reaches_the_exception_listener(broker_factory: Any) -> None:
    b = broker_factory()
    errors: list[JMSException] = []
    got = threading.Event()
    conn = ConnectionFactory(b.url).create_connection()
    conn.set_exception_listener(lambda e: (errors.append(e), got.set()))
    conn.start()
    s = conn.create_session()
    c = s.create_consumer(Queue("gone"))
    b.__exit__(None, None, None)
    assert got.wait(10)
    assert errors[0].error_code == "amqp:connection:forced"
    with pytest.raises(JMSException, match="broker shutting down"):
        c.receive(1000)  # a dead connection says why, it does not hang
    with pytest.raises(JMSException):
        s.create_producer(Queue("gone"))
    conn.close()


def test_listener_on_a_pull_consumer(broker: Any) -> None:
    with ConnectionFactory(broker.url + "?jms.prefetchPolicy.all=0").create_connection() as conn:
        s = conn.create_session()
        got: list[str] = []
        done = threading.Event()

        def on_message(m: Message) -> None:
            got.append(m.get_text() or "" if isinstance(m, TextMessage) else repr(m))
            if len(got) == 3:
                done.set()

        s.create_consumer(Queue("pull-listener")).set_message_listener(on_message)
        conn.start()
        p = s.create_producer(Queue("pull-listener"))
        for i in range(3):
            p.send(s.create_text_message(str(i)))
        assert done.wait(5)
        assert got == ["0", "1", "2"]


def test_recover_inside_a_listener_redelivers_the_current_message(conn: Connection) -> None:
    s = conn.create_session()
    calls: list[tuple[str, bool]] = []
    done = threading.Event()

    def on_message(m: Message) -> None:
        text = m.get_text() or "" if isinstance(m, TextMessage) else repr(m)
        calls.append((text, m.get_jms_redelivered()))
        if len(calls) == 1:
            s.recover()
        else:
            done.set()

    s.create_consumer(Queue("recover-in-listener")).set_message_listener(on_message)
    s.create_producer(Queue("recover-in-listener")).send(s.create_text_message("again"))
    assert done.wait(5)
    assert calls == [("again", False), ("again", True)]
