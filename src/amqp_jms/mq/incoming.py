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
``msg._extra['mq.folders']`` and written back by ``to_mq``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..message import (
    BytesMessage,
    JavaSerializedObject,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from ..types import Int
from ._binary import byte_order
from ._uri import destination_from_uri, join_jms_type
from .bodies import charset_of_ccsid, decode_map, decode_stream, decode_text
from .constants import (
    MQAT_JAVA,
    MQCCSI_UTF8,
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
from .rfh2 import parse_headers
from .xmlfolder import Element, decode_value, parse_folder

__all__ = ["from_mq", "from_mq_bytes"]

_CLASSES: dict[str, type[Message]] = {
    "jms_none": Message,
    "jms_text": TextMessage,
    "jms_bytes": BytesMessage,
    "jms_map": MapMessage,
    "jms_stream": StreamMessage,
    "jms_object": ObjectMessage,
}
_KNOWN = ("mcd", "jms", "usr", "mqext", "ajms")


def _nil(el: Element) -> bool:
    return el.attrs.get("xsi:nil", "").strip().lower() == "true"


def _typed(el: Element, folder: str) -> Any:
    return decode_value(el.attrs.get("dt"), el.text, _nil(el), f"<{folder}><{el.name}>")


def _int(el: Element | None, folder: str) -> int | None:
    if el is None:
        return None
    v = _typed(el, folder)
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            return int(str(v).strip())
        except ValueError:
            raise MQFormatError(
                f"<{folder}><{el.name}> {el.text!r} is not an integer", structure="MQRFH2"
            ) from None
    return int(v)


def _time_of(md: MQMD) -> int | None:
    """PutDate/PutTime (GMT, hundredths) as epoch ms, or None if blank or malformed."""
    d, t = md.put_date.strip(), md.put_time.strip()
    if len(d) != 8 or len(t) != 8 or not (d + t).isdigit() or not (d + t).isascii():
        return None
    try:
        dt = datetime(int(d[:4]), int(d[4:6]), int(d[6:]), int(t[:2]), int(t[2:4]), int(t[4:6]), tzinfo=UTC)
    except ValueError:
        return None
    return int(dt.timestamp()) * 1000 + int(t[6:]) * 10


def from_mq_bytes(raw: bytes) -> Message:
    """A JMS message from an MQMD followed by its data (raw MQ message files, ``to_bytes()``)."""
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise MQFormatError(f"expected bytes, got {type(raw).__name__}", structure="MQMD")
    raw = bytes(raw)
    md, _order = MQMD.unpack(raw)
    return _from_mq(md, raw[md.length :], md.length)


def from_mq(md: MQMD, data: bytes) -> Message:
    """A received JMS message from an MQMD and the data after it (RFH2 chain + body)."""
    if not isinstance(md, MQMD):
        raise MQFormatError(f"expected an MQMD, got {type(md).__name__}", structure="MQMD")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MQFormatError(f"message data must be bytes, got {type(data).__name__}", structure="data")
    return _from_mq(md, bytes(data), 0)


def _from_mq(md: MQMD, data: bytes, base: int) -> Message:
    md, skip = absorb_mqmde(md, data, byte_order(md.encoding, "MQMD", "Encoding", base + 24))
    parsed = parse_headers(data[skip:], md.encoding, md.coded_char_set_id, md.format, base + skip)

    folders: dict[str, Element] = {}
    unknown: list[bytes] = []
    for rfh in parsed.headers:
        for raw, text in zip(rfh.folders, rfh.folder_texts()):
            if not text:
                continue
            root = parse_folder(text)
            if root.name in _KNOWN:
                if root.name in folders:  # a repeated folder adds to the first
                    folders[root.name].children.extend(root.children)
                else:
                    folders[root.name] = root
            else:
                unknown.append(raw)
    mcd, jms, usr = folders.get("mcd"), folders.get("jms"), folders.get("usr")
    mqext, ajms = folders.get("mqext"), folders.get("ajms")

    def get(folder: Element | None, name: str) -> Element | None:
        return folder.child(name) if folder is not None else None

    # ---- body
    body_fmt = parsed.format.rstrip()
    msd_el = get(mcd, "Msd")
    msd = msd_el.text.strip() if msd_el is not None else ""
    if msd not in _CLASSES:
        msd = "jms_text" if body_fmt == MQFMT_STRING.rstrip() else "jms_bytes"
    msg = _CLASSES[msd]._blank()
    ccsid = parsed.coded_char_set_id
    body = parsed.body
    null_body = get(ajms, "Nul") is not None
    if msd == "jms_text":
        msg._text = None if null_body and not body else decode_text(body, ccsid)  # type: ignore[attr-defined]
    elif msd == "jms_bytes":
        msg._set_body_bytes(body)  # type: ignore[attr-defined]
    elif msd == "jms_map":
        msg._map = decode_map(decode_text(body, ccsid)) if body.strip(b" \x00") else {}  # type: ignore[attr-defined]
    elif msd == "jms_stream":
        items = decode_stream(decode_text(body, ccsid)) if body.strip(b" \x00") else []
        msg._items = items  # type: ignore[attr-defined]
    elif msd == "jms_object":
        if null_body and not body:
            msg._object = None  # type: ignore[attr-defined]
        elif (get(ajms, "Obj") or Element("Obj")).text == "amqp":
            from ..mapping.codec import decode_value as amqp_decode

            try:
                value, end = amqp_decode(body, 0, "ObjectMessage body")
            except Exception as exc:
                raise MQFormatError(
                    f"AMQP-encoded ObjectMessage body is malformed: {exc}", structure="body"
                ) from None
            if end != len(body):
                raise MQFormatError(
                    f"{len(body) - end} bytes after the AMQP value", structure="body", offset=end
                )
            msg._object = value  # type: ignore[attr-defined]
        else:
            msg._object = JavaSerializedObject(body)  # type: ignore[attr-defined]

    # ---- headers
    props: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    el = get(jms, "Dst")
    if el is not None and el.text.strip():
        msg._destination, qm = destination_from_uri(el.text.strip(), "jms.Dst")
        if qm:
            extra["mq.dst_q_mgr"] = qm
    el = get(jms, "Rto")
    if el is not None and el.text.strip():
        msg._reply_to, qm = destination_from_uri(el.text.strip(), "jms.Rto")
        if qm:
            extra["mq.reply_to_q_mgr"] = qm
    elif md.reply_to_q:
        msg._reply_to = destination_from_uri("queue:///" + md.reply_to_q, "MQMD.ReplyToQ")[0]
        if md.reply_to_q_mgr:
            extra["mq.reply_to_q_mgr"] = md.reply_to_q_mgr

    put_ms = _time_of(md)
    tms = _int(get(jms, "Tms"), "jms")
    msg._timestamp = tms if tms is not None else (put_ms or 0)
    exp = _int(get(jms, "Exp"), "jms")
    if exp is not None:
        msg._expiration = exp
    elif md.expiry > 0 and msg._timestamp:
        msg._expiration = msg._timestamp + md.expiry * 100
    pri = _int(get(jms, "Pri"), "jms")
    msg._priority = pri if pri is not None else (md.priority if 0 <= md.priority <= 9 else 4)
    dlv = _int(get(jms, "Dlv"), "jms")
    if dlv is None:
        dlv = 2 if md.persistence == MQPER_PERSISTENT else 1
    if dlv not in (1, 2):
        raise MQFormatError(
            f"JMS delivery mode {dlv} is neither 1 nor 2", structure="MQRFH2", field="jms.Dlv"
        )
    msg._delivery_mode = dlv
    mid = get(ajms, "Mid")
    if mid is not None:
        msg._message_id = mid.text
    elif any(md.msg_id):
        msg._message_id = "ID:" + md.msg_id.hex()
    cid = get(jms, "Cid")
    if cid is not None:
        msg._correlation_id = cid.text
    elif any(md.correl_id):
        msg._correlation_id = "ID:" + md.correl_id.hex()
    if mcd is not None:
        type_el, set_el, fmt_el = mcd.child("Type"), mcd.child("Set"), mcd.child("Fmt")
        set_ = set_el.text if set_el is not None else ""
        fmt = fmt_el.text if fmt_el is not None else ""
        if set_ or fmt:
            msg._type = join_jms_type(msd, set_, type_el.text if type_el is not None else "", fmt)
        elif type_el is not None:
            msg._type = type_el.text
    dlt = _int(get(mqext, "Dlt"), "mqext")
    if dlt is not None:
        msg._delivery_time = dlt
    msg._redelivered = md.backout_count > 0

    # ---- properties: usr, then vendor ones, then what the MQMD says
    if usr is not None:
        for el in usr.children:
            props[el.name] = _typed(el, "usr")
    if ajms is not None:
        for el in ajms.children:
            if el.name == "p" and "name" in el.attrs:
                props[el.attrs["name"]] = _typed(el, "ajms")
    if md.user_identifier:
        props["JMSXUserID"] = md.user_identifier
    if md.put_appl_name:
        props["JMSXAppID"] = md.put_appl_name
    gid, seq = get(jms, "Gid"), _int(get(jms, "Seq"), "jms")
    in_group = bool(md.msg_flags & MQMF_MSG_IN_GROUP)
    if gid is not None:
        props["JMSXGroupID"] = gid.text
    elif in_group and any(md.group_id):
        props["JMSXGroupID"] = "ID:" + md.group_id.hex()
    if seq is not None:
        props["JMSXGroupSeq"] = Int(seq)
    elif in_group:
        props["JMSXGroupSeq"] = Int(md.msg_seq_number)
    props["JMSXDeliveryCount"] = Int(md.backout_count + 1)
    for name, mask in REPORT_PROPERTIES.items():
        if md.report & mask:
            props[name] = Int(md.report & mask)
    implied_type = MQMT_REQUEST if msg._reply_to is not None and msg._reply_to.is_queue else MQMT_DATAGRAM
    if md.msg_type != implied_type:
        props["JMS_IBM_MsgType"] = Int(md.msg_type)
    if md.feedback:
        props["JMS_IBM_Feedback"] = Int(md.feedback)
    if body_fmt != (MQFMT_STRING.rstrip() if msd == "jms_text" else ""):
        props["JMS_IBM_Format"] = body_fmt
    if parsed.encoding != md.encoding:
        props["JMS_IBM_Encoding"] = Int(parsed.encoding)
    if ccsid not in (MQCCSI_UTF8, 0):
        props["JMS_IBM_Character_Set"] = charset_of_ccsid(ccsid)
    if md.put_appl_type != MQAT_JAVA:
        props["JMS_IBM_PutApplType"] = Int(md.put_appl_type)
    if (md.put_date or md.put_time) and (put_ms is None or (tms is not None and put_ms // 10 != tms // 10)):
        props["JMS_IBM_PutDate"] = md.put_date
        props["JMS_IBM_PutTime"] = md.put_time
    if md.msg_flags & MQMF_LAST_MSG_IN_GROUP:
        props["JMS_IBM_Last_Msg_In_Group"] = True
    msg._props = props
    if unknown:
        extra["mq.folders"] = unknown
    msg._extra = extra or None
    msg._mark_received()
    return msg
