"""Browse reads in several partitions: disjoint selectors over one numeric column, as Spark's
JDBC source splits a table.

Why selectors: a queue has no offsets a task could seek to, but the broker evaluates a selector
per message, so ``numPartitions`` browsers that each select one range of ``partitionColumn`` read
the queue in parallel, each message in exactly one of them. The ranges follow the JDBC source's
``columnPartition``: a stride of ``upperBound/n - lowerBound/n`` from ``lowerBound``; the bounds
only decide the stride, they filter nothing: the first partition also takes everything below (and
NULL, a message without the property), the last everything above.

``partitionColumn`` is a header column that is always a number (``priority``, ``timestamp`` —
epoch milliseconds, bounds as integers or ISO-8601 times, ``delivery_count``) or the name of a
message property. A property may hold a string, a boolean or NaN in some message, which no range
selects (a selector comparing such a value with a number is unknown); so the first partition
also takes those (``LIKE '%'`` selects strings, ``= TRUE``/``= FALSE`` booleans, ``p <> p`` NaN):
every message is in exactly one partition whatever its value.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

__all__ = ["HEADER_COLUMNS", "BrowsePartitioning", "identifier_for", "parse_bound", "partition_selectors"]

#: Row columns that may partition a browse: always present and numeric, by the mapping.
HEADER_COLUMNS = {
    "priority": "JMSPriority",
    "timestamp": "JMSTimestamp",
    "delivery_count": "JMSXDeliveryCount",
}


@dataclass(frozen=True)
class BrowsePartitioning:
    """The parsed ``partitionColumn``/``lowerBound``/``upperBound``/``numPartitions``."""

    column: str  # as the user named it
    identifier: str  # the selector identifier it stands for
    lower: int
    upper: int
    count: int

    @property
    def is_property(self) -> bool:
        return self.column not in HEADER_COLUMNS


def parse_bound(column: str, name: str, text: str) -> int:
    """A bound as an integer; for ``timestamp`` also an ISO-8601 time (UTC unless it says)."""
    stripped = text.strip()
    try:
        return int(stripped)
    except ValueError:
        pass
    if column == "timestamp":
        try:
            moment = datetime.datetime.fromisoformat(stripped)
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=datetime.UTC)
            return int(moment.timestamp() * 1000)
    kind = "an integer (epoch milliseconds) or an ISO-8601 time" if column == "timestamp" else "an integer"
    raise ValueError(f"jms data source: option {name!r} must be {kind}, got {text!r}")


def identifier_for(column: str) -> str:
    """The selector identifier of ``partitionColumn``; ``ValueError`` when it cannot partition."""
    from ..exceptions import InvalidSelectorException
    from ..selector import Selector

    if column in HEADER_COLUMNS:
        return HEADER_COLUMNS[column]
    if column.startswith("JMS") or column in {"message_id", "correlation_id", "destination", "jms_type"}:
        raise ValueError(
            f"jms data source: option 'partitionColumn' {column!r} is not numeric: give one of "
            f"{', '.join(HEADER_COLUMNS)} or the name of a numeric message property"
        )
    try:
        Selector(f"{column} IS NULL")
    except InvalidSelectorException:
        raise ValueError(
            f"jms data source: option 'partitionColumn' {column!r} is neither one of "
            f"{', '.join(HEADER_COLUMNS)} nor a message property name (a selector identifier)"
        ) from None
    return column


def partition_selectors(spec: BrowsePartitioning) -> list[str | None]:
    """One selector per partition (``None``: the whole queue); together they select every
    message exactly once."""
    ident = spec.identifier
    count = spec.count
    if spec.upper - spec.lower < count:  # as the JDBC source: no strides narrower than 1
        count = max(1, spec.upper - spec.lower)
    if count == 1:
        return [None]
    stride = spec.upper // count - spec.lower // count
    rest = f"{ident} IS NULL"
    if spec.is_property:
        rest += f" OR {ident} LIKE '%' OR {ident} = TRUE OR {ident} = FALSE OR {ident} <> {ident}"
    selectors: list[str | None] = []
    bound = spec.lower
    for i in range(count):
        low = f"{ident} >= {bound}" if i else None
        bound += stride
        high = f"{ident} < {bound}" if i != count - 1 else None
        if low is None:
            selectors.append(f"{high} OR {rest}")
        elif high is None:
            selectors.append(low)
        else:
            selectors.append(f"{low} AND {high}")
    return selectors
