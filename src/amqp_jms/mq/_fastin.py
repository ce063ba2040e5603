"""MQ -> JMS for the shape nearly every JMS message has, straight into the message's slots.

``from_mq_bytes`` tries this first. It reads a version 2 MQMD followed by one RFH2 (UTF-8
folders ``mcd``, ``jms`` and optionally ``usr`` and ``ajms``) and the body, and builds the message
through the message model's fast path (``_blank()``, slot writes, ``_mark_received()``) without
an ``MQMD`` object, header tuples or per-folder dicts.

The folders and a map/stream body are read into one intermediate form, ``Child`` tuples
(name, text, attributes), by one of two readers: the optional C accelerator ``_mqxml`` (a strict
reader of the flat XML these folders are, about 2 µs for a message's folders), or ElementTree
(``_folders_py``, one feed of a kept-open expat parser, about 9 µs), which also takes whatever
the C reader leaves (namespaced ``xsi:nil``, comments, nested elements, malformed XML). The
mapping rules below read only the intermediate form, so they exist once.

It also needs a plain ``<Tms>`` (without one, PutDate/PutTime decide the timestamp) and plain
integers in ``Exp``/``Pri``/``Dlv``/``Seq``. Anything else, and anything that looks wrong at all
(the whole read is guarded: any exception means "not here"), returns None: the general path
(``incoming._from_mq``) then reads the message, or raises ``MQFormatError`` naming the problem.
The rules applied are the general path's, line for line; tests compare the two on many shapes.

What is remembered is keyed on what repeats in a stream, never on per-message values: the
``mcd`` folder text (body type and JMSType) and the MQMD's identity block (ReplyToQ,
ReplyToQMgr, UserIdentifier, AccountingToken, ApplIdentityData, PutApplType, PutApplName: fixed
per producer).
"""

from __future__ import annotations

import struct
from typing import Any

from .._accel import load_accelerator
from ..mapping.codec import decode_value as amqp_decode
from ..message import JavaSerializedObject, Message
from ..message._data import BodyKind, receive
from ..types import Int
from ._folders import CONVERTERS as _CONVERTERS
from ._folders import SLOW, Child, child_value, children_of, parse_cached, parse_many
from ._uri import destination_from_uri, join_jms_type
from .bodies import CCSID_CODECS as _CODECS
from .bodies import charset_of_ccsid
from .constants import MQAT_JAVA, MQMF_LAST_MSG_IN_GROUP, MQMF_MSG_IN_GROUP, REPORT_PROPERTIES
from .errors import MQFormatError
from .outgoing import _put_date_time

__all__ = ["accelerated", "fast_from_mq_bytes", "object_body"]




_ACCEL = load_accelerator("amqp_jms.mq._mqxml")


def accelerated() -> bool:
    """Whether folders are read by the C accelerator ``_mqxml`` (else by ElementTree)."""
    return _ACCEL is not None


#: the MQMD fields this path reads: Report, MsgType, Expiry, Feedback, Encoding, Format, Priority,
#: Persistence, MsgId, CorrelId, BackoutCount, PutDate + PutTime, ApplOriginData, GroupId,
#: MsgSeqNumber, MsgFlags (bytes 100-304, the identity block, are read apart)
_MD = {o: struct.Struct(o + "8x5i4x8s2i24s24si204x16s4s24si4xi4x") for o in "<>"}
assert _MD["<"].size == 364
_NO_ID = bytes(24)
_NONE: dict[str, Any] = {}
_TEXT, _BYTES, _XML, _OBJECT, _EMPTY = "text", "bytes", "xml", "object", "none"
_KINDS = {"jms_text": _TEXT, "jms_bytes": _BYTES, "jms_map": _XML, "jms_stream": _XML, "jms_object": _OBJECT}
_HEADS = {b"MD  \x02\x00\x00\x00": "<", b"MD  \x00\x00\x00\x02": ">"}
_RFH = {o: struct.Struct(o + "4siiii8sii") for o in "<>"}
_LEN = {o: struct.Struct(o + "i") for o in "<>"}
_FMT_RFH2 = b"MQHRF2  "
_NOT_BODY_FORMATS = frozenset((b"MQHRF2  ", b"MQHMDE  "))
#: the JMS class of each RFH2 ``mcd`` Msd value (shared with the general path in ``incoming``)
BODY_KINDS: dict[str, BodyKind] = {
    "jms_none": BodyKind.MESSAGE,
    "jms_text": BodyKind.TEXT,
    "jms_bytes": BodyKind.BYTES,
    "jms_map": BodyKind.MAP,
    "jms_stream": BodyKind.STREAM,
    "jms_object": BodyKind.OBJECT,
}
_DELIVERY_COUNTS = [Int(n + 1) for n in range(16)]
_LIMIT = 512

#: mcd folder bytes -> (class, Msd, JMSType or None, body kind)
_MCD: dict[bytes, tuple[BodyKind, str, str | None, str]] = {}
#: MQMD bytes 100..304 -> (ReplyToQ, ReplyToQMgr, UserIdentifier, PutApplType, PutApplName)
#: (one table per byte order: PutApplType is an integer)
_IDENTITY: dict[str, dict[bytes, tuple[str, str, str, int, str]]] = {"<": {}, ">": {}}
#: a Format's 8 bytes -> its text
_FORMATS: dict[bytes, str] = {}


def _mcd(text: str) -> tuple[BodyKind, str, str | None, str] | None:
    name, _children, mcd = parse_cached(text)
    if name != "mcd":
        return None
    msd_el = mcd.get("Msd")
    msd = (msd_el.text or "").strip() if msd_el is not None else ""
    kind = BODY_KINDS.get(msd)
    if kind is None:
        return None  # the body format decides: the general path
    type_el, set_el, fmt_el = mcd.get("Type"), mcd.get("Set"), mcd.get("Fmt")
    set_ = (set_el.text or "") if set_el is not None else ""
    fmt = (fmt_el.text or "") if fmt_el is not None else ""
    jms_type: str | None = None
    if set_ or fmt:
        jms_type = join_jms_type(msd, set_, (type_el.text or "") if type_el is not None else "", fmt)
    elif type_el is not None:
        jms_type = type_el.text or ""
    return kind, msd, jms_type, _KINDS.get(msd, _EMPTY)


def _identity(block: bytes, order: str) -> tuple[str, str, str, int, str]:
    table = _IDENTITY[order]
    found = table.get(block)
    if found is None:
        strip = b" \x00"
        found = (
            block[0:48].rstrip(strip).decode("utf-8"),
            block[48:96].rstrip(strip).decode("utf-8"),
            block[96:108].rstrip(strip).decode("utf-8"),
            int.from_bytes(block[172:176], "little" if order == "<" else "big", signed=True),
            block[176:204].rstrip(strip).decode("utf-8"),
        )
        block[140:172].rstrip(strip).decode("utf-8")  # ApplIdentityData: checked, not mapped
        if len(table) >= _LIMIT:
            table.clear()
        table[block] = found
    return found


def _format(raw: bytes) -> str:
    text = _FORMATS.get(raw)
    if text is None:
        text = raw.rstrip(b" \x00").decode("utf-8").rstrip()
        if len(_FORMATS) < 256:
            _FORMATS[raw] = text
    return text


#: one RFH2's folders in the fast path's shape: the mcd folder's bytes as sent, the jms children
#: by name (the first of a name wins), the usr and ajms children (or None)
Folders = tuple[bytes, dict[str, Child], list[Child] | None, list[Child] | None]


def _folders_py(raw: bytes, end: int, rorder: str) -> Folders | None:
    """What ``_mqxml.folders`` answers, read with ElementTree: the path without the accelerator,
    and for what the accelerator leaves (``xsi:nil``, comments, nested elements, ...)."""
    pos = 400
    unpack_len = _LEN[rorder].unpack_from
    mcd_raw = jms_text = usr_text = ajms_text = None
    while pos < end:
        if end - pos < 4:
            return None
        (n,) = unpack_len(raw, pos)
        pos += 4
        if n < 0 or n > end - pos:
            return None
        folder = raw[pos : pos + n]
        pos += n
        head = folder[:5]
        if head == b"<jms>" and jms_text is None:
            jms_text = folder.rstrip(b" \x00").decode("utf-8")
        elif head == b"<mcd>" and mcd_raw is None:
            mcd_raw = folder
        elif head == b"<usr>" and usr_text is None:
            usr_text = folder.rstrip(b" \x00").decode("utf-8")
        elif head == b"<ajms" and folder[:6] == b"<ajms>" and ajms_text is None:
            ajms_text = folder.rstrip(b" \x00").decode("utf-8")
        elif folder.rstrip(b" \x00"):
            return None  # another folder, or one repeated: the general path
    if mcd_raw is None or jms_text is None:
        return None
    texts = [t for t in (jms_text, usr_text, ajms_text) if t is not None]
    els = parse_many(texts)
    if els is None:
        return None
    names = ["jms"] + ["usr"] * (usr_text is not None) + ["ajms"] * (ajms_text is not None)
    if [el.tag for el in els] != names:
        return None
    jms = {c[0]: c for c in children_of(els[0])[::-1]}
    usr = children_of(els[1]) if usr_text is not None else None
    ajms = children_of(els[-1]) if ajms_text is not None else None
    return mcd_raw, jms, usr, ajms


def _body_doc(body: bytes, codec: str) -> tuple[str, list[Child]] | None:
    """A map/stream body's root name and children (None: the general path decides)."""
    if _ACCEL is not None:
        doc = _ACCEL.parse(body if codec == "utf-8" else body.decode(codec))
        if doc is not None:
            return doc
    els = parse_many([body.decode(codec)])
    if els is None:
        return None
    return els[0].tag, children_of(els[0])


def fast_from_mq_bytes(raw: bytes) -> Message | None:
    """The received message for an MQMD + RFH2 + body in the common shape, or None."""
    try:
        return _read(raw)
    except Exception:  # anything odd: the general path reads it again and names the problem
        return None


def _read(raw: bytes) -> Message | None:
    order = _HEADS.get(raw[:8])
    if order is None or len(raw) < 400:
        return None
    (report, msg_type, expiry, feedback, encoding, md_format, priority, persistence, msg_id, correl_id,
     backout, put_stamp, origin, group_id, seq_number, msg_flags) = _MD[order].unpack_from(raw)  # fmt: skip
    if md_format != _FMT_RFH2:
        return None
    nibble = encoding & 15
    rorder = "<" if nibble == 2 else ">" if nibble == 1 else None
    if rorder is None:
        return None
    block = raw[100:304]
    identity = _IDENTITY[order].get(block)
    if identity is None:
        identity = _identity(block, order)
    reply_to_q, reply_to_q_mgr, user_id, put_appl_type, appl_name = identity
    if origin != b"    ":
        origin.decode("utf-8")  # ApplOriginData: checked, as the general path does

    # ---- the one RFH2
    sid, version, length, body_enc, ccsid, fmt_raw, _flags, nvccsid = _RFH[rorder].unpack_from(raw, 364)
    end = 364 + length
    if sid != b"RFH " or version != 2 or nvccsid != 1208 or ccsid == -2 or length % 4:
        return None
    if length < 36 or end > len(raw) or fmt_raw in _NOT_BODY_FORMATS:
        return None
    body_fmt = _FORMATS.get(fmt_raw)
    if body_fmt is None:
        body_fmt = _format(fmt_raw)
        if body_fmt == "MQHRF2":
            return None  # a chain of RFH2s: the general path
    got = _ACCEL.folders(raw, 400, end, rorder == "<") if _ACCEL is not None else None
    if got is None:
        got = _folders_py(raw, end, rorder)
        if got is None:
            return None
    mcd_raw, jms, usr, ajms_list = got
    shape = _MCD.get(mcd_raw)
    if shape is None:
        shape = _mcd(mcd_raw.rstrip(b" \x00").decode("utf-8"))
        if shape is None:
            return None
        if len(_MCD) >= _LIMIT:
            _MCD.clear()
        _MCD[mcd_raw] = shape
    kind, msd, jms_type, body_kind = shape
    body = raw[end:]
    codec = _CODECS.get(ccsid)
    if codec is None:
        return None
    ajms: dict[str, Child] = {c[0]: c for c in ajms_list[::-1]} if ajms_list else _NONE

    # ---- body
    value: Any = None
    if body_kind is _TEXT:
        value = None if "Nul" in ajms and not body else body.decode(codec)
    elif body_kind is _BYTES:
        value = body
    elif body_kind is _XML and not body.strip(b" \x00"):
        value = [] if msd == "jms_stream" else {}
    elif body_kind is _XML:
        doc = _body_doc(body, codec)
        if doc is None:
            return None
        root_tag, children = doc
        # the element loops below are ``_folders.typed_value`` for ``Child`` tuples, written
        # inline: the plain-form readers are ``CONVERTERS`` (their one home), but a call per
        # element costs 3-4% of a map/stream round trip (mq_bench)
        conv = _CONVERTERS.get
        if msd == "jms_map":
            if root_tag != "map":
                return None
            entries: dict[str, Any] = {}
            for tag, text, attrs in children:
                key = attrs.get("name") if attrs is not None else None
                if tag != "elt" or key is None:
                    return None
                v = SLOW
                n = len(attrs)  # type: ignore[arg-type]
                if n == 1:
                    v = text if text is not None else ""
                elif n == 2:
                    dt = attrs.get("dt")  # type: ignore[union-attr]
                    if dt is not None:
                        f = conv(dt)
                        if f is not None:
                            v = f(text)
                entries[key] = child_value(text, attrs, f"map entry {key!r}") if v is SLOW else v
            value = entries
        else:
            if root_tag != "stream":
                return None
            items: list[Any] = []
            for tag, text, attrs in children:
                if tag != "elt":
                    return None
                v = SLOW
                if attrs is None:
                    v = text if text is not None else ""
                elif len(attrs) == 1:
                    dt = attrs.get("dt")
                    if dt is not None:
                        f = conv(dt)
                        if f is not None:
                            v = f(text)
                items.append(child_value(text, attrs, f"stream item {len(items)}") if v is SLOW else v)
            value = items
    elif body_kind is _OBJECT:
        obj = ajms.get("Obj")
        value = object_body(body, "Nul" in ajms, obj[1] if obj is not None else None)

    # ---- headers from the jms folder (the first of each name wins)
    extra: dict[str, Any] | None = None
    destination = reply = None
    el = jms.get("Dst")
    if el is not None:
        dst = el[1]
        if dst and (dst := dst.strip()):
            destination, qm = destination_from_uri(dst, "jms.Dst")
            if qm:
                extra = {"mq.dst_q_mgr": qm}
    el = jms.get("Rto")
    rto = el[1] if el is not None else None
    if rto and (rto := rto.strip()):
        reply, qm = destination_from_uri(rto, "jms.Rto")
        if qm:
            extra = {**(extra or {}), "mq.reply_to_q_mgr": qm}
    elif reply_to_q:
        reply = destination_from_uri("queue:///" + reply_to_q, "MQMD.ReplyToQ")[0]
        if reply_to_q_mgr:
            extra = {**(extra or {}), "mq.reply_to_q_mgr": reply_to_q_mgr}

    el = jms.get("Tms")
    if el is None:
        return None  # PutDate/PutTime decide the timestamp: the general path
    text = el[1]
    if not (text and len(text) < 19 and text.isdigit() and text.isascii() and el[2] is None):
        return None
    tms = int(text)
    expiration = 0
    el = jms.get("Exp")
    if el is not None:
        text = el[1]
        if not (text and len(text) < 19 and text.isdigit() and text.isascii() and el[2] is None):
            return None
        expiration = int(text)
    elif expiry > 0 and tms:
        expiration = tms + expiry * 100
    el = jms.get("Pri")
    if el is not None:
        text = el[1]
        if not (text and len(text) < 19 and text.isdigit() and text.isascii() and el[2] is None):
            return None
        priority = int(text)
    elif not 0 <= priority <= 9:
        priority = 4
    el = jms.get("Dlv")
    if el is not None:
        text = el[1]
        if (text != "1" and text != "2") or el[2] is not None:
            return None
        delivery_mode = 2 if text == "2" else 1
    else:
        delivery_mode = 2 if persistence == 1 else 1
    message_id: str | None = None
    mid = ajms.get("Mid")
    if mid is not None:
        message_id = mid[1] or ""
    elif msg_id != _NO_ID:
        message_id = "ID:" + msg_id.hex()
    correlation: str | None = None
    el = jms.get("Cid")
    if el is not None:
        correlation = el[1] or ""
    elif correl_id != _NO_ID:
        correlation = "ID:" + correl_id.hex()

    # ---- properties: usr, then vendor ones, then what the MQMD says
    props: dict[str, Any] = {}
    if usr is not None:
        conv = _CONVERTERS.get
        for tag, text, attrs in usr:  # a repeated name: the last wins, as a map would
            if attrs is None:
                props[tag] = text if text is not None else ""
                continue
            v = SLOW
            if len(attrs) == 1:
                dt = attrs.get("dt")
                if dt is not None:
                    f = conv(dt)
                    if f is not None:
                        v = f(text)
            props[tag] = child_value(text, attrs, f"<usr><{tag}>") if v is SLOW else v
    if ajms_list:
        for tag, text, attrs in ajms_list:
            if tag == "p" and attrs is not None and "name" in attrs:
                pname = attrs["name"]
                props[pname] = child_value(text, attrs, f"<ajms> property {pname!r}")
    if user_id:
        props["JMSXUserID"] = user_id
    if appl_name:
        props["JMSXAppID"] = appl_name
    if msg_flags or "Gid" in jms or "Seq" in jms:
        gid = jms.get("Gid")
        in_group = msg_flags & MQMF_MSG_IN_GROUP
        if gid is not None:
            props["JMSXGroupID"] = gid[1] or ""
        elif in_group and group_id != _NO_ID:
            props["JMSXGroupID"] = "ID:" + group_id.hex()
        el = jms.get("Seq")
        if el is not None:
            text = el[1]
            if not (text and len(text) < 19 and text.isdigit() and text.isascii() and el[2] is None):
                return None
            props["JMSXGroupSeq"] = Int(int(text))
        elif in_group:
            props["JMSXGroupSeq"] = Int(seq_number)
    props["JMSXDeliveryCount"] = _DELIVERY_COUNTS[backout] if 0 <= backout < 16 else Int(backout + 1)
    if report:
        for name, mask in REPORT_PROPERTIES.items():
            if report & mask:
                props[name] = Int(report & mask)
    if msg_type != (1 if reply is not None and reply.is_queue else 8):  # MQMT_REQUEST / DATAGRAM
        props["JMS_IBM_MsgType"] = Int(msg_type)
    if feedback:
        props["JMS_IBM_Feedback"] = Int(feedback)
    if body_fmt != ("MQSTR" if body_kind is _TEXT else ""):
        props["JMS_IBM_Format"] = body_fmt
    if body_enc != encoding:
        props["JMS_IBM_Encoding"] = Int(body_enc)
    if ccsid != 1208 and ccsid != 0:
        props["JMS_IBM_Character_Set"] = charset_of_ccsid(ccsid)
    if put_appl_type != MQAT_JAVA:
        props["JMS_IBM_PutApplType"] = Int(put_appl_type)
    last_key, stamp = _LAST_STAMP[0]
    if last_key != tms // 10:
        stamp = _put_stamp(tms)
    if put_stamp != stamp:
        put_date = put_stamp[:8].rstrip(b" \x00").decode("utf-8")
        put_time = put_stamp[8:].rstrip(b" \x00").decode("utf-8")
        if put_date or put_time:
            props["JMS_IBM_PutDate"] = put_date
            props["JMS_IBM_PutTime"] = put_time
    if msg_flags & MQMF_LAST_MSG_IN_GROUP:
        props["JMS_IBM_Last_Msg_In_Group"] = True
    return receive(kind, value, props, message_id, tms, correlation, reply, destination,
                   delivery_mode, backout > 0, jms_type, expiration, 0, priority, extra)


#: the last (JMSTimestamp // 10, PutDate + PutTime bytes) computed, replaced as one object
_LAST_STAMP: list[tuple[int, bytes]] = [(-1, b"")]


def _put_stamp(ms: int) -> bytes:
    """PutDate and PutTime as the 16 bytes the outgoing mapping writes for JMSTimestamp ``ms``."""
    key = ms // 10
    last_key, last = _LAST_STAMP[0]
    if last_key == key:
        return last
    date, time = _put_date_time(ms)
    out = (date.ljust(8) + time.ljust(8)).encode("utf-8")
    _LAST_STAMP[0] = (key, out)
    return out


def object_body(body: bytes, nul: bool, obj: str | None) -> Any:
    """An ObjectMessage body: null (``<ajms><Nul>`` and no bytes), an AMQP-typed value
    (``<ajms><Obj>amqp``) or Java bytes."""
    if nul and not body:
        return None
    if obj == "amqp":
        try:
            value, end = amqp_decode(body, 0, "ObjectMessage body")
        except Exception as exc:
            raise MQFormatError(
                f"AMQP-encoded ObjectMessage body is malformed: {exc}", structure="body"
            ) from None
        if end != len(body):
            raise MQFormatError(f"{len(body) - end} bytes after the AMQP value", structure="body", offset=end)
        return value
    return JavaSerializedObject(body)
