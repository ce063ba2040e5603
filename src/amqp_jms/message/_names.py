"""Property-name validation: a JMS property name must be a message-selector identifier.

JMS 2.0 §3.5.1 and §3.8.1.1: the first character satisfies Java's
``Character.isJavaIdentifierStart``, every following one ``isJavaIdentifierPart``, and the name is
not one of the selector words NULL TRUE FALSE NOT AND OR BETWEEN LIKE IN IS ESCAPE (in any case).
Java decides "letter", "digit" and so on from Unicode general categories, so the same test is
written here with ``unicodedata`` (code point by code point, as Java does for supplementary
characters). Names are checked on every ``set_*_property``, so names that passed are remembered.
"""

from __future__ import annotations

import unicodedata

__all__ = ["SELECTOR_KEYWORDS", "check_property_name", "is_identifier"]

#: Words a selector identifier may not be (compared case-insensitively).
SELECTOR_KEYWORDS = frozenset(
    {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE"}
)

# Character.isJavaIdentifierStart: isLetter (Lu Ll Lt Lm Lo), LETTER_NUMBER (Nl),
# CURRENCY_SYMBOL (Sc), CONNECTOR_PUNCTUATION (Pc).
_START_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"})
# Character.isJavaIdentifierPart adds DECIMAL_DIGIT_NUMBER (Nd), COMBINING_SPACING_MARK (Mc),
# NON_SPACING_MARK (Mn) and the identifier-ignorable characters (FORMAT (Cf) and some controls).
_PART_CATEGORIES = _START_CATEGORIES | {"Nd", "Mc", "Mn", "Cf"}

_valid_cache: set[str] = set()
_CACHE_LIMIT = 4096


def _is_ignorable_control(cp: int) -> bool:
    # Character.isIdentifierIgnorable: 0x00-0x08, 0x0E-0x1B, 0x7F-0x9F (plus Cf, handled above).
    return cp <= 0x08 or 0x0E <= cp <= 0x1B or 0x7F <= cp <= 0x9F


def is_identifier(name: str) -> bool:
    """True when ``name`` is a JMS selector identifier (Java identifier rules, not a keyword)."""
    if not name:
        return False
    if name.isascii():
        first = name[0]
        if not (first.isalpha() or first in "_$"):
            return False
        for ch in name:
            if not (ch.isalnum() or ch in "_$" or _is_ignorable_control(ord(ch))):
                return False
    else:
        category = unicodedata.category
        if category(name[0]) not in _START_CATEGORIES:
            return False
        for ch in name[1:]:
            if category(ch) not in _PART_CATEGORIES and not _is_ignorable_control(ord(ch)):
                return False
    return name.upper() not in SELECTOR_KEYWORDS


def check_property_name(name: object) -> None:
    """Raise ``ValueError`` unless ``name`` is a valid property name (``TypeError`` if not a str).

    ``None`` and ``""`` are ``ValueError`` too: Java's providers throw IllegalArgumentException.
    """
    if type(name) is str and name in _valid_cache:
        return
    if name is None:
        raise ValueError("property name must not be None")
    if not isinstance(name, str):
        raise TypeError(f"property name must be a str, not {type(name).__name__}")
    if not name:
        raise ValueError("property name must not be empty")
    if not is_identifier(name):
        if name.upper() in SELECTOR_KEYWORDS:
            raise ValueError(f"property name {name!r} is a reserved selector word")
        raise ValueError(
            f"property name {name!r} is not a valid selector identifier "
            "(must start with a letter, '_' or '$' and continue with letters, digits, '_' or '$')"
        )
    if len(_valid_cache) < _CACHE_LIMIT:
        _valid_cache.add(name)
