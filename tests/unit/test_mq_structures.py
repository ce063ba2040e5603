"""MQMD / MQMDE / MQRFH2 byte layouts: every field at IBM's offset, both byte orders, bad input."""

from __future__ import annotations

import struct

import pytest

from amqp_jms.exceptions import MessageFormatException
from amqp_jms.mq import MQMD, MQMDE, MQRFH2, MQFormatError, MQMessage, parse_headers
from amqp_jms.mq.mqmd import MQMD_FIELDS

# (IBM name, offset, width) from cmqc.h's MQMD, written out independently of the implementation
IBM_LAYOUT = [
    ("StrucId", 0, 4), ("Version", 4, 4), ("Report", 8, 4), ("MsgType", 12, 4), ("Expiry", 16, 4),
    ("Feedback", 20, 4), ("Encoding", 24, 4), ("CodedCharSetId", 28, 4), ("Format", 32, 8),
    ("Priority", 40, 4), ("Persistence", 44, 4), ("MsgId", 48, 24), ("CorrelId", 72, 24),
    ("BackoutCount", 96, 4), ("ReplyToQ", 100, 48), ("ReplyToQMgr", 148, 48),
    ("UserIdentifier", 196, 12), ("AccountingToken", 208, 32), ("ApplIdentityData", 240, 32),
    ("PutApplType", 272, 4), ("PutApplName", 276, 28), ("PutDate", 304, 8), ("PutTime", 312, 8),
    ("ApplOriginData", 320, 4), ("GroupId", 324, 24), ("MsgSeqNumber", 348, 4), ("Offset", 352, 4),
    ("MsgFlags", 356, 4), ("OriginalLength", 360, 4),
]  # fmt: skip


def sample_md(encoding: int = 546) -> MQMD:
    return MQMD(
        report=0x01000000, msg_type=1, expiry=600, feedback=3, encoding=encoding, coded_char_set_id=1208,
        format="MQSTR", priority=7, persistence=1, msg_id=bytes(range(24)), correl_id=bytes(range(24, 48)),
        backout_count=2, reply_to_q="REPLY.Q", reply_to_q_mgr="QM1", user_identifier="alice",
        accounting_token=bytes(range(100, 132)), appl_identity_data="ident", put_appl_type=28,
        put_appl_name="amqp-jms", put_date="20261121", put_time="18000012", appl_origin_data="orig",
        group_id=bytes(range(200, 224)), msg_seq_number=5, offset=0, msg_flags=0x18, original_length=-1,
    )  # fmt: skip


def test_field_table_matches_ibm_layout() -> None:
    ours = [(name, off, width) for _a, name, _k, width, off in MQMD_FIELDS]
    assert [("StrucId", 0, 4), *ours] == IBM_LAYOUT
    assert len(MQMD().pack()) == 364 and len(MQMD(version=1).pack()) == 324


@pytest.mark.parametrize(("encoding", "order"), [(546, "<"), (273, ">")])
def test_every_field_at_its_offset(encoding: int, order: str) -> None:
    md = sample_md(encoding)
    raw = md.pack()
    ints = {"Version": 2, "Report": 0x01000000, "MsgType": 1, "Expiry": 600, "Feedback": 3,
            "Encoding": encoding, "CodedCharSetId": 1208, "Priority": 7, "Persistence": 1,
            "BackoutCount": 2, "PutApplType": 28, "MsgSeqNumber": 5, "Offset": 0, "MsgFlags": 0x18,
            "OriginalLength": -1}  # fmt: skip
    chars = {"StrucId": "MD  ", "Format": "MQSTR", "ReplyToQ": "REPLY.Q", "ReplyToQMgr": "QM1",
             "UserIdentifier": "alice", "ApplIdentityData": "ident", "PutApplName": "amqp-jms",
             "PutDate": "20261121", "PutTime": "18000012", "ApplOriginData": "orig"}  # fmt: skip
    blobs = {"MsgId": bytes(range(24)), "CorrelId": bytes(range(24, 48)),
             "AccountingToken": bytes(range(100, 132)), "GroupId": bytes(range(200, 224))}  # fmt: skip
    for name, off, width in IBM_LAYOUT:
        field = raw[off : off + width]
        if name in ints:
            assert struct.unpack(order + "i", field)[0] == ints[name], name
        elif name in chars:
            assert field == chars[name].encode().ljust(width, b" "), name  # blank padded
        else:
            assert field == blobs[name], name
    back, got_order = MQMD.unpack(raw)
    assert back == md and got_order == order


def test_defaults_are_ibm_initial_values() -> None:
    md = MQMD()
    assert (md.report, md.msg_type, md.expiry, md.feedback, md.coded_char_set_id) == (0, 8, -1, 0, 0)
    assert (md.priority, md.persistence, md.backout_count, md.put_appl_type) == (-1, 2, 0, 0)
    assert (md.msg_seq_number, md.offset, md.msg_flags, md.original_length) == (1, 0, 0, -1)
    assert md.msg_id == bytes(24) and md.format == "        "
    raw = md.pack()
    assert raw[32:40] == b"        " and raw[100:148] == b" " * 48


def test_read_strips_blanks_and_nuls() -> None:
    raw = bytearray(MQMD(reply_to_q="Q").pack())
    raw[100:148] = b"Q\x00\x00\x00".ljust(48, b"\x00")
    raw[276:304] = b"app   \x00\x00".ljust(28, b" ")
    md, _ = MQMD.unpack(bytes(raw))
    assert md.reply_to_q == "Q" and md.put_appl_name == "app"


def test_version_1_with_mqmde_extension() -> None:
    md = MQMD(version=1, encoding=273, format="MQHMDE", coded_char_set_id=1208)
    mde = MQMDE(encoding=273, coded_char_set_id=819, format="MQSTR", group_id=b"G" * 24, msg_seq_number=3,
                msg_flags=0x08)  # fmt: skip
    raw = md.pack() + mde.pack(">") + b"hello"
    assert len(md.pack()) == 324 and len(mde.pack(">")) == 72
    msg = MQMessage.from_bytes(raw)
    assert msg.md.version == 1
    parsed = msg.parse()
    assert parsed.body == b"hello" and parsed.format.rstrip() == "MQSTR" and parsed.coded_char_set_id == 819
    from amqp_jms.mq import from_mq_bytes

    jms = from_mq_bytes(raw)
    assert jms.get_text() == "hello"  # type: ignore[attr-defined]
    assert jms.get_int_property("JMSXGroupSeq") == 3
    assert jms.get_string_property("JMSXGroupID") == "ID:" + (b"G" * 24).hex()


def test_too_long_char_field_is_an_error_naming_the_field() -> None:
    with pytest.raises(MQFormatError, match=r"MQMD\.ReplyToQ"):
        MQMD(reply_to_q="Q" * 49).pack()
    with pytest.raises(MQFormatError, match=r"MQMD\.Priority"):
        MQMD(priority=2**31).pack()


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda b: b[:100], r"MQMD at offset 0: version 2 needs 364 bytes"),
        (lambda b: b"XX  " + b[4:], r"MQMD\.StrucId at offset 0"),
        (lambda b: b[:4] + b"\x07\x00\x00\x07" + b[8:], r"MQMD\.Version at offset 4"),
        (lambda b: b[:3], r"MQMD at offset 0: needs at least 8 bytes"),
    ],
)
def test_bad_mqmd_names_structure_field_offset(mutate, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MQFormatError, match=match) as info:
        MQMD.unpack(mutate(MQMD().pack()))
    assert isinstance(info.value, MessageFormatException)


def rfh(order: str = "<", **kw) -> MQRFH2:  # type: ignore[no-untyped-def]
    r = MQRFH2(encoding=546 if order == "<" else 273, format="MQSTR", order=order, **kw)
    r.add_folder("<mcd><Msd>jms_text</Msd></mcd>")
    r.add_folder("<usr><a>1</a></usr>")
    return r


@pytest.mark.parametrize("order", ["<", ">"])
def test_rfh2_fixed_part_and_folders(order: str) -> None:
    raw = rfh(order).pack()
    sid, ver, length, _enc, ccsid, fmt, flags, nvccsid = struct.unpack(order + "4siiii8sii", raw[:36])
    assert (sid, ver, length, ccsid, fmt, flags, nvccsid) == (
        b"RFH ",
        2,
        len(raw),
        1208,
        b"MQSTR   ",
        0,
        1208,
    )
    assert length % 4 == 0
    (n1,) = struct.unpack(order + "i", raw[36:40])
    assert n1 % 4 == 0 and raw[40 : 40 + n1] == b"<mcd><Msd>jms_text</Msd></mcd>  "  # blank padded
    back, blen = MQRFH2.unpack(raw, 0, order)
    assert blen == len(raw) and back.folder_texts() == [
        "<mcd><Msd>jms_text</Msd></mcd>",
        "<usr><a>1</a></usr>",
    ]


def test_chained_rfh2s_and_unknown_folders_kept_byte_for_byte() -> None:
    first = MQRFH2(encoding=546, format="MQHRF2", order="<")
    odd = b"<other a='1'>  <x>\xc3\xa9</x> </other>       "  # extra padding, non-ASCII: kept as is
    first.folders.append(odd)
    second = rfh("<")
    data = first.pack() + second.pack() + b"body"
    parsed = parse_headers(data, 546, 1208, "MQHRF2")
    assert len(parsed.headers) == 2 and parsed.body == b"body" and parsed.format == "MQSTR"
    assert parsed.headers[0].folders == [odd]
    assert parsed.headers[0].pack() + parsed.headers[1].pack() + parsed.body == data


def test_rfh2_integers_follow_the_preceding_encoding() -> None:
    data = rfh(">").pack()
    with pytest.raises(MQFormatError, match=r"MQRFH2\.Version at offset 4"):
        parse_headers(data, 546, 1208, "MQHRF2")  # MQMD says little-endian, header is big-endian
    assert parse_headers(data, 273, 1208, "MQHRF2").format == "MQSTR"


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda b: b[:30], r"MQRFH2 at offset 0: needs 36 bytes"),
        (lambda b: b[:8] + struct.pack("<i", 37) + b[12:], r"MQRFH2\.StrucLength at offset 8"),
        (lambda b: b[:8] + struct.pack("<i", 4000) + b[12:], r"MQRFH2\.StrucLength at offset 8"),
        (lambda b: b[:36] + struct.pack("<i", 400) + b[40:], r"MQRFH2\.NameValueLength at offset 36"),
        (lambda b: b[:32] + struct.pack("<i", 819) + b[36:], r"MQRFH2\.NameValueCCSID"),
    ],
)
def test_bad_rfh2(mutate, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MQFormatError, match=match):
        parse_headers(mutate(rfh("<").pack()), 546, 1208, "MQHRF2")


def test_offsets_in_from_mq_bytes_are_from_the_start_of_the_buffer() -> None:
    from amqp_jms.mq import from_mq_bytes

    md = MQMD(format="MQHRF2", coded_char_set_id=1208)
    raw = md.pack() + b"RFH " + struct.pack("<i", 9) + bytes(40)
    with pytest.raises(MQFormatError, match=r"MQRFH2\.Version at offset 368"):
        from_mq_bytes(raw)


def test_utf16_name_value_ccsid() -> None:
    r = MQRFH2(encoding=273, order=">", name_value_ccsid=1200)
    r.add_folder("<usr><k>é</k></usr>")
    back, _ = MQRFH2.unpack(r.pack(), 0, ">")
    assert back.folder_texts() == ["<usr><k>é</k></usr>"]
    assert "<usr>".encode("utf-16-be") in r.pack()
