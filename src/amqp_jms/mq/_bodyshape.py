"""Map and stream bodies from a template per shape: the entry names and value types.

As with ``usr`` folders (``_usrshape``), a producer's map and stream bodies keep their names and
types while the values change, so the markup is built once per shape as a ``%`` template and
each message fills it in one C-level ``%``. Per message every value is still checked (strings
and chars for characters that need escaping or that XML cannot carry, 64-bit integers for range,
floats for NaN/infinity), and floats of 32 bits and bytes are turned into their text first.
Anything else returns None and ``encode_map``/``encode_stream`` write the body element by
element, exactly as before (a test compares the two).
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..types import Char, Float, Long, Timestamp
from .xmlfolder import _INT_DT, _NEEDS_WORK

__all__ = ["map_body", "stream_body"]

#: per-value work: check a text, check a 64-bit range, check a float, write a Float, write bytes
_TEXT, _WIDE, _FLOAT, _R4, _HEX = range(5)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]+")  # a map key written without escaping
_MIN, _MAX = -(2**63), 2**63
_LIMIT = 1024
Shape = tuple[str, tuple[tuple[int, int], ...]] | None
_STREAMS: dict[tuple[type, ...], Shape] = {}
_MAPS: dict[tuple[tuple[str, ...], tuple[type, ...]], Shape] = {}


#: per value type: what follows the element's name (its ``dt``), the ``%`` conversion that
#: writes the value, and the per-message work on the value (None: none). One table for map and
#: stream bodies and, restricted to its types, ``usr`` folders (``_usrshape``).
TEMPLATE_PARTS: dict[type, tuple[str, str, int | None]] = {
    str: ("", "%s", _TEXT),
    Char: (' dt="char"', "%s", _TEXT),
    bool: (' dt="boolean"', "%d", None),
    **{t: (dt, "%d", _WIDE if t in (int, Long, Timestamp) else None) for t, dt in _INT_DT.items()},
    float: (' dt="r8"', "%r", _FLOAT),
    Float: (' dt="r4"', "%s", _R4),
    bytes: (' dt="bin.hex"', "%s", _HEX),
    type(None): (" xsi:nil='true'", "%.0s", None),
}


def _element(t: type, start: str, work: list[tuple[int, int]], i: int) -> str | None:
    """One ``<elt ...>%x</elt>`` for a value of type ``t`` (``start`` is ``<elt`` + name)."""
    parts = TEMPLATE_PARTS.get(t)
    if parts is None:
        return None
    attrs, conv, kind = parts
    if kind is not None:
        work.append((i, kind))
    return f"{start}{attrs}>{conv}</elt>"


def _fill(shape: Shape, values: tuple[Any, ...]) -> str | None:
    if shape is None:
        return None
    template, work = shape
    if work:
        search = _NEEDS_WORK.search
        changed: list[Any] | None = None
        for i, kind in work:
            v = values[i]
            if kind == _TEXT:
                if search(v) is not None:
                    return None
            elif kind == _WIDE:
                if not _MIN <= v < _MAX:
                    return None
            elif kind == _HEX:
                if changed is None:
                    changed = list(values)
                changed[i] = v.hex().upper()
            elif not math.isfinite(v):
                return None
            elif kind == _R4:
                if changed is None:
                    changed = list(values)
                changed[i] = float.__repr__(v)
        if changed is not None:
            values = tuple(changed)
    return template % values


def _shape(starts: list[str], types: tuple[type, ...], open_: str, close: str) -> Shape:
    parts = [open_]
    work: list[tuple[int, int]] = []
    for i, (start, t) in enumerate(zip(starts, types)):
        el = _element(t, start, work, i)
        if el is None:
            return None
        parts.append(el)
    parts.append(close)
    return "".join(parts), tuple(work)


def stream_body(items: list[Any]) -> str | None:
    """``encode_stream(items)`` from the shape's template, or None (then ``encode_stream``)."""
    values = tuple(items)
    key = tuple(map(type, values))
    try:
        shape = _STREAMS[key]
    except KeyError:
        shape = _shape(["<elt"] * len(key), key, "<stream>", "</stream>")
        if len(_STREAMS) >= _LIMIT:
            _STREAMS.clear()
        _STREAMS[key] = shape
    return _fill(shape, values)


def map_body(entries: dict[str, Any]) -> str | None:
    """``encode_map(entries)`` from the shape's template, or None (then ``encode_map``)."""
    values = tuple(entries.values())
    key = (tuple(entries), tuple(map(type, values)))
    try:
        shape = _MAPS[key]
    except KeyError:
        names = key[0]
        if all(type(n) is str and _PLAIN_NAME.fullmatch(n) and "%" not in n for n in names):
            shape = _shape([f'<elt name="{n}"' for n in names], key[1], "<map>", "</map>")
        else:
            shape = None
        if len(_MAPS) >= _LIMIT:
            _MAPS.clear()
        _MAPS[key] = shape
    return _fill(shape, values)
