"""Property-name validation: a JMS property name must be a message-selector identifier.

JMS 2.0 §3.5.1 and §3.8.1.1: the first character satisfies Java's
``Character.isJavaIdentifierStart``, every following one ``isJavaIdentifierPart``, and the name is
not one of the selector words NULL TRUE FALSE NOT AND OR BETWEEN LIKE IN IS ESCAPE (in any case).
Names beginning with ``JMS`` are reserved (§3.8.1.1): only ``JMSX…`` (JMS-defined) and ``JMS_…``
(provider-specific) name properties; any other ``JMS…`` name is a header field, which a selector
cannot read as a property, so it cannot be set as one either.
The rules themselves live in :mod:`amqp_jms._identifiers`, shared with the selector lexer so a
name is settable exactly when a selector can refer to it. Names are checked on every
``set_*_property``, so names that passed are remembered.
"""

from __future__ import annotations

from .._identifiers import KEYWORDS as SELECTOR_KEYWORDS
from .._identifiers import is_identifier, is_keyword

__all__ = ["SELECTOR_KEYWORDS", "check_property_name", "is_identifier", "is_property_name"]

_valid_cache: set[str] = set()


def _reserved_jms(name: str) -> bool:
    return name.startswith("JMS") and not name.startswith(("JMSX", "JMS_"))


def is_property_name(name: str) -> bool:
    """Whether ``name`` may name a property: a selector identifier outside the reserved ``JMS``
    header namespace."""
    return is_identifier(name) and not _reserved_jms(name)
_CACHE_LIMIT = 4096


def check_property_name(name: object, validate: bool = True) -> None:
    """Raise ``ValueError`` unless ``name`` is a valid property name (``TypeError`` if not a str).

    ``None`` and ``""`` are ``ValueError`` too: Java's providers throw IllegalArgumentException.
    With ``validate`` false (``jms.validatePropertyNames=false``) only those two and the type
    are checked, as in Qpid JMS: any other string is accepted (and not cached as valid).
    """
    if type(name) is str and name in _valid_cache:
        return
    if name is None:
        raise ValueError("property name must not be None")
    if not isinstance(name, str):
        raise TypeError(f"property name must be a str, not {type(name).__name__}")
    if not name:
        raise ValueError("property name must not be empty")
    if not validate:
        return
    if not is_identifier(name):
        if is_keyword(name):
            raise ValueError(f"property name {name!r} is a reserved selector word")
        raise ValueError(
            f"property name {name!r} is not a valid selector identifier "
            "(must start with a letter, '_' or '$' and continue with letters, digits, '_' or '$')"
        )
    if _reserved_jms(name):
        raise ValueError(
            f"property name {name!r} is reserved: names beginning with 'JMS' are header fields, "
            "except JMSX* (JMS-defined) and JMS_* (provider-specific) properties"
        )
    if len(_valid_cache) < _CACHE_LIMIT:
        _valid_cache.add(name)
