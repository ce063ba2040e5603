"""MQRFH2 (rules and formatting header 2): the fixed 36 bytes and the folder pairs, and header chains.

An RFH2 is ``StrucId "RFH ", Version 2, StrucLength, Encoding, CodedCharSetId, Format, Flags,
NameValueCCSID`` followed by ``NameValueLength`` + ``NameValueData`` pairs, one per folder. Its
integers are in the byte order of the *preceding* header's Encoding; its own Encoding/CCSID/Format
describe what follows it, which may be another RFH2 (Format ``MQHRF2``). Folders are kept as their
raw bytes, so folders this package does not understand go back out byte for byte.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ._binary import byte_order, encode_char, read_char
from .constants import (
    MQCCSI_UTF8,
    MQENC_NATIVE,
    MQFMT_NONE,
    MQFMT_RF_HEADER_2,
    MQRFH_STRUC_ID,
    MQRFH_STRUC_LENGTH_FIXED_2,
    MQRFH_VERSION_2,
)
from .errors import MQFormatError

__all__ = ["MQRFH2", "ParsedData", "folder_texts", "pad_folder", "parse_headers", "read_chain", "rfh2_bytes"]

_FIXED = {o: struct.Struct(o + "4siiii8sii") for o in "<>"}
_LEN = {o: struct.Struct(o + "i") for o in "<>"}
_UTF16 = {1200, 13488, 17584}
_RF_HEADER_2 = MQFMT_RF_HEADER_2.rstrip()


def _nv_codec(ccsid: int, order: str) -> str:
    if ccsid == MQCCSI_UTF8:
        return "utf-8"
    if ccsid in _UTF16:
        return "utf-16-be" if order == ">" else "utf-16-le"
    raise MQFormatError(
        f"NameValueCCSID {ccsid} is not one MQ allows (1208, 1200, 13488, 17584)",
        structure="MQRFH2",
        field="NameValueCCSID",
    )


def pad_folder(raw: bytes) -> bytes:
    """Blank-pad folder bytes to a multiple of 4, as NameValueLength requires."""
    return raw + b" " * (-len(raw) % 4)


@dataclass(slots=True)
class MQRFH2:
    """One RFH2. ``folders`` are raw NameValueData bytes (padding included); ``encoding``,
    ``coded_char_set_id`` and ``format`` describe the data after this header."""

    encoding: int = MQENC_NATIVE
    coded_char_set_id: int = MQCCSI_UTF8
    format: str = MQFMT_NONE
    flags: int = 0
    name_value_ccsid: int = MQCCSI_UTF8
    folders: list[bytes] = field(default_factory=list)
    order: str = ">"

    def add_folder(self, xml: str) -> None:
        """Append a folder given as XML text, encoded in NameValueCCSID and padded."""
        codec = _nv_codec(self.name_value_ccsid, self.order)
        try:
            raw = xml.encode(codec)
        except UnicodeEncodeError as exc:
            raise MQFormatError(
                f"folder text is not encodable: {exc}", structure="MQRFH2", field="NameValueData"
            ) from exc
        if codec.startswith("utf-16") and len(raw) % 4:
            raw += " ".encode(codec)
        self.folders.append(pad_folder(raw))

    def folder_texts(self) -> list[str]:
        """Each folder decoded and stripped of its blank/NUL padding."""
        return folder_texts(self.folders, self.name_value_ccsid, self.order)

    @property
    def struc_length(self) -> int:
        """StrucLength as written: the fixed part plus every folder with its length word, padded to
        a multiple of 4 as IBM requires (readers find the next header with it)."""
        return MQRFH_STRUC_LENGTH_FIXED_2 + sum(4 + len(pad_folder(f)) for f in self.folders)

    def pack(self, order: str | None = None) -> bytes:
        """The header in ``order`` (the byte order of the preceding header's Encoding)."""
        order = order or self.order
        parts = []
        try:
            parts.append(
                _FIXED[order].pack(
                    MQRFH_STRUC_ID,
                    MQRFH_VERSION_2,
                    self.struc_length,
                    self.encoding,
                    self.coded_char_set_id,
                    encode_char(self.format, 8, "MQRFH2", "Format"),
                    self.flags,
                    self.name_value_ccsid,
                )
            )
        except struct.error as exc:
            raise MQFormatError(
                f"an integer field does not fit an MQLONG: {exc}", structure="MQRFH2"
            ) from exc
        ln = _LEN[order]
        for raw in self.folders:
            padded = pad_folder(raw)
            parts.append(ln.pack(len(padded)))
            parts.append(padded)
        return b"".join(parts)

    @classmethod
    def unpack(cls, data: bytes | memoryview, offset: int, order: str) -> tuple[MQRFH2, int]:
        """Read an RFH2 at ``offset`` with integers in ``order``; returns it and its StrucLength."""
        enc, ccsid, fmt, flags, nvccsid, folders, length = _read(data, offset, order)
        rfh = cls(enc, ccsid, fmt, flags, nvccsid, folders, order)
        return rfh, length


def folder_texts(folders: list[bytes], nvccsid: int, order: str) -> list[str]:
    """Folder bytes decoded in NameValueCCSID and stripped of their blank/NUL padding."""
    if nvccsid == MQCCSI_UTF8:
        try:
            return [raw.decode("utf-8").rstrip(" \x00") for raw in folders]
        except UnicodeDecodeError:
            pass  # find and name the bad folder below
    codec = _nv_codec(nvccsid, order)
    out = []
    for i, raw in enumerate(folders):
        try:
            text = raw.decode(codec)
        except UnicodeDecodeError as exc:
            raise MQFormatError(
                f"folder {i} is not valid {codec}: {exc.reason} at byte {exc.start}",
                structure="MQRFH2",
                field="NameValueData",
            ) from exc
        out.append(text.rstrip(" \x00"))
    return out


#: one RFH2's fields: Encoding, CodedCharSetId, Format, Flags, NameValueCCSID, folders, StrucLength
Fields = tuple[int, int, str, int, int, list[bytes], int]
_FORMATS: dict[bytes, str] = {}


def _read(data: bytes | memoryview, offset: int, order: str) -> Fields:
    """The checked fields of the RFH2 at ``offset`` (integers in ``order``)."""
    avail = len(data) - offset
    if avail < MQRFH_STRUC_LENGTH_FIXED_2:
        raise MQFormatError(
            f"needs {MQRFH_STRUC_LENGTH_FIXED_2} bytes for the fixed part, {max(avail, 0)} available",
            structure="MQRFH2",
            offset=offset,
        )
    sid, version, length, enc, ccsid, fmt, flags, nvccsid = _FIXED[order].unpack_from(data, offset)
    if sid != MQRFH_STRUC_ID:
        raise MQFormatError(
            f"StrucId is {sid!r}, expected b'RFH '", structure="MQRFH2", field="StrucId", offset=offset
        )
    if version != MQRFH_VERSION_2:
        raise MQFormatError(
            f"Version is {version}, expected 2 (integers read "
            f"{'big' if order == '>' else 'little'}-endian as the preceding header's Encoding says)",
            structure="MQRFH2",
            field="Version",
            offset=offset + 4,
        )
    if length < MQRFH_STRUC_LENGTH_FIXED_2 or length % 4 or length > avail:
        raise MQFormatError(
            f"StrucLength {length} must be a multiple of 4 from 36 up to the {avail} bytes available",
            structure="MQRFH2",
            field="StrucLength",
            offset=offset + 8,
        )
    if nvccsid != MQCCSI_UTF8:
        _nv_codec(nvccsid, order)  # validate now, so a bad CCSID is reported at parse time
    folders = []
    pos = offset + MQRFH_STRUC_LENGTH_FIXED_2
    end = offset + length
    unpack_len = _LEN[order].unpack_from
    while pos < end:
        if end - pos < 4:
            raise MQFormatError(
                f"{end - pos} bytes left before StrucLength's end, too few for a NameValueLength",
                structure="MQRFH2",
                field="NameValueLength",
                offset=pos,
            )
        (n,) = unpack_len(data, pos)
        pos += 4
        if n < 0 or n > end - pos:
            raise MQFormatError(
                f"NameValueLength {n} overruns the header (StrucLength {length} ends at offset {end})",
                structure="MQRFH2",
                field="NameValueLength",
                offset=pos - 4,
            )
        folders.append(data[pos : pos + n] if type(data) is bytes else bytes(data[pos : pos + n]))
        pos += n
    text = _FORMATS.get(fmt)  # Formats are a handful of names: decode each once
    if text is None:
        text = read_char(fmt, "MQRFH2", "Format", offset + 20)
        if len(_FORMATS) < 256:
            _FORMATS[fmt] = text
    return enc, ccsid, text, flags, nvccsid, folders, length


@dataclass(slots=True)
class ParsedData:
    """Message data split into its RFH2 chain and the body, with what describes the body."""

    headers: list[MQRFH2]
    body: bytes
    encoding: int
    coded_char_set_id: int
    format: str


def parse_headers(
    data: bytes, encoding: int, ccsid: int, fmt: str, base_offset: int = 0, *, start: int = 0
) -> ParsedData:
    """Walk the RFH2 chain at ``data[start:]`` (described by the MQMD's Encoding/CCSID/Format).
    Error offsets are ``base_offset`` + the position in ``data``."""
    try:
        chain, encoding, ccsid, fmt, pos = read_chain(data, start, encoding, ccsid, fmt)
    except MQFormatError as exc:
        if exc.offset is not None and base_offset:
            raise MQFormatError(
                exc.reason.split(": ", 1)[-1],
                structure=exc.structure,
                field=exc.field,
                offset=exc.offset + base_offset,
            ) from None
        raise
    headers = [MQRFH2(*fields[:6], order) for fields, order in chain]
    return ParsedData(headers, bytes(data[pos:]), encoding, ccsid, fmt)


def read_chain(
    data: bytes, start: int, encoding: int, ccsid: int, fmt: str
) -> tuple[list[tuple[Fields, str]], int, int, str, int]:
    """The RFH2 chain at ``data[start:]``, described by the preceding header's Encoding, CCSID and
    Format: each header's fields with its byte order, then the Encoding, CCSID and Format that
    describe the body and the body's offset."""
    chain: list[tuple[Fields, str]] = []
    pos = start
    while fmt == _RF_HEADER_2 or fmt.rstrip() == _RF_HEADER_2:
        nibble = encoding & 15 if type(encoding) is int else 0
        order = (
            "<"
            if nibble == 2
            else ">"
            if nibble == 1
            else byte_order(encoding, "MQRFH2" if chain else "MQMD", "Encoding")
        )
        fields = _read(data, pos, order)
        chain.append((fields, order))
        pos += fields[6]
        encoding, fmt = fields[0], fields[2]
        if fields[1] != -2:  # MQCCSI_INHERIT keeps the previous CCSID
            ccsid = fields[1]
    return chain, encoding, ccsid, fmt, pos


def rfh2_bytes(
    order: str, encoding: int, ccsid: int, fmt: str, folders: list[bytes], body: bytes = b""
) -> bytes:
    """One RFH2 (NameValueCCSID 1208) with UTF-8 folder bytes, padded; what ``MQRFH2.pack`` builds,
    without the object (the outgoing mapping's hot path). ``body`` is appended in the same join."""
    parts = [b""]
    ln = _LEN[order]
    total = MQRFH_STRUC_LENGTH_FIXED_2
    for raw in folders:
        pad = -len(raw) % 4
        if pad:
            raw += b"    "[:pad]
        parts.append(ln.pack(len(raw)))
        parts.append(raw)
        total += 4 + len(raw)
    if body:
        parts.append(body)
    try:
        parts[0] = _FIXED[order].pack(
            MQRFH_STRUC_ID, MQRFH_VERSION_2, total, encoding, ccsid,
            _format_bytes(fmt), 0, MQCCSI_UTF8,
        )  # fmt: skip
    except struct.error as exc:
        raise MQFormatError(f"an integer field does not fit an MQLONG: {exc}", structure="MQRFH2") from exc
    return b"".join(parts)


_FORMAT_BYTES: dict[str, bytes] = {}


def _format_bytes(fmt: str) -> bytes:
    """A Format as its 8 blank-padded bytes (checked once per distinct Format)."""
    out = _FORMAT_BYTES.get(fmt)
    if out is None:
        out = encode_char(fmt, 8, "MQRFH2", "Format")
        if len(_FORMAT_BYTES) < 256:
            _FORMAT_BYTES[fmt] = out
    return out
