"""Parsed RFH2 folders for the incoming mapping: ElementTree's C parser, kept open between folders.

Creating an XML parser costs more than parsing a 150-character ``jms`` folder, so each parser is
created once and fed one folder after another inside a wrapper element that declares the ``xsi``
prefix (IBM writes ``xsi:nil`` without declaring it). Each folder ``T`` goes in as
``<m>T</m>``; the parse is trusted only when it proves ``T`` is exactly one element standing
alone as a document would:

* ``T`` has no ``<!`` or ``<?``, so no comment, CDATA section, DTD or processing instruction
  can leave the parser inside itself with ``</m>`` swallowed (an open tag, attribute value or
  reference cannot take the ``<`` of ``</m>``: expat reports an error);
* the feed raised nothing (an unclosed element makes ``</m>`` mismatch; closing the wrapper or
  the outer element ends the document, and the ``</m>`` after it is junk);
* the wrapper got exactly one ``<m>`` (a ``T`` that closes ``<m>`` and opens another makes two);
* that ``<m>`` holds exactly one element, with no text before or after it.

Anything else (a parse error, an undeclared prefix, two roots, stray text) throws the parser
away, so the next folder starts on a fresh one, and the folder goes through ``_parse_alone`` (as
do folders with ``<!`` or ``<?``): the standalone parse this package used before, which either
reads it (without namespaces if need be) or raises ``MQFormatError`` naming the problem. A parser
is also retired after ``_USES`` folders, because expat keeps every element name it has seen, and
after a folder longer than ``_BIG``, because it keeps a buffer that size.
Parsers sit in a pool (``list.pop``/``append`` are atomic), so threads never share one.

Folders are ``(name, children, first child of each name)`` of ``ET.Element``s, which callers only
read. ``mcd`` folders (body type and JMSType) repeat message after message and are remembered by
their exact text; ``jms`` and ``usr`` folders carry per-message values (ids, times, property
values) and are parsed every time. ``parse_many`` feeds several folders at once (the incoming
fast path); ``CONVERTERS``/``typed_value`` read typed values in their plain form.
"""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from ..types import Byte, Char, Float, Int, Short
from .xmlfolder import INT_RANGES, decode_value, parse_folder

__all__ = [
    "Child",
    "Folder",
    "child_value",
    "children_of",
    "decode_child",
    "is_nil",
    "parse_cached",
    "parse_element",
    "parse_fresh",
    "parse_many",
    "typed_value",
    "usr_properties",
]

_XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
_XSI_DECL = "xmlns:xsi='http://www.w3.org/2001/XMLSchema-instance'"

#: (folder name, child elements, the first child of each name)
Folder = tuple[str, tuple[ET.Element, ...], dict[str, ET.Element]]

_CACHE: dict[str, Folder] = {}
_LIMIT = 512
#: folders one parser reads before it is replaced (expat's name tables only grow)
_USES = 4096
#: a parser that has read a folder longer than this is not reused (expat keeps its buffer)
_BIG = 65536


class _Stream:
    """One C parser inside ``<r xmlns:xsi=...>``; ``holder`` is that ``<r>``."""

    __slots__ = ("feed", "holder", "left")

    def __init__(self) -> None:
        builder = ET.TreeBuilder()
        top = builder.start("top", {})  # an element above <r>, so <r> can be reached (public API)
        parser = ET.XMLParser(target=builder)
        parser.feed(f"<r {_XSI_DECL}>")
        self.feed = parser.feed
        self.holder = top[0]
        self.left = _USES


_POOL: list[_Stream] = []


def _borrow() -> _Stream:
    """A kept-open parser from the pool, or a new one."""
    try:
        return _POOL.pop()
    except IndexError:
        return _Stream()


def _give_back(stream: _Stream, size: int) -> None:
    """Return a parser that read ``size`` characters cleanly, unless it is worn out (``_USES``)
    or the text was big (after a big folder, let expat's buffer go)."""
    stream.left -= 1
    if stream.left and size <= _BIG:
        _POOL.append(stream)


def parse_element(text: str) -> ET.Element:
    """The root element of one folder's XML (``text`` already stripped of its padding).
    MQFormatError if it is not well-formed XML holding exactly one element."""
    if "<!" in text or "<?" in text:  # a comment, CDATA, DTD or PI could swallow the closing </m>
        return _parse_alone(text)
    stream = _borrow()
    holder = stream.holder
    try:
        stream.feed("<m>" + text + "</m>")
    except Exception:  # ParseError, or anything else: this parser is done, the slow path decides
        return _parse_alone(text)
    if len(holder) == 1:
        m = holder[0]
        del holder[:]
        if len(m) == 1 and m.text is None:
            el = m[0]
            if el.tail is None:
                _give_back(stream, len(text))
                return el
    return _parse_alone(text)  # the parser saw something odd: it is not reused


def _parse_alone(text: str) -> ET.Element:
    """A folder parsed on its own: ElementTree (with ``xsi`` declared around it when used), or
    failing that the strict expat reader, which names the problem or reads it without namespaces."""
    try:
        if "xsi:" in text or "<!" in text:  # "<!": DTDs are refused by the wrapper, kept out here
            wrapper = ET.fromstring(f"<f {_XSI_DECL}>" + text + "</f>")
            if len(wrapper) == 1 and not (wrapper.text or "").strip() and not (wrapper[0].tail or "").strip():
                root = wrapper[0]
                root.tail = None
                return root
        else:
            return ET.fromstring(text)
    except (ET.ParseError, ValueError, IndexError):
        pass
    el = parse_folder(text)  # raises MQFormatError naming the problem, or reads it without namespaces
    return _from_plain(el)


def _from_plain(el: Any) -> ET.Element:
    out = ET.Element(el.name, el.attrs)
    out.text = el.text or None
    for c in el.children:
        out.append(_from_plain(c))
    return out


def _folder(root: ET.Element) -> Folder:
    children = tuple(root)
    return root.tag, children, {c.tag: c for c in children[::-1]}  # the first of a name wins


def parse_fresh(text: str) -> Folder:
    """A folder (or a map/stream body) parsed now, not remembered."""
    return _folder(parse_element(text))


def parse_cached(text: str) -> Folder:
    """A folder remembered by its exact text: for ``mcd`` folders (body type and JMSType), which
    repeat message after message; a folder of another name is parsed and not kept."""
    folder = _CACHE.get(text)
    if folder is None:
        folder = _folder(parse_element(text))
        if folder[0] == "mcd":  # others carry per-message values (Tms, ids, properties)
            if len(_CACHE) >= _LIMIT:
                _CACHE.clear()
            _CACHE[text] = folder
    return folder


def is_nil(el: ET.Element) -> bool:
    """``xsi:nil='true'`` (declared or not). ``get``, not ``attrib``: reading ``attrib`` gives an
    element without attributes a new dict."""
    v = el.get(_XSI_NIL)
    if v is None:
        v = el.get("xsi:nil")
        if v is None:
            return False
    return v.strip().lower() == "true"


_new_int = int.__new__
#: integer data types: (class, low, high); the class is built without its own range check
_INTS = INT_RANGES

#: ``fast_value``'s answer when an element needs ``decode_value`` (and a message naming it)
SLOW: Any = object()
_new_float = float.__new__
_new_str = str.__new__
_F32 = struct.Struct("<f")


def fast_value(el: ET.Element) -> Any:
    """An element's typed value when it is in the plain form of its type (what this package and
    IBM's client write), else ``SLOW``: the caller then asks ``decode_value``, which checks
    everything and names the element in its error. The plain forms are ``CONVERTERS``'."""
    if el.get(_XSI_NIL) is not None or el.get("xsi:nil") is not None:
        return SLOW
    dt = el.get("dt")
    if dt is None:
        return el.text or ""
    conv = CONVERTERS.get(dt)
    return SLOW if conv is None else conv(el.text)


def decode_child(el: ET.Element, what: str) -> Any:
    """An element's typed value (``dt``, ``xsi:nil``), ``what`` naming it in an error."""
    v = fast_value(el)
    if v is SLOW:
        return decode_value(el.get("dt"), el.text or "", is_nil(el), what)
    return v


#: an element of a flat folder: (name, text or None, attributes or None), as the C accelerator
#: ``_mqxml`` reads it and ``children_of`` gives it from ElementTree
Child = tuple[str, str | None, dict[str, str] | None]


def children_of(root: ET.Element) -> list[Child]:
    """The children of a parsed folder as ``Child`` tuples (their own children are not read)."""
    return [(c.tag, c.text, c.attrib or None) for c in root]


def child_value(text: str | None, attrs: dict[str, str] | None, what: str) -> Any:
    """``decode_child`` for a ``Child``'s text and attributes: the typed value (``dt``,
    ``xsi:nil`` declared or not), ``what`` naming it in an error."""
    if attrs is None:
        return text or ""
    nil = attrs.get(_XSI_NIL)
    if nil is None:
        nil = attrs.get("xsi:nil")
    return decode_value(attrs.get("dt"), text or "", nil is not None and nil.strip().lower() == "true", what)


def usr_properties(text: str, folder: Folder) -> dict[str, Any]:
    """The typed properties of a ``usr`` folder (a fresh dict each call; ``text`` is unused and
    kept for callers: property values change message by message, so nothing is remembered)."""
    props: dict[str, Any] = {}
    for el in folder[1]:  # a repeated name: the last wins, as a map would
        props[el.tag] = decode_child(el, f"<usr><{el.tag}>")
    return props


#: the wrapper ``parse_many`` puts around each text; a text holding ``</_w`` is not parsed here
_WRAP_OPEN, _WRAP_CLOSE, _WRAP_END = "<_w>", "</_w>", "</_w"


def parse_many(texts: list[str]) -> list[ET.Element] | None:
    """The root elements of several folders (or a map/stream body) parsed in one feed of a
    kept-open parser, each inside its own ``<_w>``; None when any text could not be trusted
    this way (the caller then takes the path that parses one at a time and names the problem).

    One feed instead of one per folder saves the per-call cost, and the split stays exact: no
    text holds ``</_w`` (so none can close a wrapper early; one left open makes its ``</_w>``
    mismatch, an error), nor ``<!``/``<?`` (nothing can swallow a ``</_w>``); each wrapper must
    then hold exactly one element and no text."""
    # checked on the joined feed, which holds no "<!", "<?" or "</_w" across a seam (wrappers
    # start with "<" and end with ">"), so these are exactly the checks on each text
    feed = _WRAP_CLOSE.join([_WRAP_OPEN + t for t in texts]) + _WRAP_CLOSE
    if "<!" in feed or "<?" in feed or feed.count(_WRAP_END) != len(texts):
        return None
    stream = _borrow()
    holder = stream.holder
    try:
        stream.feed(feed)
    except Exception:  # a parse error (or anything else): this parser is done
        return None
    if len(holder) != len(texts):
        return None
    out = []
    for w in holder:  # all wrappers: no text can open or close one
        if len(w) != 1 or w.text is not None:
            return None
        el = w[0]
        if el.tail is not None:
            return None
        out.append(el)
    del holder[:]
    _give_back(stream, len(feed))
    return out


#: Byte/Short/Int instances for -128..1023, shared (they are immutable): most values are small
_SMALL: dict[type, list[Any]] = {
    cls: [_new_int(cls, v) for v in range(-128, 1024 if cls is not Byte else 128)]
    for cls in (Byte, Short, Int)
}


def _conv_int(cls: type, lo: int, hi: int) -> Any:
    small = _SMALL.get(cls)
    top = 1024 if cls is not Byte else 128

    def conv(text: str | None) -> Any:
        v = _plain_number(text, int)
        if v is not SLOW and lo <= v <= hi:
            if small is None:
                return v
            return small[v + 128] if -128 <= v < top else _new_int(cls, v)
        return SLOW

    return conv


def _plain_number(text: str | None, parse: Callable[[str], Any]) -> Any:
    """``parse(text)`` (``int`` or ``float``), or ``SLOW``. Once non-ASCII digits and underscores
    (which both also take) are ruled out, they read what ``decode_value``'s strip and number
    patterns read, except the inf/nan spellings ``float`` knows, which ``_conv_r8`` sends to
    ``decode_value`` (it takes only "Infinity"/"NaN", and fFdD suffixes, which ``float``
    refuses)."""
    if text and text.isascii() and "_" not in text:
        try:
            return parse(text)
        except ValueError:
            pass
    return SLOW


_INF = float("inf")


def _conv_r8(text: str | None) -> Any:
    v = _plain_number(text, float)
    if v is not SLOW and -_INF < v < _INF:
        return v
    return SLOW


def _conv_r4(text: str | None) -> Any:
    v = _conv_r8(text)
    if v is not SLOW:
        try:
            return _new_float(Float, _F32.unpack(_F32.pack(v))[0])
        except (OverflowError, struct.error):
            pass
    return SLOW


def _conv_bool(text: str | None) -> Any:
    return True if text == "1" else False if text == "0" else SLOW


def _conv_string(text: str | None) -> Any:
    return text if text else SLOW


def _conv_char(text: str | None) -> Any:
    return _new_str(Char, text) if text and len(text) == 1 else SLOW


def _conv_hex(text: str | None) -> Any:
    if text:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    return SLOW


#: ``dt`` -> the plain-form reader of its text (``fast_value`` without the attribute lookups)
CONVERTERS: dict[str, Any] = {dt: _conv_int(*spec) for dt, spec in _INTS.items()}
CONVERTERS.update({"r8": _conv_r8, "r4": _conv_r4, "boolean": _conv_bool, "string": _conv_string})
CONVERTERS.update({"char": _conv_char, "bin.hex": _conv_hex})


def typed_value(el: ET.Element) -> Any:
    """``fast_value(el)`` reading the attributes once: no attribute is a string, a lone ``dt``
    goes to its converter; ``SLOW`` for anything else (``xsi:nil``, odd forms), and the caller
    then asks ``decode_child``, which names the element in its error."""
    items: Any = el.items()  # a list (typeshed says ItemsView)
    if not items:
        text = el.text
        return text if text is not None else ""
    if len(items) == 1:
        k, dt = items[0]
        if k == "dt":
            conv = CONVERTERS.get(dt)
            if conv is not None:
                return conv(el.text)
    return SLOW
