"""Browse partitions (partitionColumn/lowerBound/upperBound/numPartitions, as Spark's JDBC
source): the selectors are disjoint and together select every message, whatever its value."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms.message import TextMessage
from amqp_jms.selector import Selector
from amqp_jms.spark.options import parse_options
from amqp_jms.spark.partitioning import partition_selectors
from amqp_jms.types import Byte, Double, Float, Long, Short

_VALUES: list[Any] = [
    None, -(10**12), -1, 0, 1, 9, 10, 24, 25, 26, 49, 50, 74, 75, 99, 100, 101, 10**12,
    Byte(3), Short(30), Long(60), Float(12.5), Double(87.25), Double(float("nan")),
    Double(float("inf")), Double(float("-inf")), "abc", "", "42", True, False,
]  # fmt: skip


def _message(value: Any) -> TextMessage:
    message = TextMessage("x")
    if value is not None:
        message.set_object_property("n", value)
    return message


@pytest.mark.parametrize(("lower", "upper", "count"), [(0, 100, 4), (-50, 50, 3), (0, 3, 8), (10, 11, 2)])
def test_each_message_is_in_exactly_one_partition(lower: int, upper: int, count: int) -> None:
    opts = parse_options(
        {
            "url": "amqp://h:1",
            "destination": "q",
            "partitionColumn": "n",
            "lowerBound": str(lower),
            "upperBound": str(upper),
            "numPartitions": str(count),
        }
    )
    assert opts.partitioning is not None
    texts = partition_selectors(opts.partitioning)
    assert len(texts) == min(count, upper - lower)  # no stride narrower than 1, as the JDBC source
    selectors = [Selector(text or "TRUE") for text in texts]
    for value in _VALUES:
        hits = [i for i, s in enumerate(selectors) if s.matches(_message(value))]
        assert len(hits) == 1, f"{value!r} is in partitions {hits}"


def test_header_columns_and_timestamps_as_bounds() -> None:
    base = {"url": "amqp://h:1", "destination": "q", "numPartitions": "2"}
    opts = parse_options({**base, "partitionColumn": "priority", "lowerBound": "0", "upperBound": "10"})
    assert opts.partitioning is not None
    assert partition_selectors(opts.partitioning) == [
        "JMSPriority < 5 OR JMSPriority IS NULL",
        "JMSPriority >= 5",
    ]
    opts = parse_options(
        {
            **base,
            "partitionColumn": "timestamp",
            "lowerBound": "2026-01-01T00:00:00",
            "upperBound": "2026-01-01T00:00:10+00:00",
        }
    )
    assert opts.partitioning is not None
    assert (opts.partitioning.identifier, opts.partitioning.lower, opts.partitioning.upper) == (
        "JMSTimestamp",
        1767225600000,
        1767225610000,
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"partitionColumn": "n"}, "go together.*missing lowerBound, upperBound, numPartitions"),
        ({"numPartitions": "4"}, "missing partitionColumn, lowerBound, upperBound"),
        ({"partitionColumn": "n", "lowerBound": "5", "upperBound": "5", "numPartitions": "2"}, "less than"),
        ({"partitionColumn": "n", "lowerBound": "x", "upperBound": "5", "numPartitions": "2"}, "an integer"),
        ({"partitionColumn": "message_id", "lowerBound": "0", "upperBound": "5", "numPartitions": "2"},
         "not numeric"),
        ({"partitionColumn": "JMSType", "lowerBound": "0", "upperBound": "5", "numPartitions": "2"},
         "not numeric"),
        ({"partitionColumn": "a b", "lowerBound": "0", "upperBound": "5", "numPartitions": "2"},
         "selector identifier"),
        ({"partitionColumn": "n", "lowerBound": "0", "upperBound": "5", "numPartitions": "0"},
         "'numPartitions' must be 1..1024"),
        ({"partitionColumn": "n", "lowerBound": "0", "upperBound": "5", "numPartitions": "2",
          "maxMessages": "3"}, "limit"),
    ],
)  # fmt: skip
def test_partition_options_go_together_and_are_checked(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_options({"url": "amqp://h:1", "destination": "q", **options})


def test_a_stream_refuses_browse_partitions_rather_than_ignoring_them() -> None:
    from amqp_jms.spark.features import features
    from amqp_jms.spark.source import JmsDataSource

    if features().streaming_refusal():
        pytest.skip(f"PySpark {features().version} refuses every stream (features.py)")

    options = {
        "url": "amqp://127.0.0.1:1",
        "destination": "q",
        "walPath": "/tmp/unused-wal",
        "partitionColumn": "priority",
        "lowerBound": "0",
        "upperBound": "10",
        "numPartitions": "2",
    }
    reader = JmsDataSource(options).streamReader(None)
    with pytest.raises(ValueError, match="split a browse"):
        reader.initialOffset()
