"""Batch reads: ``spark.read.format("jms")``.

Spark runs a batch read again for every action (``count()``, then ``collect()`` …), so the
default ``mode=browse`` uses a QueueBrowser and consumes nothing: every action sees the same
messages. Consuming batch reads (``mode=consume``, a topic's ``subscription``) are refused when
planned (:meth:`JmsDataSource.reader`): Spark gives a batch read no commit hook, so one would
accept messages before anything was written. The streaming form with ``availableNow`` consumes
safely, through its write-ahead log.

A batch read is one partition (a queue's order is one sequence), or, with
``partitionColumn``/``lowerBound``/``upperBound``/``numPartitions``, one browser per disjoint
selector range of that column (:mod:`.partitioning`), read in parallel.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from .features import features
from .options import JmsOptions

__all__ = ["JmsBatchReader", "ReadPartition"]


@dataclass(frozen=True)
class ReadPartition(InputPartition):
    """The destination, or the part of it ``selector`` picks (AND-ed with the read's own)."""

    index: int = 0
    selector: str | None = None


class _OptionalPushFilters:
    """``pushFilters`` that PySpark's planner sees as not overridden.

    Why: PySpark 4.1+ fails every read of a source that overrides ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is off ("do not silently ignore pushFilters").
    Here pushdown is only an optimisation of a browse (Spark evaluates whatever is not pushed),
    so reads must work with the switch off too: the bound method this descriptor returns carries
    the base method as its ``__func__`` (what that check compares), and calls the reader's
    ``_push_filters`` (what Spark's pushdown worker calls when the switch is on).
    """

    def __get__(self, reader: Any, owner: type | None = None) -> Any:
        if reader is None:
            return self
        return _BoundPushFilters(reader)


class _BoundPushFilters:
    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self.__func__ = DataSourceReader.pushFilters  # an instance attribute: not bound

    def __call__(self, filters: list[Any]) -> list[Any]:
        return self._reader._push_filters(filters)


class JmsBatchReader(DataSourceReader):
    def __init__(self, options: JmsOptions) -> None:
        self.options = options

    if features().filter_pushdown:  # PySpark 4.1+; before, Spark evaluates every filter
        pushFilters = _OptionalPushFilters()

    def _push_filters(self, filters: list[Any]) -> list[Any]:
        """Header filters become part of the browser's selector (:mod:`.pushdown`); the rest
        is handed back for Spark to evaluate. Only with
        ``spark.sql.python.filterPushdown.enabled=true`` (Spark's switch)."""
        from .pushdown import to_selector

        selector, rest = to_selector(self.options.selector, filters)
        self.options = self.options.with_(selector=selector)
        return rest

    def partitions(self) -> list[InputPartition]:
        from .partitioning import partition_selectors

        spec = self.options.partitioning
        if spec is None:
            return [ReadPartition(0)]
        return [ReadPartition(i, selector) for i, selector in enumerate(partition_selectors(spec))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from ._client import open_connection
        from .columns import message_batches
        from .schema import arrow_schema

        assert isinstance(partition, ReadPartition)
        opts = self.options
        selector = " AND ".join(f"({s})" for s in (opts.selector, partition.selector) if s) or None
        schema = arrow_schema(opts.body_as, opts.include_amqp, opts.typed_properties_as)
        destination = opts.require_destination()
        if destination.is_topic:
            raise ValueError(
                "jms data source: a topic cannot be browsed; read it with readStream (and a "
                "subscription to keep what is published while no query runs)"
            )
        connection = open_connection(opts)
        try:
            session = connection.create_session(False)
            browser = session.create_browser(destination, selector)
            yield from message_batches(
                _limited(iter(browser), opts.max_messages), schema, opts.body_as, opts.include_amqp
            )
        finally:
            connection.close()


def _limited(messages: Iterator[Any], limit: int | None) -> Iterator[Any]:
    for n, message in enumerate(messages):
        if limit is not None and n >= limit:
            return
        yield message
