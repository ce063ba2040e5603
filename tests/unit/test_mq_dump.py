"""dmpmqmsg queue-dump files: write, read back, IBM's attribute codes, data line kinds, bad lines."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from amqp_jms.message import TextMessage
from amqp_jms.message._data import view
from amqp_jms.mq import MQMD, MQFormatError, from_mq, iter_dump, load_dump, to_mq, write_dump
from amqp_jms.mq.dump import DUMP_CODES
from amqp_jms.testing.messages import with_properties

# an export as IBM's dmpmqmsg writes it (abridged header comment, one message, text data)
IBM_STYLE = """\
* Dumped by dmpmqmsg Version:9.3.0.0 Created:Sat Nov 21 18:00:00 2026
* Qmgr  = QM1
* Queue = ORDERS

N
A VER 2
A RPT 0
A MST 8
A EXP -1
A FDB 0
A ENC 546
A CCS 1208
A FMT MQSTR
A PRI 0
A PER 1
A MSI 414D5120514D312020202020202020206A2B3C4D01020304
A COI 000000000000000000000000000000000000000000000000
A BOC 0
A RTQ
A RTM QM1
A USR mqm
A ACC 0431303030000000000000000000000000000000000000000000000000000006
A AIX
A PAT 6
A PAN amqsput
A PTD 20261121
A PTT 18000000
A AOX
A GRP 000000000000000000000000000000000000000000000000
A MSQ 1
A OFF 0
A MSF 0
A ORL -1
X 48656C6C6F2C20
S "MQ "
T world
"""


def test_read_ibm_style_dump() -> None:
    [(md, data)] = load_dump(io.StringIO(IBM_STYLE))
    assert (md.version, md.msg_type, md.expiry, md.encoding, md.coded_char_set_id) == (2, 8, -1, 546, 1208)
    assert (md.format, md.persistence, md.reply_to_q, md.reply_to_q_mgr) == ("MQSTR", 1, "", "QM1")
    assert md.msg_id == bytes.fromhex("414D5120514D312020202020202020206A2B3C4D01020304")
    assert (md.user_identifier, md.put_appl_type, md.put_appl_name) == ("mqm", 6, "amqsput")
    assert (md.put_date, md.put_time, md.original_length) == ("20261121", "18000000", -1)
    assert data == b"Hello, MQ world\n"
    m = from_mq(md, data)
    assert isinstance(m, TextMessage) and view(m).body == "Hello, MQ world\n"
    assert view(m).message_id == "ID:414d5120514d312020202020202020206a2b3c4d01020304"


def test_codes_are_ibms() -> None:
    assert list(DUMP_CODES) == ("VER RPT MST EXP FDB ENC CCS FMT PRI PER MSI COI BOC RTQ RTM USR ACC AIX "
                                "PAT PAN PTD PTT AOX GRP MSQ OFF MSF ORL").split()  # fmt: skip


def test_write_and_read_back_many_messages(tmp_path: Path) -> None:
    msgs = []
    for i in range(5):
        m = TextMessage("x" * (i * 40))
        m = with_properties(m, {"n": i})
        m.set_jms_timestamp(1_700_000_000_000 + i)
        mq = to_mq(m, encoding="big" if i % 2 else "native")
        mq.md.appl_identity_data = f"ident {i}"
        mq.md.appl_origin_data = "ab"
        msgs.append((mq.md, mq.data))
    path = tmp_path / "q.dmp"
    write_dump(msgs, path)
    text = path.read_text()
    assert text.count("\nN\n") == 5 and "A FMT MQHRF2\n" in text and "A AIX 6964656E742030\n" in text
    back = load_dump(path)
    assert back == msgs
    assert [view(from_mq(md, data)).properties["n"] for md, data in back] == list(range(5))


def test_version_1_dump_has_no_group_fields() -> None:
    out = io.StringIO()
    write_dump([(MQMD(version=1), b"")], out)
    assert "A GRP" not in out.getvalue() and "A VER 1" in out.getvalue()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("A VER 2\n", r"line 1: 'A' line before the first 'N'"),
        ("N\nA XYZ 1\n", r"line 2: unknown attribute code 'XYZ'"),
        ("N\nA PRI high\n", r"line 2: A PRI value 'high' is not a 32-bit integer"),
        ("N\nA PRI 99999999999\n", r"line 2: A PRI value"),
        ("N\nA MSI 0g\n", r"line 2: A MSI value '0g' is not hex"),
        ("N\nA MSI " + "00" * 25 + "\n", r"25 bytes, the field holds 24"),
        ("N\nX 4\n", r"line 2: X line is not hex"),
        ("N\nQ what\n", r"line 2: unknown line type 'Q'"),
    ],
)
def test_bad_dump_lines(text: str, match: str) -> None:
    with pytest.raises(MQFormatError, match=match):
        list(iter_dump(io.StringIO(text)))
