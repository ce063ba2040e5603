"""RFH2 folder XML: a small element tree read with expat, IBM's ``dt`` typed values, escaping.

Folders are parsed with a real XML parser (expat) with namespace processing *off*, because IBM
writes ``xsi:nil='true'`` without declaring the ``xsi`` prefix, which a namespace-aware parser
rejects. Document type declarations are refused (no entity tricks in a message header). Values
carry IBM's data types (``dt``): ``boolean i1 i2 i4 i8 int r4 r8 bin.hex string``, plus ``char``
for map/stream bodies; an element without ``dt`` is a string, ``xsi:nil='true'`` is null.
"""

from __future__ import annotations

import math
import re
import xml.parsers.expat
from dataclasses import dataclass, field
from typing import Any

from .._identifiers import is_keyword
from ..types import (
    UUID,
    Byte,
    Char,
    Double,
    Float,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
)
from .errors import MQFormatError

__all__ = [
    "INT_RANGES",
    "Element",
    "check_usr_name",
    "decode_value",
    "element",
    "encode_value",
    "escape_attr",
    "escape_text",
    "parse_folder",
]


@dataclass(slots=True)
class Element:
    """An XML element: its name, attributes, own text and child elements."""

    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def child(self, name: str) -> Element | None:
        for c in self.children:
            if c.name == name:
                return c
        return None


class _Refused(Exception):
    pass


def parse_folder(text: str, where: str = "folder") -> Element:
    """Parse one folder's XML into an Element tree; MQFormatError naming ``where`` if malformed."""
    parser = xml.parsers.expat.ParserCreate()
    root: list[Element] = []
    stack: list[Element] = []
    chunks: list[list[str]] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        el = Element(name, attrs)
        if stack:
            stack[-1].children.append(el)
        else:
            root.append(el)
        stack.append(el)
        chunks.append([])

    def end(name: str) -> None:
        el = stack.pop()
        el.text = "".join(chunks.pop())

    def chars(data: str) -> None:
        if chunks:
            chunks[-1].append(data)

    def refuse(*_args: Any) -> None:
        raise _Refused("document type declarations are not allowed in an RFH2 folder")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.buffer_text = True
    try:
        parser.Parse(text, True)
    except _Refused as exc:
        raise MQFormatError(str(exc), structure="MQRFH2", field=where) from None
    except xml.parsers.expat.ExpatError as exc:
        raise MQFormatError(
            f"is not well-formed XML ({xml.parsers.expat.errors.messages.get(exc.code, exc.code)}, "
            f"line {exc.lineno} column {exc.offset}): {text[:80]!r}",
            structure="MQRFH2",
            field=where,
        ) from None
    except (ValueError, RecursionError) as exc:
        raise MQFormatError(f"cannot be parsed: {exc}", structure="MQRFH2", field=where) from None
    if len(root) != 1:
        raise MQFormatError("must contain exactly one root element", structure="MQRFH2", field=where)
    return root[0]


_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _check_chars(value: str, what: str) -> None:
    bad = _ILLEGAL_XML.search(value)
    if bad:
        raise MQFormatError(
            f"{what} contains U+{ord(bad.group()):04X}, which XML 1.0 (and so an RFH2 folder) cannot carry",
            structure="MQRFH2",
        )


def escape_text(value: str, what: str = "value") -> str:
    """Escape character data; CR becomes ``&#13;`` so XML line-end normalisation cannot eat it."""
    _check_chars(value, what)
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def escape_attr(value: str, what: str = "attribute") -> str:
    _check_chars(value, what)
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\r", "&#13;")
        .replace("\n", "&#10;")
        .replace("\t", "&#9;")
    )


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value))


#: the integer types written narrower than ``i8`` (the unsigned ones widen to the next signed
#: type): the one table ``encode_value`` and the fast writers' ``_INT_DT`` read
_NARROW_INTS: tuple[tuple[type, str], ...] = (
    (Byte, "i1"),
    (Short, "i2"),
    (UByte, "i2"),
    (Int, "i4"),
    (UShort, "i4"),
)


def encode_value(
    value: Any, what: str = "value", *, allow_char: bool = False
) -> tuple[str | None, str | None]:
    """``(dt, text)`` for a typed value; ``dt`` None means string, ``text`` None means null.

    AMQP-only types (unsigned, timestamp, symbol, UUID) widen to the JMS type that holds them.
    """
    if value is None:
        return None, None
    if isinstance(value, bool):
        return "boolean", "1" if value else "0"
    if isinstance(value, int):
        for cls, dt in _NARROW_INTS:
            if isinstance(value, cls):
                return dt, str(int(value))
        # plain int = long; Long, UInt, ULong, Timestamp widen to i8
        if not -(2**63) <= value < 2**63:
            raise MQFormatError(f"{what} = {value} does not fit an i8", structure="MQRFH2")
        return "i8", str(int(value))
    if isinstance(value, Float):
        return "r4", _float_text(value)
    if isinstance(value, float):
        return "r8", _float_text(value)
    if isinstance(value, Char):
        if allow_char:
            return "char", escape_text(str(value), what)
        return None, escape_text(str(value), what)
    if isinstance(value, str):
        return None, escape_text(str(value), what)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bin.hex", bytes(value).hex().upper()
    if isinstance(value, UUID):
        return None, str(value)
    raise MQFormatError(
        f"{what} has type {type(value).__name__}, which an RFH2 folder cannot carry", structure="MQRFH2"
    )


_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|Infinity|NaN)[fFdD]?"
)
#: the integer data types: (class, lowest, highest). The one table of their ranges: the checking
#: reader below and the plain-form readers of ``_folders.CONVERTERS`` both read it.
INT_RANGES: dict[str, tuple[type, int, int]] = {
    "i1": (Byte, -128, 127),
    "i2": (Short, -(2**15), 2**15 - 1),
    "i4": (Int, -(2**31), 2**31 - 1),
    "i8": (int, -(2**63), 2**63 - 1),
    "int": (int, -(2**63), 2**63 - 1),
}


def decode_value(dt: str | None, text: str, nil: bool, what: str = "value") -> Any:
    """The typed value of an element with data type ``dt`` and text ``text`` (inverse of encode)."""
    if nil:
        return None
    if dt is None or dt == "string":
        return text
    try:
        if dt in INT_RANGES:
            cls, lo, hi = INT_RANGES[dt]
            t = text.strip()
            if not _INT.fullmatch(t) or not lo <= int(t) <= hi:
                raise ValueError(f"{text!r} is not an {dt}" + (" (64-bit)" if cls is int else ""))
            return cls(int(t))
        if dt in ("r4", "r8"):
            t = text.strip()
            if not _FLOAT.fullmatch(t):
                raise ValueError(f"{text!r} is not a number")
            t = t.rstrip("fFdD")
            v = float(t)
            return Float(v) if dt == "r4" else v
        if dt == "boolean":
            t = text.strip().lower()
            if t in ("1", "true"):
                return True
            if t in ("0", "false"):
                return False
            raise ValueError(f"{text!r} is not a boolean (1/0/true/false)")
        if dt == "bin.hex":
            return bytes.fromhex(text.strip())
        if dt == "char":
            return Char(text)
    except (ValueError, TypeError, OverflowError) as exc:
        raise MQFormatError(f"{what}: {exc}", structure="MQRFH2") from None
    raise MQFormatError(f"{what} has unknown data type dt={dt!r}", structure="MQRFH2")


def element(
    name: str, value: Any, what: str, *, allow_char: bool = False, name_attr: str | None = None
) -> str:
    """One element ``<name dt='..'>text</name>`` (or ``xsi:nil``), with an optional ``name`` attribute."""
    dt, text = encode_value(value, what, allow_char=allow_char)
    attrs = "" if name_attr is None else f' name="{escape_attr(name_attr, what)}"'
    if dt:
        attrs += f' dt="{dt}"'
    if text is None:
        return f"<{name}{attrs} xsi:nil='true'></{name}>"
    return f"<{name}{attrs}>{text}</{name}>"


_XML_NAME = re.compile(r"[^\W\d][\w\-]*")


def check_usr_name(name: str) -> None:
    """IBM's rules for a ``<usr>`` element name; MQFormatError saying which one is broken."""
    if not isinstance(name, str) or not _XML_NAME.fullmatch(name):
        raise MQFormatError(
            f"property name {name!r} is not a valid XML element name without '.', ':' or '$'",
            structure="MQRFH2",
            field="usr",
        )
    if name.upper().startswith("JMS"):
        raise MQFormatError(
            f"property name {name!r} starts with 'JMS', which IBM reserves in the usr folder",
            structure="MQRFH2",
            field="usr",
        )
    if is_keyword(name):  # the selector's own rule, so JMS and MQ refuse the same names
        raise MQFormatError(
            f"property name {name!r} is a selector keyword, which IBM forbids in the usr folder",
            structure="MQRFH2",
            field="usr",
        )


# re-exported for callers that widen AMQP types explicitly
_WIDENED = (UByte, UShort, UInt, ULong, Timestamp, Long, Double, Symbol)


_NEEDS_WORK = re.compile("[&<>\r\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_INT_DT: dict[type, str] = {
    t: f' dt="{dt}"' for t, dt in (*_NARROW_INTS, (int, "i8"), (Long, "i8"), (Timestamp, "i8"))
}
#: `` dt=".."`` by type, as ``element`` writes it in usr folders and in map/stream bodies (where
#: Char has its own), for the C accelerator (``_mqout.xml_elements``)
USR_DT: dict[type, str] = {**_INT_DT, float: ' dt="r8"', Float: ' dt="r4"', Char: ""}
BODY_DT: dict[type, str] = {**USR_DT, Char: ' dt="char"'}


def fast_parts(value: Any) -> str | None:
    """What follows ``<name`` in ``element(name, value)`` up to ``</name>`` (``' dt="i4">3'``,
    ``'>text'``) for the common property types, or None: then ``element`` does the work."""
    t = type(value)
    if t is str:
        if _NEEDS_WORK.search(value) is None:
            return ">" + value
    elif t in _INT_DT:
        if -(2**63) <= value < 2**63:
            return f"{_INT_DT[t]}>{int.__repr__(value)}"
    elif t is bool:
        return ' dt="boolean">1' if value else ' dt="boolean">0'
    elif t is float or t is Float:
        if math.isfinite(value):
            return f' dt="r8">{float.__repr__(value)}' if t is float else f' dt="r4">{float.__repr__(value)}'
    elif t is bytes:
        return f' dt="bin.hex">{value.hex().upper()}'
    return None


def fast_element(name: str, value: Any, what: str, allow_char: bool = False) -> str:
    """``element(name, value, what)`` for the common property types without the general dispatch."""
    parts = fast_parts(value)
    if parts is not None:
        return f"<{name}{parts}</{name}>"
    return element(name, value, what, allow_char=allow_char)


_GOOD_USR_NAMES: set[str] = set()


def check_usr_name_cached(name: str) -> None:
    """``check_usr_name`` remembering names that passed (property names repeat message after message)."""
    if name in _GOOD_USR_NAMES:
        return
    check_usr_name(name)
    if len(_GOOD_USR_NAMES) > 4096:
        _GOOD_USR_NAMES.clear()
    _GOOD_USR_NAMES.add(name)
