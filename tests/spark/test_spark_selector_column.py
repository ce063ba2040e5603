"""selector(text) as a Spark Column: exact JMS semantics over rows of the jms schema."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from amqp_jms.message._data import view
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


_TABLE: list[tuple[str, list[int]]] = [
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
    ("total NOT IN ('1')", [2]),  # NOT IN on a number is unknown (Jakarta Messaging TCK)
    ("NOT (total IN ('1'))", [2]),
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
]


def test_selector_column_table(frame: Any) -> None:
    """Every selector of the table in one Spark job (one column each)."""
    from amqp_jms.spark.functions import selector

    columns = [selector(text).alias(f"c{k}") for k, (text, _) in enumerate(_TABLE)]
    rows = frame.select("message_id", *columns).collect()
    wrong = []
    for k, (text, expected) in enumerate(_TABLE):
        got = sorted(int(r.message_id[3:]) for r in rows if r[f"c{k}"])
        if got != expected:
            wrong.append((text, got, expected))
    assert wrong == []


def test_invalid_selector_raises_before_spark_runs() -> None:
    from amqp_jms.exceptions import InvalidSelectorException
    from amqp_jms.spark.functions import selector

    with pytest.raises(InvalidSelectorException):
        selector("region = ")
    with pytest.raises(InvalidSelectorException, match="boolean with a number"):
        selector("TRUE = 0")  # Jakarta Messaging TCK


_CROSS = [
    "i * 65536 * 65536 = 0",  # int arithmetic wraps at 32 bits
    "l * 65536 * 65536 = 281474976710656",
    "l + 9223372036854775807 < 0",  # long wraps at 64 bits
    "f * 3 = 0.3F * 3",  # float arithmetic rounds to binary32
    "f = 0.1",  # float vs double: the float promotes exactly, not equal
    "f = 0.1F",
    "i / 2 = 1 OR i / -2 = -1",
    "i / 0 = 0 OR NOT (i / 0 = 0)",
    "d / 0 > 0",
    "s = 'x' OR s <> 'yy'",
    "s LIKE '%x%' OR NOT (s LIKE '_')",
    "i BETWEEN 1 AND 3",
    "i NOT BETWEEN 1 AND 3",
    "s IN ('x', 'yy') OR i IN ('1')",
    "s NOT IN ('x') OR i NOT IN ('1')",
    "bo OR i > 2",
    "NOT bo AND d < 1.5",
    "missing = 1 OR i = 2",
    "-i = -2 AND -(l) < 0",
    "JMSPriority = 4 AND JMSDeliveryMode = 'PERSISTENT'",
    "JMSType = 't1' OR JMSType IS NULL",
]


def test_spark_column_agrees_with_selector_matches(spark: Any) -> None:
    """The Spark compilation gives the same answer as the per-message engine, row by row."""
    import random

    from amqp_jms.message import TextMessage
    from amqp_jms.selector import Selector
    from amqp_jms.spark.functions import selector
    from amqp_jms.spark.schema import message_to_values, row_schema
    from amqp_jms.types import Float, Int, Short

    rng = random.Random(7)
    messages = []
    for n in range(40):
        msg = TextMessage(f"m{n}")
        msg.set_jms_message_id(f"ID:{n}")
        msg.set_jms_priority(rng.choice([0, 4, 9]))
        msg.set_jms_delivery_mode(rng.choice([1, 2]))
        msg.set_jms_type(rng.choice([None, "t1", "t2"]))
        choices: dict[str, list[Any]] = {
            "i": [Int(2), Int(65536), Int(-3), Short(1), "2", None],
            "l": [65536, 2**40, -(2**62), 1, 2.0],
            "f": [Float(0.1), Float(1.5), Float(float("nan")), 0.1],
            "d": [0.1, 1.25, -2.0, float("inf"), Int(1)],
            "s": ["x", "yy", "a_x%", "", 5],
            "bo": [True, False, "true", None],
        }
        for name, options in choices.items():
            value = rng.choice(options)
            if value is not None:
                msg.set_object_property(name, value)
        messages.append(msg)
    schema = row_schema()
    data = []
    for msg in messages:
        values = message_to_values(msg)
        for name in ("timestamp", "expiration", "delivery_time"):
            if values[name] is not None:
                values[name] = datetime.datetime.fromtimestamp(values[name] / 1e6, tz=datetime.UTC)
        values["properties"] = dict(values["properties"])
        data.append(tuple(values.get(n) for n in schema.names))
    frame = spark.createDataFrame(data, schema).cache()
    columns = [selector(text).alias(f"c{k}") for k, text in enumerate(_CROSS)]
    got = {r.message_id: r for r in frame.select("message_id", *columns).collect()}
    for k, text in enumerate(_CROSS):
        compiled = Selector(text)
        for msg in messages:
            expected = compiled.matches(msg)
            data = view(msg)
            assert got[data.message_id][f"c{k}"] == expected, (text, data.message_id, data.properties)


def test_a_backtracking_like_pattern_stays_linear(spark: Any) -> None:
    """``'%a%a%a%a%a%a%b'`` as a ``.*`` Java regex takes minutes on a long run of ``a``; the
    column function's atomic groups answer at once (and exactly)."""
    import time

    from amqp_jms.spark.functions import selector
    from amqp_jms.spark.schema import row_schema

    schema = row_schema()
    ts = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    data = []
    for i, text in enumerate(["a" * 3000, "a" * 3000 + "b", "ab"]):
        values: dict[str, Any] = dict.fromkeys(schema.names)
        values.update(message_id=f"ID:{i}", jms_type=text, priority=4, delivery_mode=2, timestamp=ts)
        data.append(tuple(values[n] for n in schema.names))
    df = spark.createDataFrame(data, schema)
    t0 = time.monotonic()
    rows = df.select("message_id", selector("JMSType LIKE '%a%a%a%a%a%a%b'").alias("hit")).collect()
    assert time.monotonic() - t0 < 30
    assert {r.message_id: r.hit for r in rows} == {"ID:0": False, "ID:1": True, "ID:2": False}
