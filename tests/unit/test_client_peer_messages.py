"""Messages frame by frame against the scripted peer: the behaviours Qpid JMS's Message,
Text/Bytes/Map/Stream/ObjectMessage, ForeignMessage, MessageExpiration and
MultiTransferFrameMessage integration tests check, as they apply to us (docs/qpid-jms-parity.md).
What the client sends is read off the bytes the peer received; what it receives is scripted as
the AMQP sections a peer (Java or not) may send."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as PMessage
from proton import byte, symbol, timestamp, ulong

from amqp_jms import ConnectionFactory, Queue, Topic
from amqp_jms.client import Connection
from amqp_jms.mapping.codec import AMQP_SEQUENCE, AMQP_VALUE, DATA, decode_sections
from amqp_jms.message import (
    BytesMessage,
    JavaSerializedObject,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from amqp_jms.testing.peer import TestPeer, Transfer
from amqp_jms.types import Byte, Int, Symbol, ULong

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
CAPS = ["ANONYMOUS-RELAY", "DELAYED_DELIVERY"]


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open(offered_capabilities=CAPS)
        p.expect_begin()
        yield p


def _conn(peer: TestPeer, options: str = "") -> Connection:
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _sent(peer: TestPeer, *messages: Message, dest: Any = None, options: str = "") -> list[Any]:
    """The sections of each message as the peer received it, sent by a producer to ``dest``."""
    got: list[Transfer] = []
    with _conn(peer, options) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=len(messages) + 1)
        for _ in messages:
            peer.expect_transfer(got.append)
        p = s.create_producer(dest or Queue("q"))
        for m in messages:
            p.send(m)
        peer.wait()
    return [decode_sections(t.payload) for t in got]


def _received(peer: TestPeer, *pms: Any, dest: Any = None, options: str = "", wait_ms: int = 5000,
              ) -> list[Any]:
    """What a consumer on ``dest`` receives for each proton message the peer sends."""
    peer.expect_attach()
    peer.expect_flow(send=list(pms))
    for _ in pms:
        peer.expect_disposition()  # each one acknowledged (AUTO_ACKNOWLEDGE)
    out = []
    with _conn(peer, options) as conn:
        s = conn.create_session()
        c = s.create_consumer(dest or Queue("q"))
        conn.start()
        for _ in pms:
            m = c.receive(wait_ms)
            if m is None:
                break
            out.append(m)
        peer.wait()
    return out


def _typed(body: Any, msg_type: int | None = None, **fields: Any) -> PMessage:
    ann = {symbol("x-opt-jms-msg-type"): byte(msg_type)} if msg_type is not None else None
    return PMessage(body=body, annotations=ann, **fields)


# -- TextMessageIntegrationTest ------------------------------------------------------------------
def test_text_message_is_sent_as_an_amqp_value_string(peer: TestPeer) -> None:
    with_text, empty = _sent(peer, TextMessage("myTextMessage"), TextMessage())
    assert with_text.body_type == AMQP_VALUE and with_text.body == "myTextMessage"
    assert with_text.message_annotations[Symbol("x-opt-jms-msg-type")] == Byte(5)
    assert empty.body_type == AMQP_VALUE and empty.body is None  # amqp-value null, not absent


@pytest.mark.parametrize(
    ("content_type", "raw", "text"),
    [
        ("text/plain", b"hello", "hello"),
        ("text/plain;charset=utf-8", "h\u00e9llo".encode(), "h\u00e9llo"),
        ("text/plain;charset=utf-16", "hello".encode("utf-16"), "hello"),
        ("text/other", b"<x/>", "<x/>"),
        ("application/json", b'{"a": 1}', '{"a": 1}'),
        ("application/xml", b"<a/>", "<a/>"),
    ],
)
def test_text_message_received_from_a_data_section_by_content_type(
    peer: TestPeer, content_type: str, raw: bytes, text: str
) -> None:
    pm = PMessage(body=raw, inferred=True, content_type=content_type)
    (m,) = _received(peer, pm)
    assert isinstance(m, TextMessage) and m.get_text() == text


def test_text_message_received_as_amqp_value_string_or_null(peer: TestPeer) -> None:
    value, null = _received(peer, _typed("text", 5), PMessage(body=None, annotations={"x": 1}))
    assert isinstance(value, TextMessage) and value.get_text() == "text"
    # no type annotation, an amqp-value null: the Message kind Qpid JMS picks for it
    assert isinstance(null, (TextMessage, ObjectMessage, Message)) and null.get_body(object) is None


# -- BytesMessageIntegrationTest -----------------------------------------------------------------
def test_bytes_message_is_sent_as_data_with_octet_stream(peer: TestPeer) -> None:
    b = BytesMessage()
    b.write_bytes(b"\x01\x02\x03")
    (s,) = _sent(peer, b)
    assert s.body_type == DATA and b"".join(s.body) == b"\x01\x02\x03"
    assert s.properties.content_type == "application/octet-stream"
    assert s.message_annotations[Symbol("x-opt-jms-msg-type")] == Byte(3)


@pytest.mark.parametrize("content_type", ["application/octet-stream", "", "unknown/type", None])
def test_bytes_message_received_from_data_without_type_annotation(
    peer: TestPeer, content_type: str | None
) -> None:
    pm = PMessage(body=b"\x00\x01payload", inferred=True)
    if content_type is not None:
        pm.content_type = content_type
    (m,) = _received(peer, pm)
    assert isinstance(m, BytesMessage) and m.get_body(bytes) == b"\x00\x01payload"


def test_bytes_message_from_amqp_value_binary_is_resent_as_data(peer: TestPeer) -> None:
    (m,) = _received(peer, _typed(b"\x05\x06", 3))
    assert isinstance(m, BytesMessage) and m.get_body(bytes) == b"\x05\x06"
    peer.expect_open()
    peer.expect_begin()
    (s,) = _sent(peer, m)
    assert s.body_type == DATA and b"".join(s.body) == b"\x05\x06"


# -- MapMessageIntegrationTest / StreamMessageIntegrationTest --------------------------------------
def test_map_message_round_trip_keeps_every_type(peer: TestPeer) -> None:
    mm = MapMessage()
    mm.set_boolean("b", True)
    mm.set_byte("y", 1)
    mm.set_int("i", 7)
    mm.set_long("l", 2**40)
    mm.set_double("d", 1.5)
    mm.set_string("s", "x")
    mm.set_bytes("bin", b"\x01")
    mm.set_char("c", "z")
    (s,) = _sent(peer, mm)
    assert s.body_type == AMQP_VALUE and isinstance(s.body, dict)
    assert s.message_annotations[Symbol("x-opt-jms-msg-type")] == Byte(2)
    assert type(s.body["y"]) is Byte and type(s.body["i"]) is Int and s.body["bin"] == b"\x01"
    pm = _typed({"s": "x", "i": 7, "bin": b"\x01", "nested-ok": True}, 2)
    peer.expect_open()
    peer.expect_begin()
    (m,) = _received(peer, pm)
    assert isinstance(m, MapMessage) and m.get_string("s") == "x" and m.get_long("i") == 7
    assert m.get_bytes("bin") == b"\x01" and m.get_boolean("nested-ok") is True


def test_stream_message_is_an_amqp_sequence_and_reads_a_list_value_too(peer: TestPeer) -> None:
    sm = StreamMessage()
    sm.write_string("a")
    sm.write_int(2)
    (s,) = _sent(peer, sm)
    assert s.body_type == AMQP_SEQUENCE and s.body == [["a", 2]]  # as Qpid JMS sends it
    peer.expect_open()
    peer.expect_begin()
    (m,) = _received(peer, _typed(["x", 3], 4))  # an amqp-value list is a stream too
    assert isinstance(m, StreamMessage) and m.read_string() == "x" and m.read_long() == 3


# -- ObjectMessageIntegrationTest ------------------------------------------------------------------
def test_object_message_sends_python_values_amqp_typed_and_java_objects_serialized(peer: TestPeer) -> None:
    java = JavaSerializedObject(b"\xac\xed\x00\x05t\x00\x03abc")
    typed, serialized, empty = _sent(peer, ObjectMessage({"k": [1, 2]}), ObjectMessage(java), ObjectMessage())
    assert typed.body_type == AMQP_VALUE and typed.body == {"k": [1, 2]}
    assert serialized.body_type == DATA
    assert serialized.properties.content_type == "application/x-java-serialized-object"
    assert b"".join(serialized.body) == java.data
    assert empty.body_type == AMQP_VALUE and empty.body is None
    msg_type = Symbol("x-opt-jms-msg-type")
    assert {x.message_annotations[msg_type] for x in (typed, serialized, empty)} == {Byte(1)}


def test_received_java_serialized_object_is_never_deserialized_implicitly(peer: TestPeer) -> None:
    raw = b"\xac\xed\x00\x05t\x00\x03abc"
    pm = PMessage(body=raw, inferred=True, content_type="application/x-java-serialized-object")
    (m,) = _received(peer, pm)
    obj = m.get_object()
    assert isinstance(m, ObjectMessage) and isinstance(obj, JavaSerializedObject) and obj.data == raw


# -- ForeignMessageIntegrationTest -----------------------------------------------------------------
def test_forwarding_a_received_message_gives_it_new_headers(peer: TestPeer) -> None:
    got: list[Transfer] = []
    peer.expect_attach()
    incoming = _typed(b"\x01\x02", 3, id="ID:original", address="q")
    peer.expect_flow(send=[incoming])
    peer.expect_disposition()  # scripted before it can arrive: the ack follows the receive at once
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(5000)
        assert m is not None
        peer.expect_attach(offer=10)
        peer.expect_transfer(got.append)
        peer.expect_transfer(got.append)
        p = s.create_producer(Queue("onward"))
        p.send(m)
        assert m.get_jms_message_id() != "ID:original" and m.get_jms_destination() == Queue("onward")
        p.set_delivery_delay(2000)
        p.send(m)
        peer.wait()
    first, delayed = (decode_sections(t.payload) for t in got)
    assert first.properties.message_id not in (None, "ID:original") and first.properties.to == "onward"
    assert b"".join(first.body) == b"\x01\x02"
    delivery_time = delayed.message_annotations[Symbol("x-opt-delivery-time")]
    assert delivery_time >= delayed.properties.creation_time + 2000


# -- MessageExpirationIntegrationTest --------------------------------------------------------------
def _expired() -> PMessage:
    pm = _typed("old", 5)
    pm.expiry_time = time.time() - 60  # absolute-expiry-time in the past
    return pm


def test_expired_message_is_filtered_and_settled_as_undeliverable(peer: TestPeer) -> None:
    seen: list[Any] = []
    peer.expect_attach()
    peer.expect_flow(send=[_expired(), _typed("fresh", 5)])
    peer.expect_disposition(seen.append)
    with _conn(peer) as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(5000)
        assert m is not None and m.get_text() == "fresh"
    assert seen and seen[0].state == 0x27 and seen[0].undeliverable  # modified, not delivered here


def test_expired_message_is_delivered_when_local_expiry_is_off(peer: TestPeer) -> None:
    (m,) = _received(peer, _expired(), options="&jms.localMessageExpiry=false")
    assert m.get_text() == "old" and 0 < m.get_jms_expiration() < time.time() * 1000


# -- MultiTransferFrameMessageIntegrationTest ------------------------------------------------------
def test_message_larger_than_a_frame_crosses_both_ways(peer: TestPeer) -> None:
    body = bytes(range(256)) * 64  # 16 KiB over 512-byte frames
    got: list[Transfer] = []
    peer.expect_attach()
    peer.expect_flow(send=[PMessage(body=body, inferred=True)])
    peer.expect_disposition()
    with _conn(peer, "&amqp.maxFrameSize=512") as conn:
        s = conn.create_session()
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(5000)
        assert m is not None and m.get_body(bytes) == body
        peer.expect_attach(offer=10)
        peer.expect_transfer(got.append)
        out = s.create_bytes_message()
        out.write_bytes(body)
        s.create_producer(Queue("big")).send(out)
        peer.wait()
    assert b"".join(decode_sections(got[0].payload).body) == body


# -- MessageIntegrationTest ------------------------------------------------------------------------
U = uuid.UUID("12345678-1234-5678-1234-567812345678")


@pytest.mark.parametrize(
    ("wire", "jms_id"),
    [
        ("ID:myid", "ID:myid"),
        ("myid", "ID:AMQP_NO_PREFIX:myid"),
        (U, f"ID:AMQP_UUID:{U}"),
        (ulong(123456789), "ID:AMQP_ULONG:123456789"),
        (b"\x01\x02\x0a", "ID:AMQP_BINARY:01020A"),
        (None, None),
    ],
)
def test_received_message_id_forms_and_resending_them_as_correlation_id(
    peer: TestPeer, wire: Any, jms_id: str | None
) -> None:
    pm = _typed("x", 5)
    if wire is not None:
        pm.id = wire
    (m,) = _received(peer, pm)
    assert m.get_jms_message_id() == jms_id
    if jms_id is None:
        return
    reply = TextMessage("r")
    reply.set_jms_correlation_id(jms_id)
    peer.expect_open()
    peer.expect_begin()
    (s,) = _sent(peer, reply)
    expected = ULong(int(wire)) if isinstance(wire, ulong) else wire
    assert s.properties.correlation_id == expected  # the original AMQP id, typed as it came
    assert Symbol("x-opt-app-correlation-id") not in s.message_annotations


@pytest.mark.parametrize(
    ("jms_cid", "wire", "app_specific"),
    [
        ("ID:corr", "ID:corr", False),
        ("app-corr", "app-corr", True),
        ("ID:AMQP_NO_PREFIX:plain", "plain", False),
        (f"ID:AMQP_UUID:{U}", U, False),
        ("ID:AMQP_ULONG:42", ULong(42), False),
        ("ID:AMQP_BINARY:0A0B", b"\x0a\x0b", False),
    ],
)
def test_sent_correlation_id_forms(peer: TestPeer, jms_cid: str, wire: Any, app_specific: bool) -> None:
    m = TextMessage("x")
    m.set_jms_correlation_id(jms_cid)
    (s,) = _sent(peer, m)
    assert s.properties.correlation_id == wire and type(s.properties.correlation_id) is type(wire)
    assert (s.message_annotations.get(Symbol("x-opt-app-correlation-id")) is True) == app_specific


def test_received_correlation_ids_and_app_specific_annotation(peer: TestPeer) -> None:
    app = _typed("a", 5, correlation_id="app-corr")
    app.annotations[symbol("x-opt-app-correlation-id")] = True
    msgs = _received(peer, _typed("s", 5, correlation_id="ID:corr"), app,
                     _typed("u", 5, correlation_id=U), _typed("l", 5, correlation_id=ulong(7)))
    assert [m.get_jms_correlation_id() for m in msgs] == ["ID:corr", "app-corr", f"ID:AMQP_UUID:{U}",
                                                          "ID:AMQP_ULONG:7"]


def test_application_properties_and_group_fields_both_ways(peer: TestPeer) -> None:
    m = TextMessage("x")
    m.set_int_property("count", 3)
    m.set_string_property("JMSXGroupID", "g1")
    m.set_int_property("JMSXGroupSeq", 5)
    m.set_string_property("JMS_AMQP_REPLY_TO_GROUP_ID", "rg")
    (s,) = _sent(peer, m)
    assert s.application_properties == {"count": 3}  # the JMSX/JMS_AMQP ones go in AMQP fields
    pr = s.properties
    assert (pr.group_id, pr.group_sequence, pr.reply_to_group_id) == ("g1", 5, "rg")
    pm = _typed("y", 5, group_id="g2", group_sequence=2**32 - 1, reply_to_group_id="rg2",
                properties={"p": "v"})
    peer.expect_open()
    peer.expect_begin()
    (r,) = _received(peer, pm)
    assert r.get_string_property("JMSXGroupID") == "g2"
    assert r.get_int_property("JMSXGroupSeq") == -1  # a uint above 2^31-1 wraps as Qpid JMS reads it
    assert r.get_string_property("JMS_AMQP_REPLY_TO_GROUP_ID") == "rg2" and r.get_string_property("p") == "v"


def test_received_destinations_without_to_or_annotations(peer: TestPeer) -> None:
    no_to = _typed("a", 5)
    legacy = _typed("b", 5, address="t2", reply_to="r2")
    legacy.annotations[symbol("x-opt-to-type")] = "topic"
    legacy.annotations[symbol("x-opt-reply-type")] = "temporary,queue"
    msgs = _received(peer, no_to, legacy, dest=Topic("t"))
    assert msgs[0].get_jms_destination() == Topic("t") and msgs[0].get_jms_reply_to() is None
    assert msgs[1].get_jms_destination() == Topic("t2")
    assert msgs[1].get_jms_reply_to().is_temporary and msgs[1].get_jms_reply_to().name == "r2"


@pytest.mark.parametrize("kind", ["long", "timestamp", "ulong", "absent"])
def test_received_delivery_time_annotation_forms(peer: TestPeer, kind: str) -> None:
    created, at = 1_700_000_000_000, 1_700_000_005_000
    pm = _typed("x", 5, creation_time=created / 1000)
    value = {"long": at, "timestamp": timestamp(at), "ulong": ulong(at), "absent": None}[kind]
    if value is not None:
        pm.annotations[symbol("x-opt-delivery-time")] = value
    (m,) = _received(peer, pm)
    assert m.get_jms_delivery_time() == (created if kind == "absent" else at)


def test_sent_destination_type_annotations(peer: TestPeer) -> None:
    m = TextMessage("x")
    m.set_jms_reply_to(Topic("r"))
    (s,) = _sent(peer, m, dest=Topic("t"))
    ma = s.message_annotations
    assert (ma[Symbol("x-opt-jms-dest")], ma[Symbol("x-opt-jms-reply-to")]) == (Byte(1), Byte(1))
    assert (s.properties.to, s.properties.reply_to) == ("t", "r")



def test_expired_message_is_filtered_for_a_message_listener_too(peer: TestPeer) -> None:
    import threading

    got: list[Any] = []
    arrived = threading.Event()

    def listener(m: Any) -> None:
        got.append(m.get_text())
        arrived.set()

    peer.expect_attach()
    peer.expect_flow(send=[_expired(), _typed("fresh", 5)])
    peer.expect_disposition(lambda d: d.undeliverable)  # the expired one, never handed over
    peer.expect_disposition(lambda d: d.state == 0x24)  # the fresh one, accepted
    with _conn(peer) as conn:
        s = conn.create_session()
        s.create_consumer(Queue("q")).set_message_listener(listener)
        conn.start()
        assert arrived.wait(5)
        peer.wait()
    assert got == ["fresh"]


def test_bytes_message_resent_after_a_partial_read_and_reset(peer: TestPeer) -> None:
    (m,) = _received(peer, _typed(b"\x01\x02\x03\x04", 3))
    assert m.read_byte() == 1  # a partial read leaves the body as it arrived
    m.reset()
    peer.expect_open()
    peer.expect_begin()
    (s,) = _sent(peer, m)
    assert b"".join(s.body) == b"\x01\x02\x03\x04"
