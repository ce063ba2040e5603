"""JMS -> MQ: IBM's outgoing mapping ("Mapping JMS fields onto IBM MQ fields").

Header fields go to the MQMD where IBM puts them, and to the RFH2 ``jms``/``mcd`` folders;
application properties go to ``usr`` (IBM's name rules enforced); ``JMSX*`` and ``JMS_IBM_*``
properties go to the MQMD fields of IBM's table. Where IBM is silent we choose, and say so:

* JMSMessageID ``ID:`` + 48 lower-case hex (not all zeros, which MQ reads as "none") -> MsgId;
  any other id is kept whole in the ``ajms`` folder (``Mid``) and MsgId gets a 24-byte BLAKE2b
  digest of it (stable, unique in practice).
* Other vendor properties (``JMSX*`` without an MQMD field, ``JMS_*``) cannot live in ``usr``
  (IBM reserves ``JMS``): they go, typed, in our own ``ajms`` folder, which IBM ignores.
* JMSDeliveryTime -> ``mqext`` ``Dlt`` (ms). Like IBM's client, ``jms``/``mqext`` elements carry
  no ``dt``: their types are fixed (Tms, Exp, Dlt i8; Pri, Dlv, Seq i4; the rest strings).
* A null TextMessage/ObjectMessage body is marked ``<ajms><Nul>1</Nul></ajms>`` so it does not
  come back as ``""``.
* An ObjectMessage holding a Java-serialized object sends its bytes (``Msd jms_object``); one
  holding an AMQP-typed value sends the AMQP encoding of it, marked ``<ajms><Obj>amqp</Obj>``.
* ``target_client="mq"`` sends no RFH2 (IBM's ``targetClient=MQ``): only what the MQMD holds
  survives; map and stream bodies go as their XML.

The optional C accelerator ``_mqout`` writes the common cases (usr folders and map/stream bodies
of plain values, provider ids, the MQMD + RFH2 + body in one bytes object) and returns None for
anything else, so the Python code here stays the one place that decides and names errors;
``AMQP_JMS_NO_ACCEL=1`` turns it off and the bytes are the same.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from .._accel import load_accelerator
from ..destination import Destination
from ..mapping.codec import encode_value as amqp_encode
from ..message import Message
from ..message._data import BodyKind, MessageData, view
from ._binary import byte_order, encode_char
from ._bodyshape import map_body, stream_body
from ._uri import destination_to_uri, split_jms_type
from ._usrshape import usr_folder
from .bodies import ccsid_from_charset, encode_map, encode_stream, encode_text
from .constants import (
    MQACT_NONE,
    MQAT_JAVA,
    MQCCSI_UTF8,
    MQCI_NONE,
    MQEI_UNLIMITED,
    MQENC_NATIVE,
    MQENC_NORMAL,
    MQENC_REVERSED,
    MQFMT_RF_HEADER_2,
    MQGI_NONE,
    MQMF_LAST_MSG_IN_GROUP,
    MQMF_MSG_IN_GROUP,
    MQMI_NONE,
    MQMT_DATAGRAM,
    MQMT_REQUEST,
    MQOL_UNDEFINED,
    MQPER_NOT_PERSISTENT,
    MQPER_PERSISTENT,
    REPORT_PROPERTIES,
)
from .errors import MQFormatError
from .message import MQMessage
from .mqmd import MQMD
from .rfh2 import rfh2_bytes
from .xmlfolder import _GOOD_USR_NAMES as _GOOD_NAMES
from .xmlfolder import (
    _NEEDS_WORK,
    BODY_DT,
    USR_DT,
    check_usr_name_cached,
    element,
    escape_text,
    fast_element,
    fast_parts,
)

__all__ = ["body_domain", "to_mq"]




#: the C accelerator (``_mqout``), or None: the Python path
_ACCEL = load_accelerator("amqp_jms.mq._mqout")
_MAX_EXPIRY_MS = (2**31 - 1) * 100  # 214748364.7 s
_ENCODINGS = {"native": MQENC_NATIVE, "little": MQENC_REVERSED, "reversed": MQENC_REVERSED}
_ENCODINGS.update({"big": MQENC_NORMAL, "normal": MQENC_NORMAL})


def _encoding(value: str | int) -> int:
    if isinstance(value, str):
        if value.lower() not in _ENCODINGS:
            raise MQFormatError(f"encoding {value!r}: expected native, big, little or an MQENC_* int")
        return _ENCODINGS[value.lower()]
    byte_order(value, "MQMD", "Encoding")
    return value


_DOMAINS = {
    "TextMessage": "jms_text",
    "BytesMessage": "jms_bytes",
    "MapMessage": "jms_map",
    "StreamMessage": "jms_stream",
    "ObjectMessage": "jms_object",
}
#: the same, by ``MessageData.kind``
_KIND_DOMAINS = {
    BodyKind.MESSAGE: "jms_none",
    BodyKind.TEXT: "jms_text",
    BodyKind.BYTES: "jms_bytes",
    BodyKind.MAP: "jms_map",
    BodyKind.STREAM: "jms_stream",
    BodyKind.OBJECT: "jms_object",
}


def body_domain(message: Any) -> str:
    """The ``mcd`` Msd of a message's JMS type: jms_none/text/bytes/map/stream/object."""
    return _DOMAINS.get(getattr(message, "jms_type", "Message"), "jms_none")


def _provider_id_py(value: str) -> bytes | None:
    """24 bytes for ``ID:`` + 48 lower-case hex digits, else None."""
    if len(value) == 51 and value.startswith("ID:"):
        digits = value[3:]
        try:
            raw = bytes.fromhex(digits)
        except ValueError:
            return None
        # fromhex also takes upper case and blanks: only 48 lower-case digits read back the same
        if raw.hex() == digits and raw != MQMI_NONE:  # all zeros is MQMI_NONE: "no id" to MQ
            return raw
    return None


_provider_id = _ACCEL.provider_id if _ACCEL is not None else _provider_id_py

#: the last (ms // 10, (PutDate, PutTime)) computed, replaced as one object (threads share it)
_LAST_PUT: list[tuple[int, tuple[str, str]]] = [(-1, ("", ""))]


def _put_date_time(ms: int) -> tuple[str, str]:
    """PutDate ``YYYYMMDD`` and PutTime ``HHMMSSTH`` (GMT, hundredths) for epoch ms."""
    key = ms // 10
    last_key, last = _LAST_PUT[0]
    if last_key == key:
        return last
    try:
        t = time.gmtime(ms // 1000)
    except (OverflowError, OSError, ValueError):
        raise MQFormatError(
            f"JMSTimestamp {ms} is outside the dates PutDate can hold", field="PutDate"
        ) from None
    if not 0 <= t.tm_year <= 9999:
        raise MQFormatError(f"JMSTimestamp {ms} is outside the dates PutDate can hold", field="PutDate")
    result = (
        f"{t.tm_year:04d}{t.tm_mon:02d}{t.tm_mday:02d}",
        f"{t.tm_hour:02d}{t.tm_min:02d}{t.tm_sec:02d}{(ms % 1000) // 10:02d}",
    )
    _LAST_PUT[0] = (key, result)
    return result


def _int_prop(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MQFormatError(f"must be an integer, not {type(value).__name__} {value!r}", field=name)
    if not -(2**31) <= value < 2**31:
        raise MQFormatError(f"{value} does not fit the MQLONG it maps to", field=name)
    return int(value)


def _str_prop(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise MQFormatError(f"must be a String, not {type(value).__name__} {value!r}", field=name)
    return value


def _xml_body(
    kind: int, values: Any, template: Callable[[Any], str | None], general: Callable[[Any], str], ccsid: int
) -> bytes:
    """A map (``kind`` 1) or stream (2) body: the C accelerator's elements in UTF-8, else the
    shape's ``template`` (``_bodyshape``), else the ``general`` writer (``bodies``), which checks
    every value and names the one it refuses."""
    if _ACCEL is not None and ccsid == MQCCSI_UTF8:
        raw = _ACCEL.xml_elements(kind, values, _GOOD_NAMES, BODY_DT)
        if raw is not None:
            return raw
    xml = template(values)
    return encode_text(general(values) if xml is None else xml, ccsid)


def _body(message: MessageData, domain: str, ccsid: int) -> tuple[bytes, str]:
    """(body bytes, the ``ajms`` element saying how to read them back: null body, AMQP-encoded
    object, or "")."""
    if domain == "jms_text":
        text = message.body
        if text is None:
            return b"", _NULL
        if ccsid == MQCCSI_UTF8 and type(text) is str:
            try:
                return text.encode(), ""
            except UnicodeEncodeError:
                pass  # encode_text names the character
        return encode_text(text, ccsid), ""
    if domain == "jms_bytes":
        body = message.body
        return (body if type(body) is bytes else bytes(body)), ""
    if domain == "jms_map":
        return _xml_body(1, message.body, map_body, encode_map, ccsid), ""
    if domain == "jms_stream":
        return _xml_body(2, message.body, stream_body, encode_stream, ccsid), ""
    if domain == "jms_object":
        obj = message.body
        if obj is None:
            return b"", _NULL
        java = type(obj).__name__ == "JavaSerializedObject"
        if java:
            data = getattr(obj, "data", None)
            if isinstance(data, bytes):
                return data, ""
        try:
            encoded = amqp_encode(obj)
        except Exception as exc:
            raise MQFormatError(
                f"ObjectMessage body cannot be AMQP-encoded: {exc}", structure="body"
            ) from exc
        return encoded, _AMQP_OBJECT if encoded and not java else ""
    return b"", ""


def to_mq(
    message: Message | MessageData,
    *,
    queue_manager: str | None = None,
    target_client: str = "jms",
    encoding: str | int = "native",
) -> MQMessage:
    """The MQ form of a JMS message (or of its ``MessageData``): an MQMD and the data (RFH2 +
    body) an MQPUT would send."""
    data = message if isinstance(message, MessageData) else view(message)
    if target_client != "jms" and target_client != "mq":
        raise MQFormatError(f"target_client {target_client!r}: expected 'jms' or 'mq'")
    if encoding == "native":
        enc, order = MQENC_NATIVE, "<"
    else:
        enc = _encoding(encoding)
        order = byte_order(enc, "MQMD")
    extra = data.extra or _NO_EXTRA
    domain = _KIND_DOMAINS[data.kind]
    body_ccsid = MQCCSI_UTF8
    body_enc = enc
    body_fmt = "MQSTR" if domain == "jms_text" else ""
    jms: list[str] = []
    usr: list[str] = []
    ajms: list[str] = []
    msg_flags = report = feedback = 0
    msg_type: int | None = None
    put_appl_type = MQAT_JAVA
    user_id = appl_name = put_date = put_time = ""
    group_id = MQGI_NONE
    seq = 1

    # ---- properties
    props = data.properties
    usr_text: str | bytes | None = None
    if props:
        if _ACCEL is not None:  # names checked before, common value types: straight to UTF-8
            usr_text = _ACCEL.xml_elements(0, props, _GOOD_NAMES, USR_DT)
        if usr_text is None:
            usr_text = usr_folder(props)
    if usr_text is not None:  # application properties only, in a shape seen before
        props = _NO_EXTRA
    elif _GOOD_NAMES.issuperset(props):  # application properties only, their names checked before
        search = _NEEDS_WORK.search
        usr = [
            f"<{n}>{v}</{n}>"
            if type(v) is str and search(v) is None
            else f"<{n}{p}</{n}>"
            if (p := fast_parts(v)) is not None
            else element(n, v, n)
            for n, v in props.items()
        ]
        props = _NO_EXTRA
    for name, value in props.items():
        if name[:3] != "JMS":  # an application property: the common case first
            if name not in _GOOD_NAMES:
                check_usr_name_cached(name)
            if type(value) is str and _NEEDS_WORK.search(value) is None:
                usr.append(f"<{name}>{value}</{name}>")
            else:
                usr.append(fast_element(name, value, name))
        elif name == "JMSXUserID":
            user_id = _trunc(_str_prop(name, value), 12, "UserIdentifier")
        elif name == "JMSXAppID":
            appl_name = _trunc(_str_prop(name, value), 28, "PutApplName")
        elif name == "JMSXGroupID":
            gid = _str_prop(name, value)
            gid_element = element("Gid", gid, name)  # first: it names characters XML/UTF-8 cannot carry
            raw = _provider_id(gid)
            group_id = raw if raw is not None else gid.encode("utf-8")[:24].ljust(24, b"\x00")
            msg_flags |= MQMF_MSG_IN_GROUP
            jms.append(gid_element)
        elif name == "JMSXGroupSeq":
            seq = _int_prop(name, value)
            msg_flags |= MQMF_MSG_IN_GROUP
            jms.append(f"<Seq>{seq}</Seq>")
        elif name == "JMSXDeliveryCount":
            continue  # receive-only: BackoutCount + 1
        elif name in REPORT_PROPERTIES:
            report |= _int_prop(name, value) & REPORT_PROPERTIES[name]
        elif name == "JMS_IBM_MsgType":
            msg_type = _int_prop(name, value)
        elif name == "JMS_IBM_Feedback":
            feedback = _int_prop(name, value)
        elif name == "JMS_IBM_Format":
            body_fmt = _str_prop(name, value).rstrip()
            encode_char(body_fmt, 8, "MQMD", "Format")
        elif name == "JMS_IBM_PutApplType":
            put_appl_type = _int_prop(name, value)
        elif name == "JMS_IBM_Encoding":
            body_enc = _int_prop(name, value)
        elif name == "JMS_IBM_Character_Set":
            body_ccsid = ccsid_from_charset(value)
        elif name == "JMS_IBM_PutDate":
            put_date = _str_prop(name, value)
        elif name == "JMS_IBM_PutTime":
            put_time = _str_prop(name, value)
        elif name == "JMS_IBM_Last_Msg_In_Group":
            if value is True or (isinstance(value, str) and value.lower() == "true"):
                msg_flags |= MQMF_LAST_MSG_IN_GROUP | MQMF_MSG_IN_GROUP
        else:
            ajms.append(element("p", value, name, allow_char=True, name_attr=name))

    # ---- headers, in the jms folder in IBM's order: Dst, Rto, then the rest as set
    dest = data.destination
    reply = data.reply_to
    dst_qm = extra.get("mq.dst_q_mgr") or queue_manager or "" if extra else queue_manager or ""
    rqm = extra.get("mq.reply_to_q_mgr") or queue_manager or "" if extra else queue_manager or ""
    priority = data.priority
    persistent = data.delivery_mode == 2
    if type(priority) is not int:
        _int_prop("JMSPriority", priority)  # raises, naming the header
    head, reply_q, reply_q_mgr, default_type = _head(dest, dst_qm, reply, rqm, priority, persistent)
    if jms:  # Gid/Seq go after Dst and Rto, before Pri and Dlv
        head = (
            _head(dest, dst_qm, reply, rqm, 4, None)[0]
            + "".join(jms)
            + _head(None, "", None, "", priority, persistent)[0]
        )
    cid_element = tms_element = exp_element = ""

    msg_id = MQMI_NONE
    mid = data.message_id
    if mid:
        raw = _provider_id(mid)
        if raw is None:
            raw = hashlib.blake2b(mid.encode("utf-8", "surrogatepass"), digest_size=24).digest()
            ajms.append(element("Mid", mid, "JMSMessageID"))
        msg_id = raw

    correl_id = MQCI_NONE
    cid = data.correlation_id
    if type(cid) is str and _ACCEL is not None and (found := _ACCEL.correlation(cid)) is not None:
        correl_id, cid_element = found  # a provider id, or a str that needs no escaping
    elif isinstance(cid, (bytes, bytearray)):
        correl_id = bytes(cid)[:24].ljust(24, b"\x00")
    elif cid is not None:
        raw = _provider_id(cid)
        if raw is not None:
            correl_id = raw
        else:
            correl_id = cid.encode("utf-8", "surrogatepass")[:24].ljust(24, b"\x00")
            if type(cid) is str and _NEEDS_WORK.search(cid) is None:
                cid_element = f"<Cid>{cid}</Cid>"
            else:
                cid_element = fast_element("Cid", cid, "JMSCorrelationID")

    ts = data.timestamp
    if ts:
        tms_element = f"<Tms>{int(ts)}</Tms>"
        if not put_date and not put_time:
            last_key, last = _LAST_PUT[0]  # _put_date_time's own cache, without the call
            put_date, put_time = last if last_key == ts // 10 else _put_date_time(ts)

    exp = data.expiration
    if exp:
        # TTL = expiration - send time; an unstamped message is being sent now
        ttl = exp - (ts or int(time.time() * 1000))
        expiry = MQEI_UNLIMITED if ttl > _MAX_EXPIRY_MS else max(1, -(-ttl // 100))
        exp_element = f"<Exp>{int(exp)}</Exp>"
    else:
        expiry = MQEI_UNLIMITED
    if msg_type is None:
        msg_type = default_type

    # the MQMD's field values, in its order (Version first, OriginalLength last)
    body, marker = _body(data, domain, body_ccsid)
    if target_client == "mq":  # the MQMD describes the body itself
        args = (
            2, report, msg_type, expiry, feedback, body_enc, body_ccsid, body_fmt, priority,
            MQPER_PERSISTENT if persistent else MQPER_NOT_PERSISTENT, msg_id, correl_id, 0, reply_q,
            reply_q_mgr, user_id, MQACT_NONE, "", put_appl_type, appl_name, put_date, put_time, "",
            group_id, seq, 0, msg_flags, MQOL_UNDEFINED,
        )  # fmt: skip
        try:  # the MQMD is in the byte order of its own Encoding, the body's here
            md_order = byte_order(body_enc, "MQMD")
        except MQFormatError:  # to_bytes() says so
            return MQMessage(MQMD(*args), body)
        return _message(md_order, args, None, [], body)
    args = (
        2, report, msg_type, expiry, feedback, enc, MQCCSI_UTF8, _RF_HEADER_2, priority,
        MQPER_PERSISTENT if persistent else MQPER_NOT_PERSISTENT, msg_id, correl_id, 0, reply_q, reply_q_mgr,
        user_id, MQACT_NONE, "", put_appl_type, appl_name, put_date, put_time, "", group_id, seq, 0,
        msg_flags, MQOL_UNDEFINED,
    )  # fmt: skip

    # ---- RFH2
    mcd = _MCD.get((domain, data.type))
    folders: list[str | bytes] = [
        _mcd_folder(domain, data.type) if mcd is None else mcd,
        f"<jms>{head}{cid_element}{tms_element}{exp_element}</jms>",
    ]
    if usr_text is not None:
        folders.append(usr_text)
    elif usr:
        folders.append("<usr>" + "".join(usr) + "</usr>")
    if data.delivery_time:
        folders.append(f"<mqext><Dlt>{int(data.delivery_time)}</Dlt></mqext>")
    if ajms:
        folders.append("<ajms>" + "".join(ajms) + marker + "</ajms>")
    elif marker:
        folders.append(_MARKER_FOLDERS[marker])
    if extra:
        folders.extend(bytes(f) for f in extra.get("mq.folders", ()))
    rfh2 = (body_enc, body_ccsid, body_fmt)
    if _ACCEL is not None:  # as _message does, without the call
        raw_message = _ACCEL.assemble(order == ">", args, rfh2, folders, body)
        if raw_message is not None:
            return _assembled(raw_message, args)
    return _message(order, args, rfh2, folders, body)


def _message(
    order: str, args: tuple[Any, ...], rfh2: tuple[int, int, str] | None, folders: list[str | bytes],
    body: bytes,
) -> MQMessage:  # fmt: skip
    """The MQMessage of an MQMD's field values, an RFH2 (Encoding, CCSID, Format; None: no RFH2)
    with these folders, and the body: assembled by the C accelerator when it takes them all."""
    if _ACCEL is not None:
        raw = _ACCEL.assemble(order == ">", args, rfh2, folders, body)
        if raw is not None:
            return _assembled(raw, args)
    md = MQMD(*args)
    if rfh2 is None:
        return MQMessage(md, body)
    try:
        raw_folders = [f.encode("utf-8") if isinstance(f, str) else f for f in folders]
    except UnicodeEncodeError as exc:
        raise MQFormatError(f"a value is not encodable as UTF-8: {exc}", structure="MQRFH2") from None
    return MQMessage(md, rfh2_bytes(order, *rfh2, raw_folders, body))


_assembled = MQMessage._assembled
_NULL = "<Nul>1</Nul>"  # a null Text/ObjectMessage body, not ""
_AMQP_OBJECT = "<Obj>amqp</Obj>"  # an ObjectMessage body holding the AMQP encoding of its value
_MARKER_FOLDERS = {m: f"<ajms>{m}</ajms>".encode() for m in (_NULL, _AMQP_OBJECT)}
_NO_EXTRA: dict[str, Any] = {}
_RF_HEADER_2 = MQFMT_RF_HEADER_2.rstrip()
#: ``mcd`` folders by (Msd, JMSType): producers send few types, so each is built once
_MCD: dict[tuple[str, str | None], bytes] = {}
#: ``<Dst>``/``<Rto>`` elements by destination and queue manager: producers use few
_URI_ELEMENTS: dict[tuple[str, type, str, str], str] = {}
_LIMIT = 1024


def _mcd_folder(domain: str, jms_type: str | None) -> bytes:
    key = (domain, jms_type)
    out = _MCD.get(key)
    if out is None:
        mcd = [f"<Msd>{domain}</Msd>"]
        if jms_type is not None:
            type_, set_, fmt = split_jms_type(jms_type, domain)
            if set_:
                mcd.append(f"<Set>{escape_text(set_, 'JMSType')}</Set>")
            mcd.append(f"<Type>{escape_text(type_, 'JMSType')}</Type>")
            if fmt:
                mcd.append(f"<Fmt>{escape_text(fmt, 'JMSType')}</Fmt>")
        out = ("<mcd>" + "".join(mcd) + "</mcd>").encode("utf-8")
        if len(_MCD) >= _LIMIT:
            _MCD.clear()
        _MCD[key] = out
    return out


#: the start of jms folders (Dst, Rto, Pri, Dlv) with the ReplyToQ/ReplyToQMgr and MsgType they
#: imply, by destinations, queue managers, priority and delivery mode: a producer uses few
_HEADS: dict[tuple[Any, ...], tuple[str, str, str, int]] = {}


def _head(
    dest: Destination | None, dst_qm: str, reply: Destination | None, rqm: str, priority: int,
    persistent: bool | None,
) -> tuple[str, str, str, int]:  # fmt: skip
    """``<Dst>``, ``<Rto>``, ``<Pri>`` (when not 4) and ``<Dlv>`` (unless ``persistent`` is None)
    as one string, with MQMD.ReplyToQ and ReplyToQMgr for the reply-to destination and the
    MsgType it implies (a request when replies go to a queue)."""
    key = (
        type(dest), None if dest is None else dest._name, dst_qm,
        type(reply), None if reply is None else reply._name, rqm, priority, persistent,
    )  # fmt: skip
    out = _HEADS.get(key)
    if out is None:
        parts = []
        if dest is not None:
            parts.append(_uri_element("Dst", dest, dst_qm))
        reply_q = reply_q_mgr = ""
        if reply is not None:
            parts.append(_uri_element("Rto", reply, rqm))
            if reply.is_queue and _fits_48(reply.name):
                reply_q, reply_q_mgr = reply.name, rqm
        if priority != 4:
            parts.append(f"<Pri>{_int_prop('JMSPriority', priority)}</Pri>")
        if persistent is not None:
            parts.append("<Dlv>2</Dlv>" if persistent else "<Dlv>1</Dlv>")
        request = reply is not None and reply.is_queue
        out = ("".join(parts), reply_q, reply_q_mgr, MQMT_REQUEST if request else MQMT_DATAGRAM)
        if len(_HEADS) >= _LIMIT:
            _HEADS.clear()
        _HEADS[key] = out
    return out


def _fits_48(name: str) -> bool:
    """Whether a queue name fits MQMD.ReplyToQ (48 bytes)."""
    return len(name) <= 12 or len(name.encode("utf-8")) <= 48


def _uri_element(tag: str, dest: Destination, q_mgr: str) -> str:
    key = (tag, type(dest), dest._name, q_mgr)
    out = _URI_ELEMENTS.get(key)
    if out is None:
        out = fast_element(tag, destination_to_uri(dest, q_mgr, tag), tag)
        if len(_URI_ELEMENTS) >= _LIMIT:
            _URI_ELEMENTS.clear()
        _URI_ELEMENTS[key] = out
    return out


def _trunc(value: str, width: int, field: str) -> str:
    raw = encode_char(value, width, "MQMD", field, truncate=True)
    return raw.rstrip(b" ").decode("utf-8")
