"""IBM ``dmpmqmsg`` queue-dump text files: export and import of MQ messages.

A dump holds messages one after another. ``N`` starts a message; ``A <CODE> <value>`` lines
set MQMD fields (IBM's three-letter codes: VER RPT MST EXP FDB ENC CCS FMT PRI PER MSI COI BOC RTQ
RTM USR ACC AIX PAT PAN PTD PTT AOX GRP MSQ OFF MSF ORL); then the message data follows as
``X <hex>`` lines (bytes in hex), ``S <text>`` lines (characters, optionally in double quotes,
added as is) or ``T <text>`` lines (a line of text followed by a line feed). ``*`` lines are
comments. Byte fields (MsgId, CorrelId, AccountingToken, GroupId) are hex; ApplIdentityData and
ApplOriginData (AIX/AOX) are written as hex and read as hex when they are valid hex of UTF-8
text, otherwise as the text itself. Writers here emit only ``X`` data lines, 32 bytes per line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import IO

from .errors import MQFormatError
from .mqmd import MQMD

__all__ = ["DUMP_CODES", "dump_messages", "iter_dump", "load_dump", "write_dump"]

#: three-letter code -> (MQMD attribute, kind): "l" integer, "c" characters, "b" hex bytes, "x" hex chars
DUMP_CODES: dict[str, tuple[str, str]] = {
    "VER": ("version", "l"),
    "RPT": ("report", "l"),
    "MST": ("msg_type", "l"),
    "EXP": ("expiry", "l"),
    "FDB": ("feedback", "l"),
    "ENC": ("encoding", "l"),
    "CCS": ("coded_char_set_id", "l"),
    "FMT": ("format", "c"),
    "PRI": ("priority", "l"),
    "PER": ("persistence", "l"),
    "MSI": ("msg_id", "b"),
    "COI": ("correl_id", "b"),
    "BOC": ("backout_count", "l"),
    "RTQ": ("reply_to_q", "c"),
    "RTM": ("reply_to_q_mgr", "c"),
    "USR": ("user_identifier", "c"),
    "ACC": ("accounting_token", "b"),
    "AIX": ("appl_identity_data", "x"),
    "PAT": ("put_appl_type", "l"),
    "PAN": ("put_appl_name", "c"),
    "PTD": ("put_date", "c"),
    "PTT": ("put_time", "c"),
    "AOX": ("appl_origin_data", "x"),
    "GRP": ("group_id", "b"),
    "MSQ": ("msg_seq_number", "l"),
    "OFF": ("offset", "l"),
    "MSF": ("msg_flags", "l"),
    "ORL": ("original_length", "l"),
}
_WIDTH = {"msg_id": 24, "correl_id": 24, "accounting_token": 32, "group_id": 24}
_HEX = set("0123456789abcdefABCDEF")
_INT = re.compile(r"[+-]?[0-9]+")


def _err(lineno: int, reason: str) -> MQFormatError:
    return MQFormatError(reason, structure="dmpmqmsg", field=f"line {lineno}")


def _set(md: MQMD, code: str, value: str, lineno: int) -> None:
    attr, kind = DUMP_CODES[code]
    value = value.rstrip("\r\n")
    if kind == "l":
        v = value.strip()
        if not _INT.fullmatch(v) or not -(2**31) <= int(v) < 2**31:
            raise _err(lineno, f"A {code} value {value!r} is not a 32-bit integer")
        setattr(md, attr, int(v))
    elif kind == "c":
        setattr(md, attr, value.rstrip(" "))
    elif kind == "b":
        v = value.strip()
        try:
            raw = bytes.fromhex(v)
        except ValueError:
            raise _err(lineno, f"A {code} value {value!r} is not hex") from None
        width = _WIDTH[attr]
        if len(raw) > width:
            raise _err(lineno, f"A {code} value is {len(raw)} bytes, the field holds {width}")
        setattr(md, attr, raw.ljust(width, b"\x00"))
    else:
        v = value.strip()
        text = v
        if v and len(v) % 2 == 0 and set(v) <= _HEX:
            try:
                text = bytes.fromhex(v).rstrip(b" \x00").decode("utf-8")
            except UnicodeDecodeError:
                text = v
        setattr(md, attr, text)


def iter_dump(lines: Iterable[str]) -> Iterator[tuple[MQMD, bytes]]:
    """Parse dump lines into ``(MQMD, data)`` pairs, one per ``N`` record."""
    md: MQMD | None = None
    data: list[bytes] = []
    for lineno, line in enumerate(lines, 1):
        if not isinstance(line, str):
            raise _err(lineno, f"line is {type(line).__name__}, not str")
        text = line.rstrip("\r\n")
        if not text.strip() or text.startswith("*"):
            continue
        tag, _, rest = text.partition(" ")
        if tag == "N":
            if md is not None:
                yield md, b"".join(data)
            md, data = MQMD(), []
            continue
        if md is None:
            raise _err(lineno, f"{tag!r} line before the first 'N' (message start) line")
        if tag == "A":
            code, _, value = rest.partition(" ")
            if code not in DUMP_CODES:
                raise _err(lineno, f"unknown attribute code {code!r}")
            _set(md, code, value, lineno)
        elif tag == "X":
            hexdata = rest.strip()
            try:
                data.append(bytes.fromhex(hexdata))
            except ValueError:
                raise _err(lineno, f"X line is not hex: {hexdata[:40]!r}") from None
        elif tag in ("S", "T"):
            s = rest
            if tag == "S" and len(s) >= 2 and s[0] == '"' and s[-1] == '"':
                s = s[1:-1]
            try:
                raw = s.encode("latin-1")
            except UnicodeEncodeError:
                raw = s.encode("utf-8")
            data.append(raw + (b"\n" if tag == "T" else b""))
        else:
            raise _err(lineno, f"unknown line type {tag!r} (expected N, A, X, S, T or *)")
    if md is not None:
        yield md, b"".join(data)


def load_dump(source: str | os.PathLike[str] | IO[str]) -> list[tuple[MQMD, bytes]]:
    """All messages of a dump file (a path or an open text file).

    Malformed content raises MQFormatError naming the line; a path that cannot be opened raises
    the OSError ``open`` gives (a missing file is not a format problem, and callers handle the two
    differently)."""
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, encoding="utf-8") as fp:
                return list(iter_dump(fp))
        except UnicodeDecodeError as exc:
            raise MQFormatError(f"dump file is not UTF-8 text: {exc}", structure="dmpmqmsg") from None
    if not isinstance(source, Iterable):
        raise MQFormatError(
            f"expected a path or an open text file, got {type(source).__name__}", structure="dmpmqmsg"
        )
    return list(iter_dump(source))


def _value(md: MQMD, attr: str, kind: str) -> str:
    v = getattr(md, attr)
    if kind == "l":
        return str(v)
    if kind == "c":
        return str(v).rstrip()
    if kind == "b":
        return bytes(v).hex().upper()
    return str(v).encode("utf-8").hex().upper()


def dump_messages(messages: Iterable[tuple[MQMD, bytes]], *, header: str | None = None) -> Iterator[str]:
    """Dump lines (with line ends) for ``(MQMD, data)`` pairs."""
    yield f"* {header or 'Dumped by amqp-jms in dmpmqmsg format'}\n"
    for md, data in messages:
        yield "\nN\n"
        for code, (attr, kind) in DUMP_CODES.items():
            if code in ("GRP", "MSQ", "OFF", "MSF", "ORL") and md.version < 2:
                continue
            value = _value(md, attr, kind)
            yield f"A {code} {value}\n" if value else f"A {code}\n"
        for i in range(0, len(data), 32):
            yield f"X {bytes(data[i : i + 32]).hex().upper()}\n"


def write_dump(
    messages: Iterable[tuple[MQMD, bytes]],
    target: str | os.PathLike[str] | IO[str],
    *,
    header: str | None = None,
) -> None:
    """Write a dump file to a path or an open text file."""
    if isinstance(target, (str, os.PathLike)):
        with open(target, "w", encoding="utf-8") as fp:
            fp.writelines(dump_messages(messages, header=header))
    else:
        target.writelines(dump_messages(messages, header=header))
