# ruff: noqa: E501  (the case table reads better one case per block)
"""Cross-stack: messages encoded by rhea (JavaScript, shares no code with proton or us) decode to
the JMS messages the mapping says, and rhea reads what we encode.

The rhea side is tests/interop/mapping_codec.js; one node run encodes the whole table."""

from __future__ import annotations

import types
import uuid
from typing import Any

import pytest

from amqp_jms.destination import Queue, TemporaryTopic, Topic
from amqp_jms.mapping import MappingContext, decode, encode
from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Byte, Char, Float, Int, Short, UInt, ULong

pytestmark = pytest.mark.rhea

CTX = MappingContext(queue_prefix="queue://", topic_prefix="topic://", now_ms=1_000_000)
U = uuid.UUID("12345678-1234-5678-1234-567812345678")


def t(kind: str, v: Any) -> dict[str, Any]:
    return {"$t": kind, "v": v}


def ann(**kv: Any) -> dict[str, Any]:
    return {k.replace("_", "-"): v for k, v in kv.items()}


# name -> (rhea message fields, check of the decoded JMS message)
CASES: dict[str, tuple[dict[str, Any], Any]] = {
    "text": (
        {"durable": True, "priority": 7, "message_id": "ID:rhea-1", "to": "queue://orders", "subject": "order",
         "creation_time": 1_700_000_000_000, "message_annotations": ann(x_opt_jms_msg_type=t("byte", 5),
                                                                        x_opt_jms_dest=t("byte", 0)),
         "application_properties": {"i": t("int", -5), "l": t("long", 2**40), "b": t("byte", 7),
                                    "s": t("short", 300), "f": t("float", 1.5), "d": 2.25, "ok": True,
                                    "str": "v", "u": t("uint", 9)},
         "body": "héllo rhea"},
        lambda m: (isinstance(m, TextMessage) and m.get_text() == "héllo rhea"
                   and m.get_jms_delivery_mode() == 2 and m.get_jms_priority() == 7
                   and m.get_jms_message_id() == "ID:rhea-1" and m.get_jms_destination() == Queue("orders")
                   and m.get_jms_type() == "order" and m.get_jms_timestamp() == 1_700_000_000_000
                   and m.get_jms_delivery_time() == 1_700_000_000_000
                   and [(type(m.get_object_property(k)), m.get_object_property(k)) for k in
                        ("i", "l", "b", "s", "f", "d", "ok", "str", "u")]
                   == [(Int, -5), (int, 2**40), (Byte, 7), (Short, 300), (Float, 1.5), (float, 2.25),
                       (bool, True), (str, "v"), (UInt, 9)]),
    ),
    "bytes": (
        {"content_type": "application/octet-stream", "message_annotations": ann(x_opt_jms_msg_type=t("byte", 3)),
         "body": {"$section": "data", "v": ["00ff10"]}},
        lambda m: isinstance(m, BytesMessage) and view(m).body == b"\x00\xff\x10",
    ),
    "bytes_multiple_data_sections": (
        {"body": {"$section": "data", "v": ["0102", "", "03"]}},
        lambda m: isinstance(m, BytesMessage) and view(m).body == b"\x01\x02\x03",
    ),
    "map": (
        {"message_annotations": ann(x_opt_jms_msg_type=t("byte", 2)),
         "body": t("map", {"c": t("char", ord("é")), "b": t("byte", -1), "s": t("short", 2), "i": t("int", 3),
                           "l": t("long", 4), "f": t("float", 0.5), "d": 0.25, "bin": t("binary", "beef"),
                           "str": "x", "t": True})},
        lambda m: (isinstance(m, MapMessage)
                   and {k: (type(v), v) for k, v in view(m).body.items()}
                   == {"c": (Char, "é"), "b": (Byte, -1), "s": (Short, 2), "i": (Int, 3), "l": (int, 4),
                       "f": (Float, 0.5), "d": (float, 0.25), "bin": (bytes, b"\xbe\xef"), "str": (str, "x"),
                       "t": (bool, True)}),
    ),
    "stream": (
        {"message_annotations": ann(x_opt_jms_msg_type=t("byte", 4)),
         "body": {"$section": "sequence", "v": [[t("int", 1), "two"], [t("char", 51)]]}},
        lambda m: isinstance(m, StreamMessage) and view(m).body == [1, "two", "3"] and type(view(m).body[2]) is Char,
    ),
    "object_without_annotation": (
        {"body": t("list", [t("ulong", 5), "x", t("uuid", U.hex)])},
        lambda m: isinstance(m, ObjectMessage) and view(m).body == [ULong(5), "x", U],
    ),
    "json_text_without_annotation": (
        {"content_type": "application/json; charset=utf-8", "body": {"$section": "data", "v": ["7b2261223a317d"]}},
        lambda m: isinstance(m, TextMessage) and m.get_text() == '{"a":1}',
    ),
    "empty_text_data": (
        {"content_type": "text/plain", "body": {"$section": "data", "v": [""]}},
        lambda m: isinstance(m, TextMessage) and m.get_text() == "",
    ),
    "binary_value_is_bytes": (
        {"body": t("binary", "0a0b")},
        lambda m: isinstance(m, BytesMessage) and view(m).body == b"\x0a\x0b",
    ),
    "legacy_destination_types": (
        {"to": "tmp-1", "reply_to": "topic://news",
         "message_annotations": ann(x_opt_to_type="topic , temporary", x_opt_reply_type="topic")},
        lambda m: m.get_jms_destination() == TemporaryTopic("tmp-1") and m.get_jms_reply_to() == Topic("news"),
    ),
    "typed_ids": (
        {"message_id": t("ulong", 42), "correlation_id": t("uuid", U.hex)},
        lambda m: m.get_jms_message_id() == "ID:AMQP_ULONG:42" and m.get_jms_correlation_id() == f"ID:AMQP_UUID:{U}",
    ),
    "binary_and_string_ids": (
        {"message_id": "no-prefix", "correlation_id": t("binary", "0a0b")},
        lambda m: (m.get_jms_message_id() == "ID:AMQP_NO_PREFIX:no-prefix"
                   and m.get_jms_correlation_id() == "ID:AMQP_BINARY:0A0B"),
    ),
    "app_correlation_id": (
        {"correlation_id": "ID:looks-like-one", "message_annotations": ann(x_opt_app_correlation_id=True)},
        lambda m: m.get_jms_correlation_id() == "ID:looks-like-one",
    ),
    "ttl_only_expiration_and_redelivery": (
        {"ttl": 5000, "delivery_count": 3, "priority": 200},
        lambda m: (m.get_jms_expiration() == 1_005_000 and m.get_jms_redelivered()
                   and m.get_int_property("JMSXDeliveryCount") == 4 and m.get_jms_priority() == 9),
    ),
    "group_and_vendor_fields": (
        {"group_id": "g", "group_sequence": 2**32 - 1, "user_id": t("binary", "6a6f"), "first_acquirer": True,
         "content_encoding": "gzip", "reply_to_group_id": "rg", "absolute_expiry_time": 77},
        lambda m: (m.get_int_property("JMSXGroupSeq") == -1 and m.get_string_property("JMSXGroupID") == "g"
                   and m.get_string_property("JMSXUserID") == "jo"
                   and m.get_boolean_property("JMS_AMQP_FIRST_ACQUIRER")
                   and m.get_string_property("JMS_AMQP_CONTENT_ENCODING") == "gzip"
                   and m.get_string_property("JMS_AMQP_REPLY_TO_GROUP_ID") == "rg"
                   and m.get_jms_expiration() == 77),
    ),
    "plain_message_with_delivery_time": (
        {"creation_time": 1000, "message_annotations": ann(x_opt_jms_msg_type=t("byte", 0),
                                                          x_opt_delivery_time=t("timestamp", 9000))},
        lambda m: type(m) is Message and m.get_jms_delivery_time() == 9000,
    ),
}  # fmt: skip


def _ours() -> dict[str, Message]:
    text = TextMessage("from python")
    text.set_jms_message_id("ID:py-1")
    text.set_jms_destination(Queue("orders"))
    text.set_jms_reply_to(TemporaryTopic("tmp"))
    text.set_jms_priority(8)
    text = with_properties(text, {"i": Int(3), "f": Float(2.5), "c": "x"})
    mp = MapMessage({"c": Char("z"), "b": b"\x01", "i": Int(1)})
    mp.set_jms_correlation_id("app-corr")
    return {"text": text, "map": mp, "bytes": BytesMessage(b"\x07\x08"), "stream": StreamMessage([Short(1), "s"])}


@pytest.fixture(scope="module")
def rhea_run(request: pytest.FixtureRequest) -> Any:
    from amqp_jms.testing import rhea

    reason = rhea.unavailable_reason()
    if reason is not None:
        pytest.skip(f"rhea unavailable: {reason}")
    ours = {name: encode(m, context=CTX).hex() for name, m in _ours().items()}
    return rhea.run(
        "mapping_codec.js",
        {
            "encode": [{"name": name, "msg": msg} for name, (msg, _) in CASES.items()],
            "decode": [{"name": name, "hex": h} for name, h in ours.items()],
        },
        timeout=60,
    )


@pytest.mark.parametrize("name", list(CASES))
def test_rhea_encoded_message_decodes_per_the_mapping(rhea_run: Any, name: str) -> None:
    data = bytes.fromhex(rhea_run["encoded"][name])
    m = decode(data, context=CTX)
    assert CASES[name][1](m), f"{name}: {m!r}"


def test_rhea_reads_what_we_encode(rhea_run: Any, rhea: types.ModuleType) -> None:
    got = rhea_run["decoded"]
    text = got["text"]
    assert text["body"] == "from python"
    assert text["message_id"] == "ID:py-1" and text["to"] == "queue://orders" and text["reply_to"] == "tmp"
    assert text["durable"] is True and text["priority"] == 8
    assert text["message_annotations"] == {"x-opt-jms-msg-type": 5, "x-opt-jms-dest": 0, "x-opt-jms-reply-to": 3}
    assert text["application_properties"] == {"i": 3, "f": 2.5, "c": "x"}
    mp = got["map"]
    assert mp["body"] == {"c": ord("z"), "b": {"binary": "01"}, "i": 1}  # rhea reads a char as its code point
    assert mp["correlation_id"] == "app-corr"
    assert mp["message_annotations"]["x-opt-app-correlation-id"] is True
    assert got["bytes"]["body"] == {"section": 0x75, "content": {"binary": "0708"}, "multiple": False}
    assert got["bytes"]["content_type"] == "application/octet-stream"
    assert got["stream"]["body"] == {"section": 0x76, "content": [1, "s"], "multiple": False}
