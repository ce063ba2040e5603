"""Filter pushdown: each translatable Spark filter becomes a selector that keeps exactly the rows
Spark's own evaluation of the filter keeps (checked message by message with the client's selector)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyspark")
from amqp_jms.spark.features import features

if not features().filter_pushdown:
    pytest.skip(f"PySpark {features().version} has no filter pushdown (4.1+)", allow_module_level=True)

from pyspark.sql.datasource import (
    EqualTo,
    GreaterThan,
    In,
    IsNotNull,
    IsNull,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)

from amqp_jms.message import TextMessage
from amqp_jms.selector import Selector
from amqp_jms.spark.pushdown import to_selector, translate


def _message(jms_type: str | None, priority: int, persistent: bool, correlation: str | None) -> Any:
    msg = TextMessage("x")
    if jms_type is not None:
        msg.set_jms_type(jms_type)
    msg.set_jms_priority(priority)
    msg.set_jms_delivery_mode(2 if persistent else 1)
    if correlation is not None:
        msg.set_jms_correlation_id(correlation)
    return msg


_ROWS = [
    ("order", 4, True, "c-1"),
    ("order", 9, False, None),
    ("refund", 1, True, "c'2"),
    (None, 5, True, "c_3"),
]


def _spark_keeps(filter_: Any, row: tuple[Any, ...]) -> bool | None:
    """Spark's three-valued evaluation of ``filter_`` over the row's columns."""
    cols = {
        "jms_type": row[0],
        "priority": row[1],
        "delivery_mode": 2 if row[2] else 1,
        "correlation_id": row[3],
    }
    if isinstance(filter_, Not):
        inner = _spark_keeps(filter_.child, row)
        return None if inner is None else not inner
    value = cols[filter_.attribute[0]]
    if isinstance(filter_, IsNull):
        return value is None
    if isinstance(filter_, IsNotNull):
        return value is not None
    if value is None:
        return None
    if isinstance(filter_, EqualTo):
        return bool(value == filter_.value)
    if isinstance(filter_, GreaterThan):
        return bool(value > filter_.value)
    if isinstance(filter_, LessThanOrEqual):
        return bool(value <= filter_.value)
    if isinstance(filter_, In):
        return value in filter_.value
    if isinstance(filter_, StringStartsWith):
        return bool(value.startswith(filter_.value))
    raise AssertionError(filter_)


@pytest.mark.parametrize(
    "filter_",
    [
        EqualTo(("jms_type",), "order"),
        Not(EqualTo(("jms_type",), "order")),
        GreaterThan(("priority",), 4),
        LessThanOrEqual(("priority",), 4),
        In(("priority",), (1, 9)),
        In(("jms_type",), ("refund", "x")),
        Not(In(("jms_type",), ("refund",))),
        IsNull(("jms_type",)),
        IsNotNull(("correlation_id",)),
        EqualTo(("delivery_mode",), 1),
        In(("delivery_mode",), (2,)),
        EqualTo(("correlation_id",), "c'2"),
        StringStartsWith(("correlation_id",), "c_"),
        Not(StringStartsWith(("correlation_id",), "c")),
    ],
)
def test_pushed_selector_keeps_what_spark_keeps(filter_: Any) -> None:
    text = translate(filter_)
    assert text is not None
    selector = Selector(text)
    for row in _ROWS:
        assert selector.matches(_message(*row)) == bool(_spark_keeps(filter_, row)), (text, row)


def test_untranslatable_filters_stay_with_spark_and_the_user_selector_is_kept() -> None:
    keep = [
        EqualTo(("properties", "region"), "EU"),  # a nested path
        GreaterThan(("timestamp",), 0),  # NULL where the header is 0: NOT would differ
        GreaterThan(("delivery_mode",), 1),
        EqualTo(("priority",), "4"),  # a literal of another type
        EqualTo(("text",), "x"),
    ]
    pushed = EqualTo(("jms_type",), "order")
    selector, rest = to_selector("region = 'EU'", [*keep, pushed])
    assert rest == keep
    assert selector == "(region = 'EU') AND (JMSType = 'order')"
    assert to_selector(None, keep) == (None, keep)
