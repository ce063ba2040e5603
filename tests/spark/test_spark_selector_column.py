"""selector(text) as a Spark Column: exact JMS semantics over rows of the jms schema."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from amqp_jms.spark.typed_json import dumps_map
from amqp_jms.types import Byte, Float, Int

pytestmark = pytest.mark.spark

_ROWS: list[dict[str, Any]] = [
    {
        "id": 0,
        "jms_type": "order",
        "priority": 7,
        "delivery_mode": 2,
        "props": {"region": "EU", "total": 150, "weight": 2.5, "flag": True, "b": Byte(3)},
    },
    {
        "id": 1,
        "jms_type": "order",
        "priority": 1,
        "delivery_mode": 1,
        "props": {"region": "US", "total": Int(99), "weight": float("nan"), "flag": False},
    },
    {
        "id": 2,
        "jms_type": None,
        "priority": 4,
        "delivery_mode": 2,
        "props": {"region": "EU", "total": "150", "weight": Float(0.5)},
    },
    {"id": 3, "jms_type": "a%b\nc", "priority": 4, "delivery_mode": 2, "props": {}},
]


@pytest.fixture(scope="module")
def frame(spark: Any) -> Any:
    from amqp_jms.spark.schema import row_schema

    schema = row_schema()
    ts = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    data = []
    for row in _ROWS:
        values: dict[str, Any] = dict.fromkeys(schema.names)
        values.update(
            message_id=f"ID:{row['id']}",
            jms_type=row["jms_type"],
            priority=row["priority"],
            delivery_mode=row["delivery_mode"],
            timestamp=ts,
            typed_properties=dumps_map(row["props"]) if row["props"] else None,
        )
        data.append(tuple(values[n] for n in schema.names))
    return spark.createDataFrame(data, schema).cache()


def _ids(frame: Any, text: str) -> list[int]:
    from amqp_jms.spark.functions import selector

    return sorted(int(r.message_id[3:]) for r in frame.filter(selector(text)).select("message_id").collect())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("region = 'EU' AND total > 100", [0]),  # row 2's total is a String: never a number
        ("total > 100 OR total < 100", [0, 1]),
        ("NOT (total > 100)", [1, 2]),  # a String vs a number is false, NOT false is true; absent stays out
        ("total = '150'", [2]),  # unlike types (long vs string) are false, string = string works
        ("NOT (total = '150')", [0, 1]),  # unlike → false, NOT false → true; absent → unknown
        ("weight > 1", [0]),  # NaN compares false
        ("weight <> weight", [1]),  # NaN <> NaN is true
        ("weight BETWEEN 0.5 AND 2.5", [0, 2]),  # float 0.5 promotes exactly
        ("weight NOT BETWEEN 1 AND 2", [0, 2]),
        ("region IN ('EU', 'UK')", [0, 2]),
        ("region NOT IN ('EU')", [1]),
        ("JMSType LIKE 'a!%b_c' ESCAPE '!'", [3]),  # % literal via escape, _ matches a newline
        ("JMSType LIKE 'ord%'", [0, 1]),
        ("JMSType IS NULL", [2]),
        ("missing IS NULL AND region IS NOT NULL", [0, 1, 2]),
        ("flag", [0]),
        ("flag = FALSE", [1]),
        ("JMSPriority > 4 OR JMSDeliveryMode = 'NON_PERSISTENT'", [0, 1]),
        ("JMSTimestamp = 1767225600000", [0, 1, 2, 3]),
        ("total / 2 = 75 AND b * 2 = 6", [0]),
        ("total / 0 = 1 OR total / 0 <> 1", []),  # exact division by zero: unknown
        ("weight / 0 > 1000", [0, 2]),  # approximate: +Infinity (NaN row 1 stays out)
        ("-total < -100", [0]),
        ("JMSMessageID = 'ID:3'", [3]),
        ("", [0, 1, 2, 3]),
    ],
)
def test_selector_column(frame: Any, text: str, expected: list[int]) -> None:
    assert _ids(frame, text) == expected


def test_invalid_selector_raises_before_spark_runs() -> None:
    from amqp_jms.exceptions import InvalidSelectorException
    from amqp_jms.spark.functions import selector

    with pytest.raises(InvalidSelectorException):
        selector("region = ")
