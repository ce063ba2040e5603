"""Filter pushdown: Spark's pushed filters on header columns as one JMS selector.

Why: a filter the broker applies never leaves the queue, and a browse read then moves only the
messages the query keeps. PySpark (4.1+) hands a batch reader's ``pushFilters`` the conjuncts it
can express (comparisons, ``IN``, ``IS [NOT] NULL``, ``NOT``, string prefix/suffix/contains; an
``OR`` is never handed over), and only when ``spark.sql.python.filterPushdown.enabled=true``.

Only columns whose selector identifier has *the same three-valued meaning* are pushed:

==================  ====================  ==========================================
column              selector identifier   note
==================  ====================  ==========================================
``message_id``      ``JMSMessageID``
``correlation_id``  ``JMSCorrelationID``
``jms_type``        ``JMSType``
``priority``        ``JMSPriority``
``delivery_mode``   ``JMSDeliveryMode``   1/2 as ``'NON_PERSISTENT'``/``'PERSISTENT'`` (``=``, ``IN``)
``delivery_count``  ``JMSXDeliveryCount``
``group_id``        ``JMSXGroupID``
``group_seq``       ``JMSXGroupSeq``
==================  ====================  ==========================================

Timestamps are not pushed (the column is NULL where the header is 0, so ``NOT`` would differ),
nor property values (PySpark does not push ``properties['x']``): Spark evaluates those itself.
A literal whose type does not match its column is left to Spark too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..selector.ast import quote

__all__ = ["PUSHABLE", "to_selector"]

#: column -> (selector identifier, Python type of its literals)
PUSHABLE: dict[str, tuple[str, type]] = {
    "message_id": ("JMSMessageID", str),
    "correlation_id": ("JMSCorrelationID", str),
    "jms_type": ("JMSType", str),
    "priority": ("JMSPriority", int),
    "delivery_mode": ("JMSDeliveryMode", int),
    "delivery_count": ("JMSXDeliveryCount", int),
    "group_id": ("JMSXGroupID", str),
    "group_seq": ("JMSXGroupSeq", int),
}
_MODES = {1: "'NON_PERSISTENT'", 2: "'PERSISTENT'"}
_COMPARE = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}


def _literal(column: str, value: Any) -> str | None:
    expected = PUSHABLE[column][1]
    if isinstance(value, bool) or not isinstance(value, expected):
        return None
    if isinstance(value, str):
        return quote(value)
    number = int(value)  # type: ignore[call-overload]  # an int: checked above
    return _MODES.get(number) if column == "delivery_mode" else str(number)


def _like(value: Any) -> str | None:
    """``value`` with LIKE's wildcards escaped (``ESCAPE '!'``), not yet quoted."""
    if not isinstance(value, str):
        return None
    return value.replace("!", "!!").replace("%", "!%").replace("_", "!_")


def _column(filter_: Any) -> str | None:
    path = getattr(filter_, "attribute", None)
    if not isinstance(path, tuple) or len(path) != 1 or path[0] not in PUSHABLE:
        return None
    return str(path[0])


def translate(filter_: Any) -> str | None:
    """One pushed filter as selector text, or ``None`` when it cannot be pushed exactly."""
    kind = type(filter_).__name__
    if kind == "Not":
        inner = translate(filter_.child)
        return None if inner is None else f"NOT ({inner})"
    column = _column(filter_)
    if column is None:
        return None
    ident = PUSHABLE[column][0]
    if kind in _COMPARE:
        if column == "delivery_mode" and kind != "EqualTo":
            return None
        literal = _literal(column, filter_.value)
        return None if literal is None else f"{ident} {_COMPARE[kind]} {literal}"
    if kind == "In":
        literals = [_literal(column, v) for v in filter_.value]
        if not literals or any(lit is None for lit in literals):
            return None
        if PUSHABLE[column][1] is str or column == "delivery_mode":
            return f"{ident} IN ({', '.join(str(lit) for lit in literals)})"
        return "(" + " OR ".join(f"{ident} = {lit}" for lit in literals) + ")"  # IN takes strings only
    if kind == "IsNull":
        return f"{ident} IS NULL"
    if kind == "IsNotNull":
        return f"{ident} IS NOT NULL"
    if kind in ("StringStartsWith", "StringEndsWith", "StringContains") and PUSHABLE[column][1] is str:
        text = _like(filter_.value)
        if text is None:
            return None
        pattern = {
            "StringStartsWith": f"{text}%",
            "StringEndsWith": f"%{text}",
            "StringContains": f"%{text}%",
        }
        return f"{ident} LIKE {quote(pattern[kind])} ESCAPE '!'"
    return None


def to_selector(selector: str | None, filters: Iterable[Any]) -> tuple[str | None, list[Any]]:
    """The user's ``selector`` AND-ed with every filter that translates; and the rest (for Spark)."""
    parts = [f"({selector})"] if selector else []
    rest = []
    for filter_ in filters:
        text = translate(filter_)
        if text is None:
            rest.append(filter_)
        else:
            parts.append(f"({text})")
    return (" AND ".join(parts) or None), rest
