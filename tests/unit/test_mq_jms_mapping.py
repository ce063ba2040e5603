"""The JMS <-> MQ mapping, one test per rule of IBM's outgoing/incoming tables (and our choices)."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from mq_samples import HEX_ID, six, view

from amqp_jms.destination import Queue, TemporaryQueue, Topic
from amqp_jms.exceptions import MessageNotWriteableException
from amqp_jms.message import (
    BytesMessage,
    JavaSerializedObject,
    ObjectMessage,
    TextMessage,
)
from amqp_jms.message._data import view as data_of
from amqp_jms.mq import MQMD, MQRFH2, MQFormatError, from_mq, from_mq_bytes, parse_headers, to_mq
from amqp_jms.mq.xmlfolder import Element, parse_folder
from amqp_jms.testing.messages import with_fields, with_properties
from amqp_jms.types import Int


def folders(mq: Any) -> dict[str, Element]:
    parsed = parse_headers(mq.data, mq.md.encoding, mq.md.coded_char_set_id, mq.md.format)
    out: dict[str, Element] = {}
    for h in parsed.headers:
        for text in h.folder_texts():
            root = parse_folder(text)
            out[root.name] = root
    return out


def jms(mq: Any, name: str) -> str | None:
    el = folders(mq).get("jms")
    child = el.child(name) if el is not None else None
    return child.text if child is not None else None


@pytest.mark.parametrize("encoding", ["native", "big", "little"])
@pytest.mark.parametrize("index", range(6))
def test_six_types_round_trip_jms_mq_jms(index: int, encoding: str) -> None:
    m = six()[index]
    if isinstance(m, BytesMessage):
        m = with_fields(m, body=b"\x00\x01binary\xff")
    mq = to_mq(m, encoding=encoding)
    back = from_mq_bytes(mq.to_bytes())
    assert view(back) == view(m)
    assert back.get_int_property("JMSXDeliveryCount") == 1 and data_of(back).redelivered is False


def test_received_message_is_read_only() -> None:
    back = from_mq_bytes(to_mq(TextMessage("x")).to_bytes())
    with pytest.raises(MessageNotWriteableException, match=r"read-only"):
        back.set_string_property("a", "b")
    with pytest.raises(MessageNotWriteableException):
        back.set_text("y")  # type: ignore[attr-defined]


# ---------------------------------------------------------------- outgoing, header by header


def test_destination_to_jms_dst_uri() -> None:
    m = TextMessage("x")
    m.set_jms_destination(Queue("ORDERS"))
    assert jms(to_mq(m), "Dst") == "queue:///ORDERS"
    assert jms(to_mq(m, queue_manager="QM1"), "Dst") == "queue://QM1/ORDERS"
    m.set_jms_destination(Topic("prices/eur"))
    assert jms(to_mq(m), "Dst") == "topic://prices/eur"
    m.set_jms_destination(TemporaryQueue("AMQ.TMP"))
    mq = to_mq(m)
    assert jms(mq, "Dst") == "queue:///AMQ.TMP?temporary=true"
    assert data_of(from_mq(mq.md, mq.data)).destination == TemporaryQueue("AMQ.TMP")


def test_reply_to_queue_sets_mqmd_and_rto_and_request_type() -> None:
    m = TextMessage("x")
    m.set_jms_reply_to(Queue("REPLY.Q"))
    mq = to_mq(m, queue_manager="QM1")
    assert (mq.md.reply_to_q, mq.md.reply_to_q_mgr, mq.md.msg_type) == ("REPLY.Q", "QM1", 1)
    assert jms(mq, "Rto") == "queue://QM1/REPLY.Q"
    back = from_mq(mq.md, mq.data)
    assert data_of(back).reply_to == Queue("REPLY.Q") and data_of(back).extra == {"mq.reply_to_q_mgr": "QM1"}
    assert to_mq(back).md.reply_to_q_mgr == "QM1"  # the queue manager survives a re-send


def test_reply_to_topic_is_rfh2_only_and_datagram() -> None:
    m = TextMessage("x")
    m.set_jms_reply_to(Topic("answers"))
    mq = to_mq(m)
    assert (mq.md.reply_to_q, mq.md.msg_type, jms(mq, "Rto")) == ("", 8, "topic://answers")


@pytest.mark.parametrize(("mode", "persistence"), [(2, 1), (1, 0)])
def test_delivery_mode_to_persistence_and_dlv(mode: int, persistence: int) -> None:
    m = TextMessage("x")
    m.set_jms_delivery_mode(mode)
    mq = to_mq(m)
    assert mq.md.persistence == persistence and jms(mq, "Dlv") == str(mode)


def test_expiration_unlimited() -> None:
    m = TextMessage("x")
    m.set_jms_timestamp(1_000_000)
    mq = to_mq(m)
    assert mq.md.expiry == -1 and jms(mq, "Exp") is None


def test_expiration_in_tenths_with_exp() -> None:
    m = TextMessage("x")
    m.set_jms_timestamp(1_000_000)
    m.set_jms_expiration(1_060_050)
    mq = to_mq(m)
    assert mq.md.expiry == 601 and jms(mq, "Exp") == "1060050"  # 60.05 s rounds up to 601 tenths


def test_expiration_beyond_mqlong_tenths_is_unlimited_with_true_exp() -> None:
    m = TextMessage("x")
    m.set_jms_timestamp(1_000_000)
    m.set_jms_expiration(data_of(m).timestamp + 214_748_364_800)  # TTL 214748364.8 s > 214748364.7 s
    mq = to_mq(m)
    assert mq.md.expiry == -1 and jms(mq, "Exp") == str(data_of(m).expiration)
    assert data_of(from_mq(mq.md, mq.data)).expiration == data_of(m).expiration
    m.set_jms_expiration(data_of(m).timestamp + 214_748_364_700)  # exactly the limit still fits
    assert to_mq(m).md.expiry == 2**31 - 1


def test_priority_and_pri_only_when_not_default() -> None:
    m = TextMessage("x")
    mq = to_mq(m)
    assert mq.md.priority == 4 and jms(mq, "Pri") is None
    m.set_jms_priority(9)
    mq = to_mq(m)
    assert mq.md.priority == 9 and jms(mq, "Pri") == "9"


def test_message_id_provider_form_is_msgid() -> None:
    m = TextMessage("x")
    m.set_jms_message_id(HEX_ID)
    mq = to_mq(m)
    assert mq.md.msg_id == bytes.fromhex(HEX_ID[3:]) and "ajms" not in folders(mq)
    assert data_of(from_mq(mq.md, mq.data)).message_id == HEX_ID


def test_other_message_ids_are_kept_whole() -> None:
    m = TextMessage("x")
    m.set_jms_message_id("ID:qpid-jms:1:1:1-1")
    mq = to_mq(m)
    assert len(mq.md.msg_id) == 24 and any(mq.md.msg_id)
    assert data_of(from_mq(mq.md, mq.data)).message_id == "ID:qpid-jms:1:1:1-1"


def test_timestamp_to_tms_and_put_date_time() -> None:
    m = TextMessage("x")
    m.set_jms_timestamp(1_763_748_000_456)  # 2025-11-21 18:00:00.456 UTC
    mq = to_mq(m)
    assert jms(mq, "Tms") == "1763748000456"
    assert (mq.md.put_date, mq.md.put_time) == ("20251121", "18000045")


def test_jms_type_to_mcd() -> None:
    m = TextMessage("x")
    m.set_jms_type("Invoice")
    mcd = folders(to_mq(m))["mcd"]
    assert mcd.child("Msd").text == "jms_text" and mcd.child("Type").text == "Invoice"  # type: ignore[union-attr]
    m.set_jms_type("mcd://jms_text/MySet/MyType?format=XML")
    mq = to_mq(m)
    mcd = folders(mq)["mcd"]
    assert [(c.name, c.text) for c in mcd.children] == [
        ("Msd", "jms_text"), ("Set", "MySet"), ("Type", "MyType"), ("Fmt", "XML")]  # fmt: skip
    assert data_of(from_mq(mq.md, mq.data)).type == data_of(m).type
    m.set_jms_type("mcd://other/S/T")  # not this message's domain: kept whole in Type
    assert from_mq(*_md_data(to_mq(m))).get_jms_type() == "mcd://other/S/T"


def _md_data(mq: Any) -> tuple[MQMD, bytes]:
    return mq.md, mq.data


def test_correlation_id_provider_form() -> None:
    m = TextMessage("x")
    m.set_jms_correlation_id(HEX_ID)
    mq = to_mq(m)
    assert mq.md.correl_id == bytes.fromhex(HEX_ID[3:]) and jms(mq, "Cid") is None
    assert data_of(from_mq(mq.md, mq.data)).correlation_id == HEX_ID


def test_correlation_id_bytes_padded_or_truncated() -> None:
    m = TextMessage("x")
    m.set_jms_correlation_id_as_bytes(b"\x01\x02")
    mq = to_mq(m)
    assert mq.md.correl_id == b"\x01\x02" + bytes(22) and jms(mq, "Cid") is None
    # IBM hands a received CorrelId back as ID: + hex
    assert data_of(from_mq(mq.md, mq.data)).correlation_id == "ID:0102" + "00" * 22
    m.set_jms_correlation_id_as_bytes(bytes(range(30)))
    assert to_mq(m).md.correl_id == bytes(range(24))


def test_correlation_id_application_string() -> None:
    m = TextMessage("x")
    m.set_jms_correlation_id("a-very-long-application-correlation-id-é")
    mq = to_mq(m)
    assert jms(mq, "Cid") == data_of(m).correlation_id
    assert mq.md.correl_id == data_of(m).correlation_id.encode()[:24]
    assert data_of(from_mq(mq.md, mq.data)).correlation_id == data_of(m).correlation_id


def test_jmsx_properties_to_mqmd() -> None:
    m = TextMessage("x")
    m = with_properties(
        m,
        {"JMSXUserID": "alice", "JMSXAppID": "a" * 40, "JMSXGroupID": HEX_ID, "JMSXGroupSeq": Int(7)}
    )
    mq = to_mq(m)
    md = mq.md
    assert md.user_identifier == "alice" and md.put_appl_name == "a" * 28  # truncated to the field
    assert md.group_id == bytes.fromhex(HEX_ID[3:]) and md.msg_seq_number == 7 and md.msg_flags & 0x08
    assert jms(mq, "Gid") == HEX_ID and jms(mq, "Seq") == "7"
    assert "usr" not in folders(mq)


def test_jms_ibm_properties_to_mqmd() -> None:
    m = TextMessage("x")
    m = with_properties(m, {
        "JMS_IBM_Report_COA": Int(0x300), "JMS_IBM_Report_Exception": Int(0x01000000),
        "JMS_IBM_Report_Pass_Msg_ID": Int(0x80), "JMS_IBM_MsgType": Int(2), "JMS_IBM_Feedback": Int(256),
        "JMS_IBM_Format": "MYFMT", "JMS_IBM_PutApplType": Int(6), "JMS_IBM_Encoding": Int(273),
        "JMS_IBM_Character_Set": "ISO-8859-1", "JMS_IBM_PutDate": "20200101", "JMS_IBM_PutTime": "12000000",
        "JMS_IBM_Last_Msg_In_Group": True,
    })  # fmt: skip
    mq = to_mq(m)
    md = mq.md
    assert md.report == 0x300 | 0x01000000 | 0x80
    assert (md.msg_type, md.feedback, md.put_appl_type) == (2, 256, 6)
    assert (md.put_date, md.put_time) == ("20200101", "12000000")
    assert md.msg_flags == 0x10 | 0x08
    parsed = parse_headers(mq.data, md.encoding, md.coded_char_set_id, md.format)
    assert (parsed.format, parsed.encoding, parsed.coded_char_set_id) == ("MYFMT", 273, 819)
    assert parsed.body == b"x"
    back = from_mq(md, mq.data)
    for name, value in data_of(m).properties.items():
        if name not in ("JMS_IBM_PutDate", "JMS_IBM_PutTime"):
            assert data_of(back).properties[name] == value, name
    # an unstamped message takes its JMSTimestamp from PutDate/PutTime, as IBM's receiver does
    assert data_of(back).timestamp == 1_577_880_000_000 and "JMS_IBM_PutDate" not in data_of(back).properties


def test_bad_jms_ibm_property_types() -> None:
    m = TextMessage("x")
    m = with_properties(m, {"JMS_IBM_MsgType": "request"})
    with pytest.raises(MQFormatError, match="JMS_IBM_MsgType"):
        to_mq(m)


def test_usr_name_rules_enforced_on_write() -> None:
    m = TextMessage("x")
    m = with_properties(m, {"select": 1})
    m = with_properties(m, {"Between": 1})
    with pytest.raises(MQFormatError, match="'Between' is a selector keyword"):
        to_mq(m)


def test_delivery_time_in_mqext() -> None:
    m = TextMessage("x")
    m.set_jms_delivery_time(123456)
    mq = to_mq(m)
    assert folders(mq)["mqext"].child("Dlt").text == "123456"  # type: ignore[union-attr]


def test_null_bodies_stay_null() -> None:
    for m in (TextMessage(), ObjectMessage()):
        back = from_mq_bytes(to_mq(m).to_bytes())
        assert type(back) is type(m) and back.get_body(object) is None
    back = from_mq_bytes(to_mq(TextMessage("")).to_bytes())
    assert data_of(back).body == ""  # type: ignore[attr-defined]


def test_java_serialized_object_body_is_sent_as_is() -> None:
    raw = b"\xac\xed\x00\x05t\x00\x03abc"
    m = ObjectMessage()
    m = with_fields(m, body=JavaSerializedObject(raw))
    mq = to_mq(m)
    assert mq.data.endswith(raw) and "ajms" not in folders(mq)
    assert data_of(from_mq(mq.md, mq.data)).body == JavaSerializedObject(raw)  # type: ignore[attr-defined]


def test_target_client_mq_sends_no_rfh2() -> None:
    m = TextMessage("plain")
    m = with_properties(m, {"a": 1})
    mq = to_mq(m, target_client="mq")
    assert mq.data == b"plain" and mq.md.format == "MQSTR" and mq.md.coded_char_set_id == 1208
    back = from_mq(mq.md, mq.data)
    assert isinstance(back, TextMessage) and data_of(back).body == "plain"
    assert "a" not in data_of(back).properties


def test_text_body_in_another_ccsid() -> None:
    m = TextMessage("HELLO é")
    m = with_properties(m, {"JMS_IBM_Character_Set": "IBM037"})
    mq = to_mq(m)
    assert mq.data.endswith("HELLO é".encode("cp037"))
    back = from_mq(mq.md, mq.data)
    assert data_of(back).body == "HELLO é" and data_of(back).properties["JMS_IBM_Character_Set"] == "IBM037"  # type: ignore[attr-defined]


# ---------------------------------------------------------------- incoming


def rfh_data(*folder_xml: str, fmt: str = "MQSTR", body: bytes = b"", order: str = "<") -> bytes:
    r = MQRFH2(encoding=546 if order == "<" else 273, format=fmt, order=order)
    for x in folder_xml:
        r.add_folder(x)
    return r.pack() + body


def test_rfh2_values_win_over_mqmd() -> None:
    md = MQMD(format="MQHRF2", priority=1, persistence=0, correl_id=b"C" * 24, expiry=100, put_appl_type=28)
    data = rfh_data(
        "<mcd><Msd>jms_text</Msd></mcd>",
        "<jms><Pri>6</Pri><Dlv>2</Dlv><Cid>app-cid</Cid><Tms>5000</Tms><Exp>99999</Exp></jms>",
        body=b"x",
    )
    m = from_mq(md, data)
    d = data_of(m)
    assert (d.priority, d.delivery_mode, d.correlation_id, d.timestamp, d.expiration) == (
        6, 2, "app-cid", 5000, 99999)  # fmt: skip


def test_mqmd_alone_when_rfh2_is_silent() -> None:
    md = MQMD(format="MQSTR", priority=3, persistence=1, expiry=50, put_date="20251121", put_time="18000045",
              correl_id=b"\x01" * 24, put_appl_type=28, coded_char_set_id=1208)  # fmt: skip
    m = from_mq(md, b"text")
    assert isinstance(m, TextMessage) and data_of(m).body == "text"
    assert (data_of(m).priority, data_of(m).delivery_mode) == (3, 2)
    assert data_of(m).timestamp == 1_763_748_000_450 and data_of(m).expiration == data_of(m).timestamp + 5000
    assert data_of(m).correlation_id == "ID:" + "01" * 24
    assert "JMS_IBM_PutDate" not in data_of(m).properties  # implied by JMSTimestamp


def test_no_rfh2_non_string_format_is_bytes_message() -> None:
    md = MQMD(
        format="", put_appl_type=6, coded_char_set_id=819, user_identifier="mqm", put_appl_name="amqsput"
    )
    m = from_mq(md, b"\x00\x01")
    assert isinstance(m, BytesMessage) and data_of(m).body == b"\x00\x01"
    assert data_of(m).properties["JMSXUserID"] == "mqm" and data_of(m).properties["JMSXAppID"] == "amqsput"
    props = data_of(m).properties
    assert props["JMS_IBM_PutApplType"] == 6 and props["JMS_IBM_Character_Set"] == "ISO-8859-1"
    # MQPRI_PRIORITY_AS_Q_DEF -> JMS default priority; MQPER_PERSISTENCE_AS_Q_DEF -> NON_PERSISTENT
    # (MQ's default DEFPSIST(NO)): our choice, IBM's docs are silent for a message never put
    assert data_of(m).priority == 4 and data_of(m).delivery_mode == 1


def test_backout_count_gives_delivery_count_and_redelivered() -> None:
    md = MQMD(format="MQSTR", backout_count=2, put_appl_type=28)
    m = from_mq(md, b"x")
    assert data_of(m).properties["JMSXDeliveryCount"] == Int(3) and data_of(m).redelivered is True


def test_report_options_split_into_jms_ibm_report_properties() -> None:
    md = MQMD(format="MQSTR", report=0x07000000 | 0x100 | 0x40, msg_type=4, feedback=258, put_appl_type=28)
    m = from_mq(md, b"x")
    assert data_of(m).properties["JMS_IBM_Report_Exception"] == 0x07000000
    props = data_of(m).properties
    assert props["JMS_IBM_Report_COA"] == 0x100 and props["JMS_IBM_Report_Pass_Correl_ID"] == 0x40
    assert data_of(m).properties["JMS_IBM_MsgType"] == 4 and data_of(m).properties["JMS_IBM_Feedback"] == 258


def test_group_from_mqmd() -> None:
    md = MQMD(format="MQSTR", group_id=b"\x07" * 24, msg_seq_number=4, msg_flags=0x18, put_appl_type=28)
    m = from_mq(md, b"x")
    props = data_of(m).properties
    assert props["JMSXGroupID"] == "ID:" + "07" * 24 and props["JMSXGroupSeq"] == Int(4)
    assert data_of(m).properties["JMS_IBM_Last_Msg_In_Group"] is True


def test_unknown_folders_survive_mq_jms_mq() -> None:
    odd = "<mqps><Top>a/b</Top></mqps>"
    data = rfh_data("<mcd><Msd>jms_bytes</Msd></mcd>", odd, "<usr><k>v</k></usr>", fmt="", body=b"\x01")
    m = from_mq(MQMD(format="MQHRF2", put_appl_type=28), data)
    assert data_of(m).properties == {"k": "v", "JMSXDeliveryCount": Int(1)}
    again = to_mq(m)
    assert "mqps" in folders(again) and (odd.encode() + b" ") in again.data


def test_chained_rfh2_folders_are_all_read() -> None:
    first = MQRFH2(encoding=546, format="MQHRF2", order="<")
    first.add_folder("<usr><a dt='i4'>1</a></usr>")
    data = first.pack() + rfh_data("<mcd><Msd>jms_text</Msd></mcd>", "<usr><b>2</b></usr>", body=b"t")
    m = from_mq(MQMD(format="MQHRF2", put_appl_type=28), data)
    assert data_of(m).properties["a"] == 1 and data_of(m).properties["b"] == "2" and data_of(m).body == "t"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("folder", "match"),
    [
        ("<jms><Dlv>3</Dlv></jms>", "delivery mode 3"),
        ("<jms><Dst>ftp://x</Dst></jms>", "jms.Dst"),
        ("<jms><Tms>soon</Tms></jms>", "not an integer"),
        ("<usr><a dt='i4'>x</a></usr>", "not an i4"),
        ("<usr><a>", "well-formed"),
        ("<!DOCTYPE usr [<!ENTITY e 'boom'>]><usr><a>&e;</a></usr>", "document type declarations"),
        ("<usr><a>&e;</a></usr>", "undefined entity"),
    ],
)
def test_bad_folder_values_raise_mq_format_error(folder: str, match: str) -> None:
    with pytest.raises(MQFormatError, match=match):
        from_mq(MQMD(format="MQHRF2"), rfh_data("<mcd><Msd>jms_text</Msd></mcd>", folder))


def test_big_endian_message_from_bytes() -> None:
    md = MQMD(encoding=273, format="MQHRF2", coded_char_set_id=1208, put_appl_type=28)
    raw = md.pack() + rfh_data("<mcd><Msd>jms_text</Msd></mcd>", body=b"BE", order=">")
    assert struct.unpack(">i", raw[4:8])[0] == 2
    m = from_mq_bytes(raw)
    assert data_of(m).body == "BE" and "JMS_IBM_Encoding" not in data_of(m).properties  # type: ignore[attr-defined]


def test_from_mq_rejects_wrong_argument_types() -> None:
    with pytest.raises(MQFormatError):
        from_mq(b"x", b"")  # type: ignore[arg-type]
    with pytest.raises(MQFormatError):
        from_mq_bytes("text")  # type: ignore[arg-type]


def test_mqps_topic_is_the_destination_when_jms_dst_is_absent() -> None:
    data = rfh_data("<mcd><Msd>jms_text</Msd></mcd>", "<mqps><Top>prices/eur</Top></mqps>", body=b"1.08")
    m = from_mq(MQMD(format="MQHRF2", put_appl_type=28), data)
    assert data_of(m).destination == Topic("prices/eur")
    assert b"<mqps><Top>prices/eur</Top></mqps>" in to_mq(m).data  # and the folder goes back out
    with_dst = rfh_data("<jms><Dst>topic://other</Dst></jms>", "<mqps><Top>prices/eur</Top></mqps>")
    assert data_of(from_mq(MQMD(format="MQHRF2"), with_dst)).destination == Topic("other")  # jms.Dst wins


def test_plain_message_with_undefined_encoding_still_reads() -> None:
    m = from_mq(MQMD(format="MQSTR", encoding=0, put_appl_type=28), b"text")
    assert data_of(m).body == "text"  # type: ignore[attr-defined]
    with pytest.raises(MQFormatError, match=r"MQMD\.Encoding.*names no integer byte order"):
        from_mq(MQMD(format="MQHRF2", encoding=0), rfh_data("<mcd><Msd>jms_text</Msd></mcd>"))


def test_long_reply_queue_name_goes_in_rto_only() -> None:
    m = TextMessage("x")
    m.set_jms_reply_to(Queue("R" * 60))
    mq = to_mq(m)
    assert mq.md.reply_to_q == "" and jms(mq, "Rto") == "queue:///" + "R" * 60
    assert data_of(from_mq(mq.md, mq.data)).reply_to == Queue("R" * 60)


def test_amqp_only_property_types_widen_to_jms_types() -> None:
    from amqp_jms.types import Short, Symbol, UByte, UInt, UShort

    m = TextMessage("x")
    m = with_properties(
        m, {"ub": UByte(200), "us": UShort(60000), "ui": UInt(4_000_000_000), "sy": Symbol("s")})
    back = from_mq(*_md_data(to_mq(m)))
    assert data_of(back).properties["ub"] == 200 and type(data_of(back).properties["ub"]) is Short
    assert data_of(back).properties["us"] == 60000 and type(data_of(back).properties["us"]) is Int
    assert data_of(back).properties["ui"] == 4_000_000_000 and type(data_of(back).properties["ui"]) is int
    assert data_of(back).properties["sy"] == "s" and type(data_of(back).properties["sy"]) is str


def test_unstamped_message_ttl_counts_from_now() -> None:
    import time

    m = TextMessage("x")
    m.set_jms_expiration(int(time.time() * 1000) + 30_000)
    expiry = to_mq(m).md.expiry
    assert 290 <= expiry <= 301  # 30 s in tenths, less the time this test took


def test_jms_folder_values_with_or_without_dt() -> None:
    for tms in ("<Tms>5000</Tms>", "<Tms dt='i8'>5000</Tms>", '<Tms dt="int">5000</Tms>'):
        data = rfh_data("<mcd><Msd>jms_text</Msd></mcd>", f"<jms>{tms}<Pri dt='i4'>3</Pri></jms>", body=b"x")
        m = from_mq(MQMD(format="MQHRF2"), data)
        assert (data_of(m).timestamp, data_of(m).priority) == (5000, 3)


def test_binary_correlation_id_reads_back_as_the_24_raw_bytes() -> None:
    # IBM MQ JMS: a byte[] correlation id is the CorrelId itself; read back, JMSCorrelationID is
    # "ID:" + 48 hex digits and getJMSCorrelationIDAsBytes the 24 raw bytes (not that string)
    raw = bytes(range(1, 25))
    m = TextMessage("x")
    m.set_jms_correlation_id_as_bytes(raw)
    mq = to_mq(m)
    back = from_mq(mq.md, mq.data)
    assert back.get_jms_correlation_id() == "ID:" + raw.hex()
    assert back.get_jms_correlation_id_as_bytes() == raw
