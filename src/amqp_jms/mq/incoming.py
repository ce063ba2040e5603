"""MQ -> JMS: IBM's incoming mapping. RFH2 values win over MQMD ones.

A message without an RFH2 (sent with ``targetClient=MQ`` or by a non-JMS MQ application) maps
from the MQMD alone: Format ``MQSTR`` gives a TextMessage, anything else a BytesMessage.
``JMSXDeliveryCount`` is BackoutCount + 1 and ``JMSRedelivered`` is BackoutCount > 0.

``JMS_IBM_*`` properties appear only where the MQMD says something the JMS headers do not
already imply (a Report option, a MsgType other than DATAGRAM/REQUEST-with-reply-queue, a
Feedback, a Format other than the body type's, a body Encoding other than the MQMD's, a CCSID
other than 1208, a PutApplType other than Java's, PutDate/PutTime that disagree with
JMSTimestamp, the last-in-group flag): so a JMS message survives JMS -> MQ -> JMS unchanged
(our choice; IBM sets them all). Folders this mapping does not read are kept, raw, in
``MessageData.extra['mq.folders']`` and written back by ``to_mq``.
"""

from __future__ import annotations

import calendar
import re
import xml.etree.ElementTree as ET
from typing import Any

from ..destination import Topic
from ..message import Message
from ..message._data import receive
from ..types import Int
from ._binary import byte_order
from ._fastin import BODY_KINDS as _BODY_KINDS
from ._fastin import fast_from_mq_bytes, object_body
from ._folders import decode_child, is_nil, parse_cached, parse_fresh, usr_properties
from ._uri import destination_from_uri, join_jms_type
from .bodies import charset_of_ccsid, decode_map, decode_stream, decode_text
from .constants import (
    MQAT_JAVA,
    MQCCSI_UTF8,
    MQFMT_MD_EXTENSION,
    MQFMT_STRING,
    MQMF_LAST_MSG_IN_GROUP,
    MQMF_MSG_IN_GROUP,
    MQMT_DATAGRAM,
    MQMT_REQUEST,
    MQPER_PERSISTENT,
    REPORT_PROPERTIES,
)
from .errors import MQFormatError
from .mqmd import MQMD, absorb_mqmde
from .outgoing import _put_date_time
from .rfh2 import folder_texts, read_chain
from .xmlfolder import decode_value

__all__ = ["from_mq", "from_mq_bytes"]

_MD_EXTENSION = MQFMT_MD_EXTENSION.rstrip()
_KNOWN = ("mcd", "jms", "mqext", "ajms")
_INT = re.compile(r"[+-]?[0-9]{1,19}")
_DIGITS = re.compile("[0-9]{16}")
_INT_DTS = frozenset((None, "i1", "i2", "i4", "i8", "int"))
_STRING = MQFMT_STRING.rstrip()
_EMPTY: dict[str, ET.Element] = {}
_NO_EXTRA: dict[str, Any] = {}  # never written: replaced by a new dict when there is something
_DELIVERY_COUNTS = [Int(n + 1) for n in range(16)]


def _int(el: ET.Element | None, folder: str) -> int | None:
    if el is None:
        return None
    text = el.text or ""
    if len(text) < 19 and text.isdigit() and text.isascii() and el.get("dt") in _INT_DTS:
        return int(text)  # the common case: a plain non-negative number
    v = decode_child(el, f"<{folder}><{el.tag}>")
    if isinstance(v, bool) or not isinstance(v, int):
        t = str(v).strip()
        if not _INT.fullmatch(t):
            raise MQFormatError(f"<{folder}><{el.tag}> {text!r} is not an integer", structure="MQRFH2")
        return int(t)
    return int(v)


def _time_of(md: MQMD) -> int | None:
    """PutDate/PutTime (GMT, hundredths) as epoch ms, or None if blank or malformed."""
    d, t = md.put_date, md.put_time
    if len(d) != 8 or len(t) != 8 or not _DIGITS.fullmatch(d + t):
        return None
    y, mo, dd, h, mi, s = int(d[:4]), int(d[4:6]), int(d[6:]), int(t[:2]), int(t[2:4]), int(t[4:6])
    if not (
        1 <= mo <= 12 and 1 <= dd <= calendar.monthrange(max(y, 1), mo)[1] and h < 24 and mi < 60 and s < 60
    ):
        return None
    return calendar.timegm((y, mo, dd, h, mi, s)) * 1000 + int(t[6:]) * 10


def from_mq_bytes(raw: bytes) -> Message:
    """A JMS message from an MQMD followed by its data (raw MQ message files, ``to_bytes()``).
    The common JMS shape is read by ``_fastin``; everything else, and every error, here."""
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise MQFormatError(f"expected bytes, got {type(raw).__name__}", structure="MQMD")
    if type(raw) is not bytes:
        raw = bytes(raw)
    msg = fast_from_mq_bytes(raw)
    if msg is not None:
        return msg
    md, _order = MQMD.unpack(raw)
    return _from_mq(md, raw, md.length)


def from_mq(md: MQMD, data: bytes) -> Message:
    """A received JMS message from an MQMD and the data after it (RFH2 chain + body)."""
    if not isinstance(md, MQMD):
        raise MQFormatError(f"expected an MQMD, got {type(md).__name__}", structure="MQMD")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MQFormatError(f"message data must be bytes, got {type(data).__name__}", structure="data")
    md.check_types()
    return _from_mq(md, data if type(data) is bytes else bytes(data), 0)


def _from_mq(md: MQMD, data: bytes, start: int) -> Message:
    """``data[start:]`` follows ``md``; error offsets are positions in ``data``."""
    if md.format != "MQHRF2" and md.format.rstrip() == _MD_EXTENSION:  # byte order: only with headers
        md, length = absorb_mqmde(md, data, byte_order(md.encoding, "MQMD", "Encoding", 24), start)
        start += length
    chain, body_enc, ccsid, body_fmt, pos = read_chain(
        data, start, md.encoding, md.coded_char_set_id, md.format
    )
    body_fmt = body_fmt.rstrip()

    ajms_props: list[ET.Element] = []
    known: dict[str, dict[str, ET.Element]] = {}
    usr_props: dict[str, Any] | None = None
    unknown: list[bytes] = []
    for fields, order in chain:
        raws = fields[5]
        for raw, text in zip(raws, folder_texts(raws, fields[4], order)):
            if not text:
                continue
            name, children, by_name = parse_fresh(text) if text[:5] == "<jms>" else parse_cached(text)
            if name == "usr":
                if usr_props is None:
                    usr_props = usr_properties(text, (name, children, by_name))
                else:
                    usr_props.update(usr_properties(text, (name, children, by_name)))
            elif name in _KNOWN:
                if name not in known:
                    known[name] = by_name
                else:  # a repeated folder: the first of each element wins
                    known[name] = {**by_name, **known[name]}
                if name == "ajms":
                    ajms_props.extend(c for c in children if c.tag == "p" and "name" in c.attrib)
            else:
                unknown.append(raw)  # kept raw for to_mq, whatever is read from it below
                if name == "mqps" and "mqps" not in known:
                    known["mqps"] = by_name
    mcd = known.get("mcd", _EMPTY)
    jms = known.get("jms", _EMPTY)

    # ---- body
    msd_el = mcd.get("Msd")
    msd = (msd_el.text or "").strip() if msd_el is not None else ""
    kind = _BODY_KINDS.get(msd)
    if kind is None:
        msd = "jms_text" if body_fmt == _STRING else "jms_bytes"
        kind = _BODY_KINDS[msd]
    body = data[pos:] if pos else data
    ajms = known.get("ajms", _EMPTY)
    value: Any = None
    if msd == "jms_text":
        value = None if "Nul" in ajms and not body else decode_text(body, ccsid)
    elif msd == "jms_bytes":
        value = body
    elif msd == "jms_map":
        value = decode_map(decode_text(body, ccsid)) if body.strip(b" \x00") else {}
    elif msd == "jms_stream":
        value = decode_stream(decode_text(body, ccsid)) if body.strip(b" \x00") else []
    elif msd == "jms_object":
        obj = ajms.get("Obj")
        nul = "Nul" in ajms
        value = object_body(body, nul, obj.text if obj is not None else None)

    # ---- headers
    extra: dict[str, Any] = _NO_EXTRA
    destination = reply = None
    el = jms.get("Dst")
    dst = (el.text or "").strip() if el is not None else ""
    if dst:
        destination, qm = destination_from_uri(dst, "jms.Dst")
        if qm:
            extra = {"mq.dst_q_mgr": qm}
    elif "mqps" in known and "Top" in known["mqps"] and known["mqps"]["Top"].text:
        # published through MQ publish/subscribe with no jms.Dst: the topic string is the destination
        destination = Topic(known["mqps"]["Top"].text)
    el = jms.get("Rto")
    rto = (el.text or "").strip() if el is not None else ""
    if rto:
        reply, qm = destination_from_uri(rto, "jms.Rto")
        if qm:
            extra = {**extra, "mq.reply_to_q_mgr": qm}
    elif md.reply_to_q:
        reply = destination_from_uri("queue:///" + md.reply_to_q, "MQMD.ReplyToQ")[0]
        if md.reply_to_q_mgr:
            extra = {**extra, "mq.reply_to_q_mgr": md.reply_to_q_mgr}

    tms = _int(jms.get("Tms"), "jms")
    put_ms = _time_of(md) if tms is None else None
    timestamp = tms if tms is not None else (put_ms or 0)
    expiration = 0
    exp = _int(jms.get("Exp"), "jms")
    if exp is not None:
        expiration = exp
    elif md.expiry > 0 and timestamp:
        expiration = timestamp + md.expiry * 100
    pri = _int(jms.get("Pri"), "jms")
    priority = pri if pri is not None else (md.priority if 0 <= md.priority <= 9 else 4)
    dlv = _int(jms.get("Dlv"), "jms")
    if dlv is None:
        dlv = 2 if md.persistence == MQPER_PERSISTENT else 1
    if dlv != 1 and dlv != 2:
        raise MQFormatError(
            f"JMS delivery mode {dlv} is neither 1 nor 2", structure="MQRFH2", field="jms.Dlv"
        )
    message_id: str | None = None
    mid = ajms.get("Mid")
    if mid is not None:
        message_id = mid.text or ""
    elif md.msg_id.lstrip(b"\x00"):
        message_id = "ID:" + md.msg_id.hex()
    correlation: str | None = None
    cid = jms.get("Cid")
    if cid is not None:
        correlation = cid.text or ""
    elif md.correl_id.lstrip(b"\x00"):
        correlation = "ID:" + md.correl_id.hex()
    jms_type: str | None = None
    if mcd:
        type_el, set_el, fmt_el = mcd.get("Type"), mcd.get("Set"), mcd.get("Fmt")
        set_ = (set_el.text or "") if set_el is not None else ""
        fmt = (fmt_el.text or "") if fmt_el is not None else ""
        if set_ or fmt:
            jms_type = join_jms_type(msd, set_, (type_el.text or "") if type_el is not None else "", fmt)
        elif type_el is not None:
            jms_type = type_el.text or ""
    delivery_time = 0
    if "mqext" in known:
        dlt = _int(known["mqext"].get("Dlt"), "mqext")
        if dlt is not None:
            delivery_time = dlt
    backout = md.backout_count

    # ---- properties: usr, then vendor ones, then what the MQMD says
    props: dict[str, Any] = usr_props if usr_props is not None else {}
    for p in ajms_props:
        pname = p.attrib["name"]
        props[pname] = decode_value(p.attrib.get("dt"), p.text or "", is_nil(p), f"<ajms> property {pname!r}")
    if md.user_identifier:
        props["JMSXUserID"] = md.user_identifier
    if md.put_appl_name:
        props["JMSXAppID"] = md.put_appl_name
    if md.msg_flags or "Gid" in jms or "Seq" in jms:
        _group(md, jms, props)
    props["JMSXDeliveryCount"] = _DELIVERY_COUNTS[backout] if 0 <= backout < 16 else Int(backout + 1)
    if md.report:
        for name, mask in REPORT_PROPERTIES.items():
            if md.report & mask:
                props[name] = Int(md.report & mask)
    implied_type = MQMT_REQUEST if reply is not None and reply.is_queue else MQMT_DATAGRAM
    if md.msg_type != implied_type:
        props["JMS_IBM_MsgType"] = Int(md.msg_type)
    if md.feedback:
        props["JMS_IBM_Feedback"] = Int(md.feedback)
    if body_fmt != (_STRING if msd == "jms_text" else ""):
        props["JMS_IBM_Format"] = body_fmt
    if body_enc != md.encoding:
        props["JMS_IBM_Encoding"] = Int(body_enc)
    if ccsid != MQCCSI_UTF8 and ccsid != 0:
        props["JMS_IBM_Character_Set"] = charset_of_ccsid(ccsid)
    if md.put_appl_type != MQAT_JAVA:
        props["JMS_IBM_PutApplType"] = Int(md.put_appl_type)
    if (md.put_date or md.put_time) and (
        put_ms is None if tms is None else (md.put_date, md.put_time) != _put_date_time(tms)
    ):
        props["JMS_IBM_PutDate"] = md.put_date
        props["JMS_IBM_PutTime"] = md.put_time
    if md.msg_flags & MQMF_LAST_MSG_IN_GROUP:
        props["JMS_IBM_Last_Msg_In_Group"] = True
    if unknown:
        extra = {**extra, "mq.folders": unknown}
    return receive(kind, value, props, message_id, timestamp, correlation, reply, destination, dlv,
                   backout > 0, jms_type, expiration, delivery_time, priority, extra or None)


def _group(md: MQMD, jms: dict[str, ET.Element], props: dict[str, Any]) -> None:
    """JMSXGroupID/JMSXGroupSeq: jms.Gid/Seq, else the MQMD's group fields when in a group."""
    gid, seq = jms.get("Gid"), _int(jms.get("Seq"), "jms")
    in_group = md.msg_flags & MQMF_MSG_IN_GROUP
    if gid is not None:
        props["JMSXGroupID"] = gid.text or ""
    elif in_group and md.group_id.lstrip(b"\x00"):
        props["JMSXGroupID"] = "ID:" + md.group_id.hex()
    if seq is not None:
        props["JMSXGroupSeq"] = Int(seq)
    elif in_group:
        props["JMSXGroupSeq"] = Int(md.msg_seq_number)
