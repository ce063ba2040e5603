"""How deeply an encoded AMQP message nests, checked without decoding it.

A message whose application properties nest 1,000 levels deep is accepted at send and breaks
later when a selector or a consumer decodes it (recursion). The broker refuses it when it
arrives instead (``max_value_depth``): :func:`check_depth` walks the encoding's constructors and
sizes, skipping every scalar and binary by its length, and never builds a value.

Cheap for the common case: a level takes at least two bytes, so a message of at most twice the
limit is not looked at (callers on a hot path test ``len(data) > 2 * limit`` themselves). Each
level also needs one constructor byte among ``0x00`` (described), ``0xc0/0xc1/0xd0/0xd1`` (lists
and maps) and ``0xe0/0xf0`` (arrays), so a message with no more such bytes than the limit is not
walked either.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_depth"]

_NESTING_BYTES = (b"\x00", b"\xc0", b"\xc1", b"\xd0", b"\xd1", b"\xe0", b"\xf0")  # see above
_NOT_NESTING = bytes(b for b in range(256) if bytes([b]) not in _NESTING_BYTES)
# fixed widths by the constructor's high nibble (0x4_ .. 0x9_)
_FIXED = {0x4: 0, 0x5: 1, 0x6: 2, 0x7: 4, 0x8: 8, 0x9: 16}


def check_depth(data: Any, limit: int) -> None:
    """Raise ``ValueError`` if any value in ``data`` (a sequence of encoded values, as the
    sections of a message) nests deeper than ``limit`` compound/described levels."""
    if not limit or len(data) <= 2 * limit:
        return  # every level takes at least two bytes (a described value's 0x00 + descriptor)
    if len(data) < 65536:
        if len(data.translate(None, _NOT_NESTING)) <= limit:
            return  # one C pass (and a small copy) for the usual message
        bound = _sections_bound(data)
        if bound is not None and bound <= limit:
            return  # the nesting bytes were in binary or string values (zero-filled bodies)
    # a big message is walked straight away: binary and string values are skipped by their
    # size, so a large body (perhaps a mapped file) is not read at all
    _walk(data, limit)


def _sections_bound(data: Any) -> int | None:
    """An upper bound of how deep a message's sections nest, read from their sizes alone; None
    when ``data`` is not a sequence of sections this reads (then it is walked).

    A section is a described value (one level) whose value nests at most as deep as it has
    nesting constructor bytes; a binary or string value (a Data section, most bodies) has no
    levels at all, however many zero bytes it holds. Those are what make the byte count above
    say "maybe deep" for an ordinary message, and the walk cost a Python loop per message."""
    n = len(data)
    pos = 0
    deepest = 0
    while pos < n:
        if pos + 4 > n or data[pos] != 0x00 or data[pos + 1] != 0x53:
            return None
        start = pos + 3
        code = data[start]
        if code in (0x40, 0x45):  # null, empty list
            end = start + 1
            levels = 1
        elif code in (0xA0, 0xA1, 0xA3):
            end = start + 2 + data[start + 1]
            levels = 1
        elif code in (0xB0, 0xB1, 0xB3):
            end = start + 5 + int.from_bytes(data[start + 1:start + 5], "big")
            levels = 1
        elif code in (0xC0, 0xC1, 0xE0):
            end = start + 2 + data[start + 1]
            levels = 1 + len(data[start:end].translate(None, _NOT_NESTING))
        elif code in (0xD0, 0xD1, 0xF0):
            end = start + 5 + int.from_bytes(data[start + 1:start + 5], "big")
            levels = 1 + len(data[start:end].translate(None, _NOT_NESTING))
        else:
            return None
        if end > n:
            return None
        deepest = max(deepest, levels)
        pos = end
    return deepest


def _walk(data: Any, limit: int) -> None:
    n = len(data)
    pos = 0
    # each frame: [elements left, constructor shared by the elements (arrays) or -1, descriptor
    # values still to read before the described value itself]
    stack: list[list[int]] = []
    top: list[int] = [1 << 62, -1]  # the message: values until the end of the data
    try:
        while True:
            if top[0] == 0:
                if not stack:
                    return
                top = stack.pop()
                continue
            if not stack and pos >= n:
                return  # the last top-level value ended at the end of the data
            top[0] -= 1
            if top[1] >= 0:
                code = top[1]
            else:
                code = data[pos]
                pos += 1
                if code == 0x00:
                    # a described value: the descriptor, then the value, one level deeper
                    if len(stack) + 1 > limit:
                        raise ValueError(_deep(limit))
                    stack.append(top)
                    top = [2, -1]
                    continue
            hi = code >> 4
            width = _FIXED.get(hi)
            if width is not None:
                pos += width
            elif hi == 0xA:
                pos += 1 + data[pos]
            elif hi == 0xB:
                pos += 4 + int.from_bytes(data[pos:pos + 4], "big")
            elif code in (0xC0, 0xC1, 0xD0, 0xD1):
                wide = code >= 0xD0
                count = int.from_bytes(data[pos + (4 if wide else 1):pos + (8 if wide else 2)], "big")
                pos += 8 if wide else 2
                if count:
                    if len(stack) + 1 > limit:
                        raise ValueError(_deep(limit))
                    stack.append(top)
                    top = [count, -1]
            elif code in (0xE0, 0xF0):
                wide = code == 0xF0
                count = int.from_bytes(data[pos + (4 if wide else 1):pos + (8 if wide else 2)], "big")
                pos += 8 if wide else 2
                if len(stack) + 1 > limit:
                    raise ValueError(_deep(limit))
                elem = data[pos]
                pos += 1
                while elem == 0x00:  # described elements: one descriptor for all of them
                    pos = _skip_value(data, pos)
                    elem = data[pos]
                    pos += 1
                if count:
                    stack.append(top)
                    top = [count, elem]
            else:
                raise ValueError(f"malformed AMQP message: unknown constructor {code:#04x}")
            if pos > n:
                raise ValueError("malformed AMQP message: a value runs past the end")
    except IndexError:
        raise ValueError("malformed AMQP message: a value runs past the end") from None


def _skip_value(data: Any, pos: int) -> int:
    """The position after one scalar value (an array's descriptor); compound descriptors are
    rejected (no AMQP type uses one)."""
    code = data[pos]
    pos += 1
    width = _FIXED.get(code >> 4)
    if width is not None:
        return pos + width
    if code >> 4 == 0xA:
        return pos + 1 + data[pos]
    if code >> 4 == 0xB:
        return pos + 4 + int.from_bytes(data[pos:pos + 4], "big")
    raise ValueError(f"malformed AMQP message: array descriptor of constructor {code:#04x}")


def _deep(limit: int) -> str:
    return f"message nests values more than {limit} levels deep (limit max_value_depth)"
