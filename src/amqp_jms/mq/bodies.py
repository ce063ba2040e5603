"""JMS bodies in MQ form: text in a CCSID, and the XML that IBM uses for map and stream bodies.

IBM writes a MapMessage as ``<map><elt name="k" dt="i4">1</elt>...</map>`` and a StreamMessage
as ``<stream><elt dt="i4">1</elt>...</stream>`` (strings have no ``dt``; ``char`` is used for JMS
chars, ``bin.hex`` for byte arrays). Text bodies are in the CCSID that describes them: the CCSIDs
below are those with a Python codec; ``0`` (queue manager's) is read as UTF-8.
"""

from __future__ import annotations

import re
from typing import Any

from ..types import Char
from ._folders import SLOW, decode_child, fast_value, parse_element
from .errors import MQFormatError
from .xmlfolder import _NEEDS_WORK, element, fast_element, fast_parts

__all__ = [
    "CCSID_CODECS",
    "JAVA_CHARSETS",
    "ccsid_from_charset",
    "charset_of_ccsid",
    "decode_map",
    "decode_stream",
    "decode_text",
    "encode_map",
    "encode_stream",
    "encode_text",
]

CCSID_CODECS: dict[int, str] = {
    0: "utf-8",
    1208: "utf-8",
    367: "ascii",
    819: "latin-1",
    923: "iso8859-15",
    912: "iso8859-2",
    1200: "utf-16-be",
    1202: "utf-16-le",
    13488: "utf-16-be",
    17584: "utf-16-be",
    437: "cp437",
    850: "cp850",
    1250: "cp1250",
    1251: "cp1251",
    1252: "cp1252",
    5348: "cp1252",
    37: "cp037",
    500: "cp500",
    273: "cp273",
    1140: "cp1140",
    1148: "cp1148",
    932: "cp932",
    943: "cp932",
    1386: "gbk",
    1381: "gb2312",
    949: "cp949",
    950: "cp950",
}

#: CCSID -> the Java charset name IBM's JMS shows in JMS_IBM_Character_Set.
JAVA_CHARSETS: dict[int, str] = {
    1208: "UTF-8",
    367: "US-ASCII",
    819: "ISO-8859-1",
    923: "ISO-8859-15",
    912: "ISO-8859-2",
    1200: "UTF-16",
    1202: "UTF-16LE",
    437: "IBM437",
    850: "IBM850",
    1250: "windows-1250",
    1251: "windows-1251",
    1252: "windows-1252",
    37: "IBM037",
    500: "IBM500",
    273: "IBM273",
    1140: "IBM01140",
    1148: "IBM01148",
    932: "Shift_JIS",
    1386: "GBK",
    949: "EUC-KR",
    950: "Big5",
}
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
#: map entry names seen to need no escaping (names repeat message after message)
_PLAIN_NAMES: set[str] = set()
_BY_NAME = {name.lower(): ccsid for ccsid, name in JAVA_CHARSETS.items()}
_BY_NAME.update({"utf8": 1208, "latin1": 819, "iso8859_1": 819, "ascii": 367, "cp037": 37, "cp500": 500})


def charset_of_ccsid(ccsid: int) -> str:
    """The JMS_IBM_Character_Set string for a CCSID: Java's name, or the number if Java has none."""
    return JAVA_CHARSETS.get(ccsid, str(ccsid))


def ccsid_from_charset(value: Any) -> int:
    """JMS_IBM_Character_Set (a Java charset name or a CCSID, as str or int) -> CCSID."""
    if isinstance(value, int) and not isinstance(value, bool):
        ccsid = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        ccsid = int(value.strip())
    elif isinstance(value, str) and value.strip().lower() in _BY_NAME:
        ccsid = _BY_NAME[value.strip().lower()]
    else:
        raise MQFormatError(
            f"JMS_IBM_Character_Set {value!r} is neither a CCSID nor a known Java charset name",
            field="JMS_IBM_Character_Set",
        )
    if ccsid not in CCSID_CODECS:
        raise MQFormatError(f"CCSID {ccsid} has no codec here", field="JMS_IBM_Character_Set")
    return ccsid


def _codec(ccsid: int, structure: str) -> str:
    codec = CCSID_CODECS.get(ccsid)
    if codec is None:
        raise MQFormatError(
            f"CCSID {ccsid} has no character codec here (known: {sorted(CCSID_CODECS)})",
            structure=structure,
            field="CodedCharSetId",
        )
    return codec


def decode_text(data: bytes, ccsid: int, structure: str = "body") -> str:
    codec = _codec(ccsid, structure)
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        raise MQFormatError(
            f"text is not valid in CCSID {ccsid} ({codec}): {exc.reason} at byte {exc.start}",
            structure=structure,
            offset=exc.start,
        ) from None


def encode_text(text: str, ccsid: int, structure: str = "body") -> bytes:
    codec = _codec(ccsid, structure)
    try:
        return text.encode(codec)
    except UnicodeEncodeError as exc:
        raise MQFormatError(
            f"character {text[exc.start]!r} at index {exc.start} cannot be written in "
            f"CCSID {ccsid} ({codec})",
            structure=structure,
        ) from None


def encode_map(entries: dict[str, Any]) -> str:
    parts = ["<map>"]
    for name, value in entries.items():
        p = fast_parts(value) if name in _PLAIN_NAMES else None
        if p is not None:
            parts.append(f'<elt name="{name}"{p}</elt>')
        elif type(name) is str and _PLAIN_NAME.fullmatch(name):
            if len(_PLAIN_NAMES) < 4096:
                _PLAIN_NAMES.add(name)  # needs no escaping: next time straight to the fast path
            el = fast_element("elt", value, f"map entry {name!r}", True)
            parts.append(f'<elt name="{name}"{el[4:]}')
        else:
            parts.append(element("elt", value, f"map entry {name!r}", allow_char=True, name_attr=name))
    parts.append("</map>")
    return "".join(parts)


def encode_stream(items: list[Any]) -> str:
    parts = ["<stream>"]
    for i, value in enumerate(items):
        p = fast_parts(value)
        if p is not None:
            parts.append(f"<elt{p}</elt>")
        elif type(value) is Char and _NEEDS_WORK.search(value) is None:
            parts.append(f'<elt dt="char">{value}</elt>')
        else:
            parts.append(element("elt", value, f"stream item {i}", allow_char=True))
    parts.append("</stream>")
    return "".join(parts)


def decode_map(xml: str) -> dict[str, Any]:
    root = parse_element(xml)
    if root.tag != "map":
        raise MQFormatError(f"map body's root element is <{root.tag}>, expected <map>", structure="body")
    out: dict[str, Any] = {}
    for el in root:
        key = el.get("name")
        if el.tag != "elt" or key is None:
            raise MQFormatError(
                f"map body has <{el.tag}> without a name; expected <elt name=...>", structure="body"
            )
        v = fast_value(el)
        out[key] = decode_child(el, f"map entry {key!r}") if v is SLOW else v
    return out


def decode_stream(xml: str) -> list[Any]:
    root = parse_element(xml)
    if root.tag != "stream":
        raise MQFormatError(
            f"stream body's root element is <{root.tag}>, expected <stream>", structure="body"
        )
    out: list[Any] = []
    for el in root:
        if el.tag != "elt":
            raise MQFormatError(f"stream body has <{el.tag}>, expected <elt>", structure="body")
        v = fast_value(el)
        out.append(decode_child(el, f"stream item {len(out)}") if v is SLOW else v)
    return out
