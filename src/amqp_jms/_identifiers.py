"""Java identifier rules and the selector's reserved words, defined once.

A JMS property name must be a selector identifier (JMS 2.0 §3.5.1, §3.8.1.1), so the message
layer (which property names may be set) and the selector lexer (which words are identifiers)
must agree character for character: a property that cannot be set but can be selected on, or
the reverse, is a bug users only meet with unusual names. Neither package may import the other
(docs/architecture.md), so the shared rules live here.

The rules are Java's: ``Character.isJavaIdentifierStart`` for the first character,
``isJavaIdentifierPart`` for the rest, decided from Unicode general categories as Java does.
A reserved word (NULL TRUE FALSE NOT AND OR BETWEEN LIKE IN IS ESCAPE) matches in any ASCII
case; a non-ASCII spelling whose ``upper()`` happens to be one (``ın``, dotless i) is an
identifier, as the lexer has always read it.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["KEYWORDS", "ident_part", "ident_start", "is_identifier", "is_keyword"]

#: Words a selector identifier may not be (compared case-insensitively, ASCII only).
KEYWORDS = frozenset({"NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE", "NULL", "TRUE", "FALSE"})

# Character.isJavaIdentifierStart: isLetter (Lu Ll Lt Lm Lo), LETTER_NUMBER (Nl),
# CURRENCY_SYMBOL (Sc), CONNECTOR_PUNCTUATION (Pc).
_START_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"})
# Character.isJavaIdentifierPart adds DECIMAL_DIGIT_NUMBER (Nd), COMBINING_SPACING_MARK (Mc),
# NON_SPACING_MARK (Mn) and the identifier-ignorable characters (FORMAT (Cf) and some controls).
_PART_CATEGORIES = _START_CATEGORIES | {"Nd", "Mc", "Mn", "Cf"}


def _is_ignorable_control(cp: int) -> bool:
    # Character.isIdentifierIgnorable: 0x00-0x08, 0x0E-0x1B, 0x7F-0x9F (plus Cf, handled above).
    return cp <= 0x08 or 0x0E <= cp <= 0x1B or 0x7F <= cp <= 0x9F


@lru_cache(maxsize=4096)
def ident_start(ch: str) -> bool:
    """``Character.isJavaIdentifierStart`` for one character (cached: the lexer asks per char)."""
    return unicodedata.category(ch) in _START_CATEGORIES


@lru_cache(maxsize=4096)
def ident_part(ch: str) -> bool:
    """``Character.isJavaIdentifierPart`` for one character."""
    return unicodedata.category(ch) in _PART_CATEGORIES or _is_ignorable_control(ord(ch))


def is_keyword(word: str) -> bool:
    """Whether ``word`` is a reserved selector word in some ASCII case."""
    return word.isascii() and word.upper() in KEYWORDS


def is_identifier(name: str) -> bool:
    """True when ``name`` is a JMS selector identifier (Java identifier rules, not a keyword)."""
    if not name:
        return False
    if name.isascii():  # the common case, without a category lookup per character
        first = name[0]
        if not (first.isalpha() or first in "_$"):
            return False
        for ch in name:
            if not (ch.isalnum() or ch in "_$" or _is_ignorable_control(ord(ch))):
                return False
        return name.upper() not in KEYWORDS
    if not ident_start(name[0]):
        return False
    return all(ident_part(ch) for ch in name[1:])
