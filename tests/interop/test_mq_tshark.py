"""Wireshark's MQ dissector as an independent oracle for our MQMD and MQRFH2 bytes.

Each test wraps ``to_mq`` output (MQMD + RFH2 + body) in an MQ ``TSH`` + API header + MQPUT
(PMO v1) segment inside Ethernet/IPv4/TCP to port 1414 in a pcap file, runs ``tshark -T json``
and checks that the dissector reports the same field values, in both byte orders. tshark is
lenient (a bad StrucLength just shows data), so this cross-checks values; our own parsers are
the validators. Skipped only when tshark is not installed.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from amqp_jms.destination import Queue, Topic
from amqp_jms.message import MapMessage, TextMessage
from amqp_jms.message._data import view
from amqp_jms.mq import MQMD, MQMDE, MQRFH2, to_mq
from amqp_jms.mq.mqmd import MQMD_FIELDS
from amqp_jms.testing.messages import with_properties
from amqp_jms.types import Int

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark (Debian package 'tshark') is not installed")

MQ_TST_MQPUT = 0x86


def mqput_segment(md_and_data: bytes, order: str) -> bytes:
    """TSH (28 bytes) + API header (16) + MQMD... + PMO v1 (128) + data length + data."""
    md_len = 364 if struct.unpack(order + "i", md_and_data[4:8])[0] == 2 else 324
    md, data = md_and_data[:md_len], md_and_data[md_len:]
    api = struct.pack(order + "iiii", 0, 0, 0, 1)
    pmo = struct.pack(order + "4siiiiiii48s48s", b"PMO ", 1, 0, -1, 0, 0, 0, 0, b" " * 48, b" " * 48)
    body = api + md + pmo + struct.pack(order + "i", len(data)) + data
    enc = 546 if order == "<" else 273
    tsh = (
        b"TSH "
        + struct.pack(">I", 28 + len(body))
        + bytes([2 if order == "<" else 1, MQ_TST_MQPUT, 0x30, 0])
        + bytes(8)
        + struct.pack(order + "iH", enc, 819)
        + bytes(2)
    )
    return tsh + body


def pcap(segments: list[bytes]) -> bytes:
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    seq = 1000
    for seg in segments:
        tcp = struct.pack(">HHIIBBHHH", 40000, 1414, seq, 1, 5 << 4, 0x18, 65535, 0, 0)
        ip = struct.pack(
            ">BBHHHBBH4s4s", 0x45, 0, 40 + len(seg), 1, 0, 64, 6, 0, b"\x7f\0\0\1", b"\x7f\0\0\1"
        )
        frame = bytes(12) + b"\x08\x00" + ip + tcp + seg
        out.append(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
        seq += len(seg)
    return b"".join(out)


def dissect(tmp_path: Path, raw: bytes, order: str, fields: list[str]) -> dict[str, list[str]]:
    path = tmp_path / "mq.pcap"
    path.write_bytes(pcap([mqput_segment(raw, order)]))
    args = [str(TSHARK), "-r", str(path), "-T", "json"]
    for f in fields:
        args += ["-e", f]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True)
    packets = json.loads(proc.stdout)
    assert len(packets) == 1
    layers: dict[str, list[str]] = packets[0]["_source"]["layers"]
    return layers


# our attribute -> tshark field
TSHARK_MD = {
    "version": "mq.md.version", "report": "mq.md.report", "msg_type": "mq.md.msgtype",
    "expiry": "mq.md.expiry", "feedback": "mq.md.feedback", "encoding": "mq.md.encoding",
    "coded_char_set_id": "mq.md.ccsid",
    "format": "mq.md.format", "priority": "mq.md.priority", "persistence": "mq.md.persistence",
    "msg_id": "mq.md.msgid", "correl_id": "mq.md.correlid", "backout_count": "mq.md.backount",
    "reply_to_q": "mq.md.replytoq", "reply_to_q_mgr": "mq.md.replytoqmgr", "user_identifier": "mq.md.userid",
    "accounting_token": "mq.md.acttoken", "appl_identity_data": "mq.md.appldata",
    "put_appl_type": "mq.md.appltype", "put_appl_name": "mq.md.applname", "put_date": "mq.md.date",
    "put_time": "mq.md.time", "appl_origin_data": "mq.md.origdata", "group_id": "mq.md.groupid",
    "msg_seq_number": "mq.md.msgseqnumber", "offset": "mq.md.offset", "msg_flags": "mq.md.msgflags",
    "original_length": "mq.md.origlength",
}  # fmt: skip


def norm(value: Any) -> str:
    if isinstance(value, bytes):
        return value.hex()
    return str(value).strip()


def tnorm(value: str, attr: str) -> str:
    kind = next(k for a, _n, k, _w, _o in MQMD_FIELDS if a == attr)
    if kind == "b":
        return value.replace(":", "").lower()
    if kind == "l" and value.startswith("0x"):  # flag fields are shown in hex
        return str(int(value, 16))
    return value.strip()


def sample_message() -> TextMessage:
    m = TextMessage("héllo from amqp-jms")
    m.set_jms_message_id("ID:" + "a1b2c3d4e5f60718" * 3)
    m.set_jms_correlation_id("order-42")
    m.set_jms_timestamp(1_763_748_000_456)
    m.set_jms_expiration(view(m).timestamp + 90_000)
    m.set_jms_priority(7)
    m.set_jms_reply_to(Queue("REPLY.Q"))
    m.set_jms_destination(Topic("prices/eur"))
    m.set_jms_type("Quote")
    m = with_properties(m, {"symbol": "EUR", "qty": Int(5), "JMSXUserID": "alice", "JMSXAppID": "pricer",
                     "JMSXGroupID": "g-1", "JMSXGroupSeq": Int(2), "JMS_IBM_Report_COA": Int(0x100),
                     "JMS_IBM_Feedback": Int(3)})  # fmt: skip
    return m


@pytest.mark.parametrize(("encoding", "order"), [("little", "<"), ("big", ">")])
def test_mqmd_fields_match_wireshark(tmp_path: Path, encoding: str, order: str) -> None:
    mq = to_mq(sample_message(), encoding=encoding, queue_manager="QM1")
    mq.md.accounting_token = bytes(range(32))
    mq.md.appl_identity_data = "ident"
    mq.md.appl_origin_data = "orig"
    mq.md.backout_count = 3
    layers = dissect(tmp_path, mq.to_bytes(), order, [*TSHARK_MD.values(), "mq.md.structid"])
    assert layers["mq.md.structid"] == ["MD  "]
    for attr, field in TSHARK_MD.items():
        assert field in layers, f"tshark did not report {field}"
        assert tnorm(layers[field][0], attr) == norm(getattr(mq.md, attr)), attr
    # spot-check that the values are the mapping's, not just self-consistent
    assert layers["mq.md.msgid"][0].replace(":", "") == "a1b2c3d4e5f60718" * 3
    assert layers["mq.md.expiry"] == ["900"] and layers["mq.md.priority"] == ["7"]
    assert layers["mq.md.format"][0].strip() == "MQHRF2" and layers["mq.md.msgtype"] == ["1"]


@pytest.mark.parametrize(("encoding", "order"), [("little", "<"), ("big", ">")])
def test_rfh2_fields_match_wireshark(tmp_path: Path, encoding: str, order: str) -> None:
    mq = to_mq(sample_message(), encoding=encoding)
    parsed = mq.parse()
    [rfh] = parsed.headers
    fields = ["mq.head.structid", "mq.head.version", "mq.head.length", "mq.head.encoding",
              "mq.head.ccsid", "mq.head.format", "mq.head.flags", "mq.rfh.ccsid", "mq.rfh.length",
              "mq.rfh.string"]  # fmt: skip
    layers = dissect(tmp_path, mq.to_bytes(), order, fields)
    assert layers["mq.head.structid"] == ["RFH "] and layers["mq.head.version"] == ["2"]
    assert layers["mq.head.length"] == [str(rfh.struc_length)]
    assert layers["mq.head.encoding"] == [str(rfh.encoding)] and layers["mq.head.ccsid"] == ["1208"]
    assert layers["mq.head.format"][0].strip() == "MQSTR" and int(layers["mq.head.flags"][0], 16) == 0
    assert layers["mq.rfh.ccsid"] == ["1208"]
    assert layers["mq.rfh.length"] == [str(len(f)) for f in rfh.folders]
    assert [s.rstrip() for s in layers["mq.rfh.string"]] == rfh.folder_texts()
    assert any("<Tms>1763748000456</Tms>" in s for s in layers["mq.rfh.string"])
    assert any('<qty dt="i4">5</qty>' in s for s in layers["mq.rfh.string"])


def test_chained_rfh2_headers(tmp_path: Path) -> None:
    """Wireshark 4.0 dissects the first RFH2 of a chain and shows the rest as data: the first must
    decode field for field, and the data it reports must be exactly our second header + body."""
    first = MQRFH2(encoding=273, format="MQHRF2", order=">")
    first.add_folder("<other><x>1</x></other>")
    second = MQRFH2(encoding=273, format="MQSTR", order=">")
    second.add_folder("<mcd><Msd>jms_text</Msd></mcd>")
    md = MQMD(encoding=273, format="MQHRF2", coded_char_set_id=1208)
    raw = md.pack() + first.pack() + second.pack() + b"body"
    fields = ["mq.head.structid", "mq.head.format", "mq.head.length", "mq.rfh.string", "data.data"]
    layers = dissect(tmp_path, raw, ">", fields)
    assert layers["mq.head.structid"] == ["RFH "] and layers["mq.head.format"][0].strip() == "MQHRF2"
    assert layers["mq.head.length"] == [str(first.struc_length)]
    assert [s.rstrip() for s in layers["mq.rfh.string"]] == ["<other><x>1</x></other>"]
    assert layers["data.data"][0].replace(":", "") == (second.pack() + b"body").hex()


def test_version_1_mqmd_with_mqmde(tmp_path: Path) -> None:
    md = MQMD(version=1, encoding=546, format="MQHMDE", put_appl_name="v1app")
    mde = MQMDE(encoding=546, coded_char_set_id=1208, format="MQSTR", group_id=b"\x05" * 24, msg_seq_number=9)
    fields = ["mq.md.version", "mq.md.applname", "mq.md.format", "mq.head.structid", "mq.head.format"]
    layers = dissect(tmp_path, md.pack() + mde.pack("<") + b"x", "<", fields)
    assert layers["mq.md.version"] == ["1"] and layers["mq.md.applname"][0].strip() == "v1app"
    assert layers["mq.md.format"][0].strip() == "MQHMDE"
    assert layers["mq.head.structid"] == ["MDE "] and layers["mq.head.format"][0].strip() == "MQSTR"


def test_map_body_after_rfh2(tmp_path: Path) -> None:
    mq = to_mq(MapMessage({"a": Int(1)}), encoding="big")
    layers = dissect(tmp_path, mq.to_bytes(), ">", ["mq.rfh.string", "mq.md.format"])
    assert layers["mq.rfh.string"][0].rstrip() == "<mcd><Msd>jms_map</Msd></mcd>"
    assert mq.data.endswith(b'<map><elt name="a" dt="i4">1</elt></map>')
