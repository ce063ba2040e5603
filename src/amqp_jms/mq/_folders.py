"""Parsed RFH2 folders for the incoming mapping: one XML parse per distinct folder text.

The C-accelerated ElementTree parser reads each folder inside a wrapper element that declares
the ``xsi`` prefix (IBM writes ``xsi:nil`` without declaring it). A folder the wrapper cannot
take (malformed, a DTD, another undeclared prefix, two roots) goes through ``parse_folder``, the
strict expat reader, which either names the problem or reads it without namespaces. Parsed folders
are immutable tuples, remembered by text (mcd and usr folders repeat message after message; jms
folders carry per-message values and are not kept), and so are the decoded ``usr`` properties.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from .xmlfolder import decode_value, parse_folder

__all__ = ["Folder", "parse_cached", "usr_properties"]

_XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
_WRAP = "<f xmlns:xsi='http://www.w3.org/2001/XMLSchema-instance'>"

#: (element name, data type, text, is nil, attributes)
Child = tuple[str, str | None, str, bool, dict[str, str]]
#: (folder name, children, children by name: the first of each name)
Folder = tuple[str, tuple[Child, ...], dict[str, Child]]

_CACHE: dict[str, Folder] = {}
_USR: dict[str, dict[str, Any]] = {}
_LIMIT = 512


def _nil(attrs: dict[str, str]) -> bool:
    if not attrs:
        return False
    v = attrs.get(_XSI_NIL) or attrs.get("xsi:nil")
    return v is not None and v.strip().lower() == "true"


def _parse(text: str) -> Folder:
    try:
        # most folders use no prefix: parse them as they are; else declare xsi in a wrapper
        if "xsi:" in text or "<!" in text:  # "<!": DTDs are refused by the wrapper, kept out here
            wrapper = ET.fromstring(_WRAP + text + "</f>")
            root = wrapper[0] if len(wrapper) == 1 and not (wrapper.text or "").strip() else None
            if root is not None and (root.tail or "").strip():
                root = None
        else:
            root = ET.fromstring(text)
    except (ET.ParseError, ValueError, IndexError):
        root = None
    if root is not None:
        # TreeBuilder drops comments and processing instructions: every child is an element
        children = tuple([(c.tag, c.get("dt"), c.text or "", _nil(c.attrib), c.attrib) for c in root])
        return root.tag, children, _first(children)
    el = parse_folder(text)  # raises MQFormatError naming the problem, or reads it without namespaces
    children = tuple((c.name, c.attrs.get("dt"), c.text, _nil(c.attrs), c.attrs) for c in el.children)
    return el.name, children, _first(children)


def _first(children: tuple[Child, ...]) -> dict[str, Child]:
    by_name: dict[str, Child] = {}
    for c in children:
        by_name.setdefault(c[0], c)
    return by_name


def parse_cached(text: str) -> Folder:
    folder = _CACHE.get(text)
    if folder is None:
        folder = _parse(text)
        if folder[0] != "jms":  # jms carries per-message values (Tms, ids): never worth keeping
            if len(_CACHE) >= _LIMIT:
                _CACHE.clear()
            _CACHE[text] = folder
    return folder


def usr_properties(text: str, folder: Folder) -> dict[str, Any]:
    """The typed properties of a ``usr`` folder (a fresh dict each call)."""
    props = _USR.get(text)
    if props is None:
        props = {}
        for name, dt, value, nil, _attrs in folder[1]:  # a repeated name: the last wins, as a map would
            props[name] = decode_value(dt, value, nil, f"<usr><{name}>")
        if len(_USR) >= _LIMIT:
            _USR.clear()
        _USR[text] = props
    return dict(props)
