"""``LIKE`` without backtracking: every evaluator matches a pattern in time linear in the text.

A LIKE pattern compiled to a backtracking regex (``%`` as ``.*``) takes exponential-looking time
on ``p LIKE '%a%a%a%a%a%a%b'`` against 80 ``a``: one selector blocked the broker's event loop for
seconds. A pattern is a chain of fixed-length *segments* (literal characters and ``_``) between
``%``s, and matching the segments greedily, each at its leftmost place after the previous one, is
exact (a later place for a segment can only leave less room for the rest). So the first segment
is tested at the start, the last at the end, each middle one found once, left to right: no
position is ever revisited, and a segment with ``_`` is a regex without repetition.

:func:`like_matcher` is the per-message form (the compiled and generated selectors, the broker);
:func:`like_segments` is the parsed form other evaluators build on (the Spark column function
turns it into a Java regex of atomic groups that cannot backtrack either; Arrow's ``match_like``
uses RE2, which is linear already).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LikeSegment", "like_matcher", "like_segments"]

WILD_ONE = None  # a ``_`` in a segment's characters


@dataclass(frozen=True, slots=True)
class LikeSegment:
    """Characters between two ``%`` (``None`` = ``_``, any one character)."""

    chars: tuple[str | None, ...]

    @property
    def literal(self) -> str | None:
        """The text when the segment has no ``_``, else ``None``."""
        if any(c is None for c in self.chars):
            return None
        return "".join(c for c in self.chars if c is not None)


def like_segments(pattern: str, escape: str | None) -> list[LikeSegment]:
    """The segments of ``pattern`` split at each ``%`` (n ``%`` give n + 1 segments, some empty);
    ``escape`` makes the next character literal."""
    segments: list[LikeSegment] = []
    cur: list[str | None] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if escape is not None and c == escape and i + 1 < n:
            cur.append(pattern[i + 1])
            i += 2
            continue
        if c == "%":
            segments.append(LikeSegment(tuple(cur)))
            cur = []
        else:
            cur.append(WILD_ONE if c == "_" else c)
        i += 1
    segments.append(LikeSegment(tuple(cur)))
    return segments


class _Seg:
    """One segment, ready to test: ``at(s, i)``, ``find(s, lo, hi)`` (leftmost start, or -1)."""

    __slots__ = ("_rx", "size", "text")

    def __init__(self, seg: LikeSegment) -> None:
        self.size = len(seg.chars)
        self.text = seg.literal
        self._rx = None
        if self.text is None:
            body = "".join("." if c is None else re.escape(c) for c in seg.chars)
            self._rx = re.compile(body, re.DOTALL)  # no repetition: cannot backtrack

    def at(self, s: str, i: int) -> bool:
        if self.text is not None:
            return s.startswith(self.text, i)
        assert self._rx is not None
        return self._rx.match(s, i) is not None

    def find(self, s: str, lo: int, hi: int) -> int:
        if self.text is not None:
            return s.find(self.text, lo, hi)
        assert self._rx is not None
        m = self._rx.search(s, lo, hi)
        return m.start() if m is not None else -1


def like_matcher(pattern: str, escape: str | None) -> Callable[[str], bool]:
    """``match(text) -> bool``: whether the whole ``text`` matches the LIKE ``pattern``."""
    parsed = like_segments(pattern, escape)
    if len(parsed) == 1:
        only = _Seg(parsed[0])
        if only.text is not None:
            text = only.text
            return lambda s: s == text
        size = only.size
        return lambda s: len(s) == size and only.at(s, 0)
    first, last = _Seg(parsed[0]), _Seg(parsed[-1])
    middle = [_Seg(p) for p in parsed[1:-1] if p.chars]
    minimum = first.size + last.size + sum(m.size for m in middle)

    def match(s: str) -> bool:
        n = len(s)
        if n < minimum or not first.at(s, 0):
            return False
        pos = first.size
        end = n - last.size
        for seg in middle:
            i = seg.find(s, pos, end)
            if i < 0:
                return False
            pos = i + seg.size
        return last.at(s, end)

    return match
