"""MQMD (message descriptor, versions 1 and 2) and MQMDE (its extension) as bytes.

The layouts are IBM's ``cmqc.h`` byte for byte: version 1 is 324 bytes, version 2 adds the group
and segmentation fields for 364. Integer fields are MQLONG (signed 32-bit) in the byte order
named by the MQMD's own ``Encoding`` on write (so a big-endian message is big-endian throughout);
on read the byte order is detected from ``Version``, which must be 1 or 2. A version 1 MQMD may be
followed by an MQMDE (Format ``MQHMDE``) that carries the version 2 fields; ``absorb_mqmde``
folds it in.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import ClassVar, NoReturn

from ._binary import byte_order, encode_char, read_char
from .constants import (
    MQACT_NONE,
    MQAT_NO_CONTEXT,
    MQCCSI_Q_MGR,
    MQCI_NONE,
    MQEI_UNLIMITED,
    MQENC_NATIVE,
    MQFB_NONE,
    MQFMT_MD_EXTENSION,
    MQFMT_NONE,
    MQGI_NONE,
    MQMD_LENGTH_1,
    MQMD_LENGTH_2,
    MQMD_STRUC_ID,
    MQMD_VERSION_2,
    MQMDE_LENGTH_2,
    MQMDE_STRUC_ID,
    MQMDE_VERSION_2,
    MQMF_NONE,
    MQMI_NONE,
    MQMT_DATAGRAM,
    MQOL_UNDEFINED,
    MQPER_PERSISTENCE_AS_Q_DEF,
    MQPRI_PRIORITY_AS_Q_DEF,
    MQRO_NONE,
)
from .errors import MQFormatError

__all__ = ["MQMD", "MQMDE", "MQMD_FIELDS"]

# (attribute, IBM field name, kind, width, offset); kind: "l" MQLONG, "c" MQCHAR, "b" MQBYTE
MQMD_FIELDS: tuple[tuple[str, str, str, int, int], ...] = (
    ("version", "Version", "l", 4, 4),
    ("report", "Report", "l", 4, 8),
    ("msg_type", "MsgType", "l", 4, 12),
    ("expiry", "Expiry", "l", 4, 16),
    ("feedback", "Feedback", "l", 4, 20),
    ("encoding", "Encoding", "l", 4, 24),
    ("coded_char_set_id", "CodedCharSetId", "l", 4, 28),
    ("format", "Format", "c", 8, 32),
    ("priority", "Priority", "l", 4, 40),
    ("persistence", "Persistence", "l", 4, 44),
    ("msg_id", "MsgId", "b", 24, 48),
    ("correl_id", "CorrelId", "b", 24, 72),
    ("backout_count", "BackoutCount", "l", 4, 96),
    ("reply_to_q", "ReplyToQ", "c", 48, 100),
    ("reply_to_q_mgr", "ReplyToQMgr", "c", 48, 148),
    ("user_identifier", "UserIdentifier", "c", 12, 196),
    ("accounting_token", "AccountingToken", "b", 32, 208),
    ("appl_identity_data", "ApplIdentityData", "c", 32, 240),
    ("put_appl_type", "PutApplType", "l", 4, 272),
    ("put_appl_name", "PutApplName", "c", 28, 276),
    ("put_date", "PutDate", "c", 8, 304),
    ("put_time", "PutTime", "c", 8, 312),
    ("appl_origin_data", "ApplOriginData", "c", 4, 320),
    ("group_id", "GroupId", "b", 24, 324),
    ("msg_seq_number", "MsgSeqNumber", "l", 4, 348),
    ("offset", "Offset", "l", 4, 352),
    ("msg_flags", "MsgFlags", "l", 4, 356),
    ("original_length", "OriginalLength", "l", 4, 360),
)
_V1_COUNT = 23  # fields through ApplOriginData

_CODE = {"l": "i", "c": "s", "b": "s"}


def _layout(count: int) -> str:
    parts = ["4s"]
    for _attr, _name, kind, width, _off in MQMD_FIELDS[:count]:
        parts.append("i" if kind == "l" else f"{width}s")
    return "".join(parts)


_STRUCTS: dict[tuple[int, str], struct.Struct] = {
    (v, order): struct.Struct(order + _layout(len(MQMD_FIELDS) if v == 2 else _V1_COUNT))
    for v in (1, 2)
    for order in "<>"
}
assert _STRUCTS[(2, ">")].size == MQMD_LENGTH_2 and _STRUCTS[(1, ">")].size == MQMD_LENGTH_1

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_KIND_NAMES = {"l": "an int (MQLONG)", "c": "a str (MQCHAR)", "b": "bytes (MQBYTE)"}
_CHAR_INDEXES = {
    v: [i for i, f in enumerate(MQMD_FIELDS[: len(MQMD_FIELDS) if v == 2 else _V1_COUNT]) if f[2] == "c"]
    for v in (1, 2)
}


#: Version's 4 bytes -> (byte order, version, bytes needed)
_VERSIONS = {
    (1).to_bytes(4, "big"): (">", 1, MQMD_LENGTH_1),
    (2).to_bytes(4, "big"): (">", 2, MQMD_LENGTH_2),
    (1).to_bytes(4, "little"): ("<", 1, MQMD_LENGTH_1),
    (2).to_bytes(4, "little"): ("<", 2, MQMD_LENGTH_2),
}


def _refuse(data: bytes, offset: int) -> NoReturn:
    """Raise the MQFormatError naming why no MQMD starts at ``offset``."""
    avail = len(data) - offset
    if avail < 8:
        raise MQFormatError(
            f"needs at least 8 bytes, {max(avail, 0)} available",
            structure="MQMD",
            offset=offset,
        )
    if data[offset : offset + 4] != MQMD_STRUC_ID:
        raise MQFormatError(
            f"StrucId is {data[offset : offset + 4]!r}, expected b'MD  '",
            structure="MQMD",
            field="StrucId",
            offset=offset,
        )
    found = _VERSIONS.get(data[offset + 4 : offset + 8])
    if found is None:
        big = int.from_bytes(data[offset + 4 : offset + 8], "big")
        little = int.from_bytes(data[offset + 4 : offset + 8], "little")
        raise MQFormatError(
            f"Version is neither 1 nor 2 in either byte order ({big} big-endian, {little} little-endian)",
            structure="MQMD",
            field="Version",
            offset=offset + 4,
        )
    _order, version, size = found
    raise MQFormatError(
        f"version {version} needs {size} bytes, {avail} available",
        structure="MQMD",
        offset=offset,
    )


class _Slow(Exception):
    """Internal: leave the fast path for the checked one."""


_BLANKS = {w: b" " * w for w in (4, 8, 12, 28, 32, 48)}
#: decoded character fields by their raw bytes: blanks, Formats, queue names, dates repeat
_CHARS: dict[bytes, str] = {}


#: encoded character fields by width and value (Formats, queue names, dates repeat)
_PADDED: dict[int, dict[str, bytes]] = {w: {} for w in _BLANKS}


def _char(value: str, width: int) -> bytes:
    cache = _PADDED[width]
    out = cache.get(value)
    if out is None:
        if type(value) is not str:
            raise _Slow
        raw = value.encode("utf-8")
        if len(raw) > width:
            raise _Slow
        out = raw.ljust(width, b" ")
        if len(cache) >= 1024:
            cache.clear()
        cache[value] = out
    return out


#: the character fields that stay the same for a sender (Format, ReplyToQ, ReplyToQMgr,
#: UserIdentifier, ApplIdentityData, PutApplName, ApplOriginData), encoded together
_CHAR_SETS: dict[tuple[str, ...], tuple[bytes, ...]] = {}
_CHAR_WIDTHS = (8, 48, 48, 12, 32, 28, 4)


def _char_set(key: tuple[str, ...]) -> tuple[bytes, ...]:
    out = tuple(_char(v, w) for v, w in zip(key, _CHAR_WIDTHS))  # raises _Slow when in doubt
    if len(_CHAR_SETS) >= 1024:
        _CHAR_SETS.clear()
    _CHAR_SETS[key] = out
    return out



def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_mqlong(value: object) -> bool:
    """An MQLONG: a 32-bit signed integer (a bool is not one)."""
    return _is_int(value) and _INT_MIN <= value <= _INT_MAX  # type: ignore[operator]

@dataclass(slots=True)
class MQMD:
    """The message descriptor, with IBM's initial values (``MQMD_DEFAULT``) except ``version``,
    which defaults to 2 because that is what carries group fields without an MQMDE."""

    version: int = MQMD_VERSION_2
    report: int = MQRO_NONE
    msg_type: int = MQMT_DATAGRAM
    expiry: int = MQEI_UNLIMITED
    feedback: int = MQFB_NONE
    encoding: int = MQENC_NATIVE
    coded_char_set_id: int = MQCCSI_Q_MGR
    format: str = MQFMT_NONE
    priority: int = MQPRI_PRIORITY_AS_Q_DEF
    persistence: int = MQPER_PERSISTENCE_AS_Q_DEF
    msg_id: bytes = MQMI_NONE
    correl_id: bytes = MQCI_NONE
    backout_count: int = 0
    reply_to_q: str = ""
    reply_to_q_mgr: str = ""
    user_identifier: str = ""
    accounting_token: bytes = MQACT_NONE
    appl_identity_data: str = ""
    put_appl_type: int = MQAT_NO_CONTEXT
    put_appl_name: str = ""
    put_date: str = ""
    put_time: str = ""
    appl_origin_data: str = ""
    group_id: bytes = MQGI_NONE
    msg_seq_number: int = 1
    offset: int = 0
    msg_flags: int = MQMF_NONE
    original_length: int = MQOL_UNDEFINED

    STRUCTURE: ClassVar[str] = "MQMD"

    @property
    def length(self) -> int:
        """Bytes this MQMD occupies (324 for version 1, 364 for 2): where the data after it starts."""
        return MQMD_LENGTH_2 if self.version >= 2 else MQMD_LENGTH_1

    def check_types(self) -> None:
        """MQFormatError naming the first field whose Python type no MQMD field can have.

        ``unpack`` always yields well-typed fields, but an MQMD built by hand reaches ``from_mq``
        as is; without this a str where an MQLONG belongs surfaces as a bare TypeError far from
        the field that caused it.
        """
        for attr, name, kind, _width, _off in MQMD_FIELDS:
            value = getattr(self, attr)
            if kind == "l":
                if _is_int(value) and not _is_mqlong(value):  # the right type, out of range
                    raise MQFormatError(f"{value!r} is not a 32-bit MQLONG", structure="MQMD", field=name)
                ok = _is_int(value)
            elif kind == "c":
                ok = isinstance(value, str)
            else:
                ok = isinstance(value, (bytes, bytearray))
            if not ok:
                raise MQFormatError(
                    f"must be {_KIND_NAMES[kind]}, not {type(value).__name__}", structure="MQMD", field=name
                )

    def pack(self, order: str | None = None) -> bytes:
        """The MQMD as bytes, in ``order`` (``">"``/``"<"``) or the byte order of its own Encoding."""
        if order is None:
            order = byte_order(self.encoding, "MQMD", "Encoding")
        try:
            # fast path: one struct call; any doubt (too long, wrong type, out of range) -> checked path
            if (
                len(self.msg_id) != 24
                or len(self.correl_id) != 24
                or len(self.accounting_token) != 32
                or len(self.group_id) != 24
            ):
                raise _Slow
            c = _char
            key = (
                self.format, self.reply_to_q, self.reply_to_q_mgr, self.user_identifier,
                self.appl_identity_data, self.put_appl_name, self.appl_origin_data,
            )  # fmt: skip
            chars = _CHAR_SETS.get(key)
            if chars is None:
                chars = _char_set(key)
            fmt, rq, rqm, uid, aid, pan, origin = chars
            values = (
                MQMD_STRUC_ID, self.version, self.report, self.msg_type, self.expiry, self.feedback,
                self.encoding, self.coded_char_set_id, fmt, self.priority, self.persistence,
                self.msg_id, self.correl_id, self.backout_count, rq, rqm, uid, self.accounting_token, aid,
                self.put_appl_type, pan, c(self.put_date, 8), c(self.put_time, 8), origin,
                self.group_id, self.msg_seq_number, self.offset, self.msg_flags, self.original_length,
            )  # fmt: skip
            if self.version == 2:
                return _STRUCTS[(2, order)].pack(*values)
            if self.version == 1:
                return _STRUCTS[(1, order)].pack(*values[:24])
        except (_Slow, struct.error, AttributeError, TypeError, UnicodeEncodeError):
            pass
        return self._pack_checked(order)

    def _pack_checked(self, order: str) -> bytes:
        """Field-by-field packing that names the first bad field."""
        if self.version not in (1, 2):
            raise MQFormatError(f"version {self.version} is not 1 or 2", structure="MQMD", field="Version")
        count = len(MQMD_FIELDS) if self.version == 2 else _V1_COUNT
        values: list[object] = [MQMD_STRUC_ID]
        for attr, name, kind, width, _off in MQMD_FIELDS[:count]:
            value = getattr(self, attr)
            if kind == "l":
                if not _is_mqlong(value):
                    raise MQFormatError(f"{value!r} is not a 32-bit MQLONG", structure="MQMD", field=name)
                values.append(value)
            elif kind == "c":
                values.append(encode_char(value, width, "MQMD", name))
            else:
                if not isinstance(value, (bytes, bytearray)) or len(value) != width:
                    raise MQFormatError(f"must be {width} bytes, got {value!r}", structure="MQMD", field=name)
                values.append(bytes(value))
        return _STRUCTS[(self.version, order)].pack(*values)

    @classmethod
    def unpack(cls, data: bytes, offset: int = 0) -> tuple[MQMD, str]:
        """Read an MQMD at ``offset``; returns it and the byte order it was in (``">"``/``"<"``)."""
        if type(data) is not bytes:
            data = bytes(data)
        found = _VERSIONS.get(data[offset + 4 : offset + 8])
        if found is None or not data.startswith(MQMD_STRUC_ID, offset) or len(data) - offset < found[2]:
            _refuse(data, offset)
        order, version, _size = found
        st = _STRUCTS[(version, order)]
        values = list(st.unpack_from(data, offset))
        del values[0]
        chars = _CHARS
        for i in _CHAR_INDEXES[version]:
            raw = values[i]
            text = chars.get(raw)
            if text is None:
                try:
                    text = raw.rstrip(b" \x00").decode("utf-8")
                except UnicodeDecodeError:
                    _attr, name, _kind, _width, off = MQMD_FIELDS[i]
                    read_char(raw, "MQMD", name, offset + off)  # raises, naming field and offset
                    raise
                if len(chars) >= 4096:
                    chars.clear()
                chars[raw] = text
            values[i] = text
        return cls(*values), order

    def copy(self) -> MQMD:
        """An independent copy (MQMD is a mutable dataclass): change the copy's fields without
        touching the descriptor of the message it came from."""
        return replace(self)

    def to_dict(self) -> dict[str, object]:
        """IBM field name -> value (the names Wireshark and dmpmqmsg show)."""
        return {name: getattr(self, attr) for attr, name, *_ in MQMD_FIELDS}


_MQMDE = struct.Struct("<4siiii8si24siiii")
assert _MQMDE.size == MQMDE_LENGTH_2


@dataclass(slots=True)
class MQMDE:
    """The message descriptor extension: version 2 MQMD fields carried after a version 1 MQMD."""

    encoding: int = MQENC_NATIVE
    coded_char_set_id: int = MQCCSI_Q_MGR
    format: str = MQFMT_NONE
    flags: int = 0
    group_id: bytes = MQGI_NONE
    msg_seq_number: int = 1
    offset: int = 0
    msg_flags: int = MQMF_NONE
    original_length: int = MQOL_UNDEFINED

    def pack(self, order: str) -> bytes:
        """The MQMDE in ``order``: the MQMD before it decides (its Encoding), so it is passed in,
        not read from ``self.encoding`` (which describes the data after the MQMDE)."""
        try:
            return struct.pack(
                order + "4siiii8si24siiii",
                MQMDE_STRUC_ID,
                MQMDE_VERSION_2,
                MQMDE_LENGTH_2,
                self.encoding,
                self.coded_char_set_id,
                encode_char(self.format, 8, "MQMDE", "Format"),
                self.flags,
                bytes(self.group_id).ljust(24, b"\x00")[:24],
                self.msg_seq_number,
                self.offset,
                self.msg_flags,
                self.original_length,
            )
        except struct.error as exc:
            raise MQFormatError(str(exc), structure="MQMDE") from exc

    @classmethod
    def unpack(cls, data: bytes, offset: int, order: str) -> tuple[MQMDE, int]:
        """Read an MQMDE at ``offset`` in byte order ``order``; returns it and its StrucLength."""
        if len(data) - offset < _MQMDE.size:
            raise MQFormatError(
                f"needs {_MQMDE.size} bytes, {max(len(data) - offset, 0)} available",
                structure="MQMDE",
                offset=offset,
            )
        st = struct.Struct(order + "4siiii8si24siiii")
        sid, version, length, enc, ccsid, fmt, flags, gid, seq, off, mflags, olen = st.unpack_from(
            data, offset
        )
        if sid != MQMDE_STRUC_ID:
            raise MQFormatError(
                f"StrucId is {sid!r}, expected b'MDE '", structure="MQMDE", field="StrucId", offset=offset
            )
        if version != MQMDE_VERSION_2:
            raise MQFormatError(
                f"Version {version} is not 2", structure="MQMDE", field="Version", offset=offset + 4
            )
        if length < MQMDE_LENGTH_2 or length % 4 or offset + length > len(data):
            raise MQFormatError(
                f"StrucLength {length} is not a multiple of 4 between {MQMDE_LENGTH_2} and the data's end",
                structure="MQMDE",
                field="StrucLength",
                offset=offset + 8,
            )
        mde = cls(
            encoding=enc,
            coded_char_set_id=ccsid,
            format=read_char(fmt, "MQMDE", "Format", offset + 20),
            flags=flags,
            group_id=gid,
            msg_seq_number=seq,
            offset=off,
            msg_flags=mflags,
            original_length=olen,
        )
        return mde, length


def absorb_mqmde(md: MQMD, data: bytes, order: str, start: int = 0) -> tuple[MQMD, int]:
    """If ``md`` is followed (at ``data[start:]``) by an MQMDE (Format ``MQHMDE``), fold it into a
    version 2 copy of ``md`` and return that and the MQMDE's length; otherwise ``(md, 0)``."""
    if md.format.rstrip() != MQFMT_MD_EXTENSION.rstrip():
        return md, 0
    mde, length = MQMDE.unpack(data, start, order)
    merged = replace(
        md,
        version=MQMD_VERSION_2,
        encoding=mde.encoding,
        coded_char_set_id=mde.coded_char_set_id,
        format=mde.format,
        group_id=mde.group_id,
        msg_seq_number=mde.msg_seq_number,
        offset=mde.offset,
        msg_flags=mde.msg_flags,
        original_length=mde.original_length,
    )
    return merged, length
