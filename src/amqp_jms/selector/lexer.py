"""Selector tokens: Java literal and identifier syntax, SQL keywords, operators.

Why a hand-written scanner: the literal rules are Java's (octal ``017``, hex ``0x1F``, binary
``0b101``, ``_`` digit separators, ``L``/``F``/``D`` suffixes, hex floats), identifiers use
``Character.isJavaIdentifierStart/Part`` (Unicode letters, ``$``, ``_``, currency symbols), and
every error must name a position and what was expected. Numeric tokens keep their text; the
parser turns them into typed literals because a leading minus sign changes what is in range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._identifiers import KEYWORDS, is_keyword
from .._identifiers import ident_part as _ident_part
from .._identifiers import ident_start as _ident_start
from ..exceptions import InvalidSelectorException

__all__ = ["EXCERPT", "KEYWORDS", "Token", "excerpt", "selector_error", "tokenize"]


# Java whitespace for selectors: space, tab, form feed, line terminators.
_WHITESPACE = " \t\f\n\r"

_D = r"[0-9](?:[0-9_]*[0-9])?"
_H = r"[0-9a-fA-F](?:[0-9a-fA-F_]*[0-9a-fA-F])?"
_EXP = rf"[eE][+-]?{_D}"
_NUMBER_FORMS = [
    ("hexfloat", re.compile(rf"0[xX](?:{_H}?\.{_H}|{_H}\.?)[pP][+-]?{_D}[fFdD]?")),
    ("hex", re.compile(rf"0[xX]{_H}[lL]?")),
    ("bin", re.compile(r"0[bB][01](?:[01_]*[01])?[lL]?")),
    (
        "float",
        re.compile(
            rf"{_D}\.(?:{_D})?(?:{_EXP})?[fFdD]?|\.{_D}(?:{_EXP})?[fFdD]?|{_D}{_EXP}[fFdD]?|{_D}[fFdD]"
        ),
    ),
    ("int", re.compile(rf"{_D}[lL]?")),
]

_OPERATORS = ("<>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "(", ")", ",")


@dataclass(frozen=True, slots=True)
class Token:
    """``kind`` is ``keyword`` (text upper-cased), ``ident``, ``string``, ``number`` (kind of
    number in ``form``), ``op`` or ``end``; ``pos`` is the 0-based character offset."""

    kind: str
    text: str
    pos: int
    form: str = ""

    def describe(self) -> str:
        if self.kind == "end":
            return "end of selector"
        if self.kind == "string":
            return f"string literal {excerpt(self.text)}"
        if self.kind == "keyword":
            return f"keyword {self.text}"
        return excerpt(self.text)


EXCERPT = 160
"""At most this many characters of a selector are quoted in an error: a 40 KB selector (or a
40 KB string literal in one) must not become a 40 KB log line or AMQP error description."""


def excerpt(text: str, pos: int | None = None) -> str:
    """``text`` quoted for an error message: whole when short, else the part around ``pos`` (the
    start when ``pos`` is None) with a note of the full length."""
    if len(text) <= EXCERPT:
        return repr(text)
    start = 0 if pos is None else max(0, min(pos - EXCERPT // 2, len(text) - EXCERPT))
    part = text[start : start + EXCERPT]
    before = "..." if start else ""
    after = "..." if start + EXCERPT < len(text) else ""
    where = f"characters {start}-{start + len(part)} of {len(text)}"
    return f"{before}{part!r}{after} ({where})"


def selector_error(text: str, pos: int, message: str) -> InvalidSelectorException:
    """An ``InvalidSelectorException`` naming the position (0-based column) and the problem,
    quoting the selector around that position (``excerpt``)."""
    return InvalidSelectorException(
        f"invalid selector at position {pos}: {message} (selector: {excerpt(text, pos)})"
    )


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, ending with an ``end`` token; raise on any lexical error."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append(Token("end", "", n))
            return tokens
        ch = text[i]
        if ch == "'":
            start, i, parts = i, i + 1, []
            while True:
                j = text.find("'", i)
                if j < 0:
                    raise selector_error(
                        text, start, "unterminated string literal (expected a closing quote ')"
                    )
                parts.append(text[i:j])
                if j + 1 < n and text[j + 1] == "'":
                    parts.append("'")
                    i = j + 2
                    continue
                i = j + 1
                break
            tokens.append(Token("string", "".join(parts), start))
        elif (ch.isdigit() and ch.isascii()) or (ch == "." and i + 1 < n and "0" <= text[i + 1] <= "9"):
            best_form, best_end = "", i
            for form, rx in _NUMBER_FORMS:
                m = rx.match(text, i)
                if m and m.end() > best_end:
                    best_form, best_end = form, m.end()
            if best_end < n and (text[best_end] == "." or _ident_part(text[best_end])):
                raise selector_error(text, i, f"malformed numeric literal {text[i : best_end + 1]!r}")
            tokens.append(Token("number", text[i:best_end], i, best_form))
            i = best_end
        elif _ident_start(ch):
            start = i
            i += 1
            while i < n and _ident_part(text[i]):
                i += 1
            word = text[start:i]
            if is_keyword(word):
                tokens.append(Token("keyword", word.upper(), start))
            else:
                tokens.append(Token("ident", word, start))
        else:
            for op in _OPERATORS:
                if text.startswith(op, i):
                    tokens.append(Token("op", op, i))
                    i += len(op)
                    break
            else:
                raise selector_error(
                    text, i, f"unexpected character {ch!r} (expected an identifier, literal, operator or '(')"
                )
