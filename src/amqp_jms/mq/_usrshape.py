"""The outgoing ``usr`` folder from a template per property shape (names and value types).

A producer sends the same property names with the same types message after message; only the
values change. So the folder's markup is built once per shape as a ``%`` template
(``<usr><qty dt="i4">%d</qty><region>%s</region></usr>``) and each message fills it with one
C-level ``%`` over its values. The shape is the names and the types, never the values; each
value is still checked per message (strings for characters XML must escape or cannot carry,
64-bit integers for range, floats for NaN/infinity, which have their own spellings). Anything
else (other types, ``JMS*`` names, a name IBM forbids, a value that needs work) returns None,
and the general code writes the folder element by element, raising where it must.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ._bodyshape import _FLOAT, _TEXT, _WIDE, TEMPLATE_PARTS
from .errors import MQFormatError
from .xmlfolder import _INT_DT, _NEEDS_WORK, check_usr_name_cached

__all__ = ["usr_folder"]

#: (template, indexes of str values, of 64-bit ints, of floats), or None: not templated
Shape = tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None
_SHAPES: dict[tuple[tuple[str, ...], tuple[type, ...]], Shape] = {}
_LIMIT = 1024
#: the types templated here; other values (Char, Float, bytes, None) go element by element
_USR_TYPES = frozenset({str, bool, float, *_INT_DT})
_MIN, _MAX = -(2**63), 2**63


def _shape(names: tuple[str, ...], types: tuple[type, ...]) -> Shape:
    parts = ["<usr>"]
    strs: list[int] = []
    wide: list[int] = []
    floats: list[int] = []
    for i, (n, t) in enumerate(zip(names, types)):
        if type(n) is not str or n[:3] == "JMS" or "%" in n:
            return None
        try:
            check_usr_name_cached(n)
        except MQFormatError:
            return None  # the general code raises it, in its order
        if t not in _USR_TYPES:
            return None
        attrs, conv, kind = TEMPLATE_PARTS[t]
        parts.append(f"<{n}{attrs}>{conv}</{n}>")
        if kind is not None:
            {_TEXT: strs, _WIDE: wide, _FLOAT: floats}[kind].append(i)
    parts.append("</usr>")
    return "".join(parts), tuple(strs), tuple(wide), tuple(floats)


def usr_folder(props: Mapping[str, Any]) -> str | None:
    """The ``usr`` folder for these application properties, or None (the general code decides)."""
    values = tuple(props.values())
    key = (tuple(props), tuple(map(type, values)))
    try:
        shape = _SHAPES[key]
    except KeyError:
        shape = _shape(*key)
        if len(_SHAPES) >= _LIMIT:
            _SHAPES.clear()
        _SHAPES[key] = shape
    if shape is None:
        return None
    template, strs, wide, floats = shape
    search = _NEEDS_WORK.search
    for i in strs:
        if search(values[i]) is not None:
            return None
    for i in wide:
        if not _MIN <= values[i] < _MAX:
            return None
    for i in floats:
        if not math.isfinite(values[i]):
            return None
    return template % values
