"""Destinations on messages (wd06 5.1, early draft 6): type annotations, legacy annotations,
consumer-derived types and the peer's address prefixes."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms.destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from amqp_jms.mapping import MappingContext, decode, encode
from amqp_jms.mapping.codec import Properties, decode_sections, encode_sections
from amqp_jms.message import Message, TextMessage
from amqp_jms.message._data import restore, snapshot
from amqp_jms.types import Byte, Symbol

DEST = Symbol("x-opt-jms-dest")
REPLY = Symbol("x-opt-jms-reply-to")
TO_TYPE = Symbol("x-opt-to-type")
REPLY_TYPE = Symbol("x-opt-reply-type")
PREFIXES = MappingContext(queue_prefix="queue://", topic_prefix="topic://")


def received(to: str | None, reply_to: str | None = None, ma: dict[Any, Any] | None = None,
             ctx: MappingContext | None = None) -> Message:  # fmt: skip
    data = encode_sections(message_annotations=ma, properties=Properties(to=to, reply_to=reply_to))
    return decode(data, context=ctx)


@pytest.mark.parametrize(
    ("dest", "byte"),
    [(Queue("a"), 0), (Topic("a"), 1), (TemporaryQueue("a"), 2), (TemporaryTopic("a"), 3)],
)
def test_destination_type_annotations_are_bytes_0_to_3(dest: Destination, byte: int) -> None:
    m = TextMessage("x")
    m.set_jms_destination(dest)
    m.set_jms_reply_to(dest)
    s = decode_sections(encode(m))
    assert s.message_annotations is not None
    for key in (DEST, REPLY):
        assert s.message_annotations[key] == byte and type(s.message_annotations[key]) is Byte
    assert s.properties is not None and s.properties.to == "a" and s.properties.reply_to == "a"
    r = received("a", "a", {DEST: Byte(byte), REPLY: Byte(byte)})
    assert r.get_jms_destination() == dest and type(r.get_jms_destination()) is type(dest)
    assert r.get_jms_reply_to() == dest and type(r.get_jms_reply_to()) is type(dest)


def test_no_reply_to_annotation_without_reply_to() -> None:
    m = TextMessage("x")
    m.set_jms_destination(Queue("q"))
    s = decode_sections(encode(m))
    assert s.message_annotations is not None and REPLY not in s.message_annotations


@pytest.mark.parametrize(
    ("legacy", "cls"),
    [
        ("queue", Queue),
        ("topic", Topic),
        ("queue,temporary", TemporaryQueue),
        ("temporary,topic", TemporaryTopic),
        (" topic , temporary ", TemporaryTopic),
        ("Queue", Queue),
    ],
)
def test_legacy_type_annotations_are_understood(legacy: str, cls: type[Destination]) -> None:
    r = received("a", "b", {TO_TYPE: legacy, REPLY_TYPE: legacy})
    assert type(r.get_jms_destination()) is cls and r.get_jms_destination() == cls("a")
    assert type(r.get_jms_reply_to()) is cls


def test_legacy_type_annotations_are_never_sent() -> None:
    r = received("a", "b", {TO_TYPE: "topic", REPLY_TYPE: "queue"})
    m = restore(snapshot(r))
    s = decode_sections(encode(m))
    assert s.message_annotations is not None
    assert TO_TYPE not in s.message_annotations and REPLY_TYPE not in s.message_annotations
    assert s.message_annotations[DEST] == 1 and s.message_annotations[REPLY] == 0


@pytest.mark.parametrize(
    ("consumer", "cls"),
    [(None, Queue), (Queue("c"), Queue), (Topic("c"), Topic), (TemporaryTopic("c"), TemporaryTopic)],
)
def test_without_annotations_the_type_comes_from_the_consumer(
    consumer: Destination | None, cls: type
) -> None:
    r = received("a", "b", ctx=MappingContext(consumer_destination=consumer))
    assert type(r.get_jms_destination()) is cls
    assert type(r.get_jms_reply_to()) is cls


def test_new_annotation_wins_over_legacy_one() -> None:
    r = received("a", None, {DEST: Byte(1), TO_TYPE: "queue"})
    assert type(r.get_jms_destination()) is Topic


@pytest.mark.parametrize(
    ("dest", "address"),
    [
        (Queue("q"), "queue://q"),
        (Topic("t"), "topic://t"),
        (TemporaryQueue("tq"), "tq"),
        (TemporaryTopic("tt"), "tt"),
    ],
)
def test_peer_prefixes_are_added_on_send_and_stripped_on_receive(dest: Destination, address: str) -> None:
    m = TextMessage("x")
    m.set_jms_destination(dest)
    m.set_jms_reply_to(dest)
    s = decode_sections(encode(m, context=PREFIXES))
    assert s.properties is not None and s.properties.to == address and s.properties.reply_to == address
    r = decode(encode(m, context=PREFIXES), context=PREFIXES)
    assert r.get_jms_destination() == dest and r.get_jms_reply_to() == dest


def test_prefix_of_a_temporary_destination_is_not_stripped() -> None:
    r = received("queue://x", None, {DEST: Byte(2)}, PREFIXES)
    assert r.get_jms_destination() == TemporaryQueue("queue://x")


def test_address_without_the_prefix_is_kept_whole() -> None:
    r = received("plain", None, {DEST: Byte(0)}, PREFIXES)
    assert r.get_jms_destination() == Queue("plain")


def test_missing_to_gives_the_consumer_destination() -> None:
    ctx = MappingContext(consumer_destination=Topic("news"))
    assert received(None, "r", ctx=ctx).get_jms_destination() == Topic("news")
    assert received(None, "r").get_jms_destination() is None


def test_address_for_prefixes_by_kind_once_and_never_a_temporary() -> None:
    from amqp_jms.mapping.destinations import address_for

    qp, tp = "queue://", "topic://"
    assert address_for(Queue("q"), qp, tp) == "queue://q"
    assert address_for(Topic("t"), qp, tp) == "topic://t"
    assert address_for(Topic("topic://t"), qp, tp) == "topic://t"  # no double prefix
    assert address_for(Queue("topic://x"), qp, tp) == "queue://topic://x"  # only its own kind's
    assert address_for(TemporaryQueue("temp-queue://ID:1"), qp, tp) == "temp-queue://ID:1"
    assert address_for(TemporaryTopic("ID:2"), qp, tp) == "ID:2"
    assert address_for(Queue("q"), None, None) == "q"
