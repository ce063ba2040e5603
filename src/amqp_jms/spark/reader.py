"""Batch reads: ``spark.read.format("jms")``.

Spark runs a batch read again for every action (``count()``, then ``collect()`` …), so the
default ``mode=browse`` uses a QueueBrowser and consumes nothing: every action sees the same
messages. ``mode=consume`` drains the destination in one transaction per read, committed after
the last row is handed to Spark (a task that fails rolls back); each action then drains again,
so cache the DataFrame if it is used more than once.

A batch read is one partition: a queue's order is one sequence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from .options import JmsOptions

__all__ = ["BATCH_ROWS", "JmsBatchReader", "ReadPartition", "messages_to_batches"]

#: Rows per Arrow record batch handed to Spark.
BATCH_ROWS = 4096


@dataclass(frozen=True)
class ReadPartition(InputPartition):
    """The whole destination (batch reads are one task)."""

    index: int = 0


def messages_to_batches(
    messages: Iterator[Any], schema: pa.Schema, body_as: str, include_amqp: bool
) -> Iterator[pa.RecordBatch]:
    """Received messages (with their raw bytes when ``include_amqp``) as Arrow batches."""
    from ._client import raw_bytes
    from .schema import message_to_values, rows_to_batch

    rows: list[dict[str, Any]] = []
    for message in messages:
        values = message_to_values(message, body_as)
        if include_amqp:
            values["amqp"] = raw_bytes(message)
        rows.append(values)
        if len(rows) >= BATCH_ROWS:
            yield rows_to_batch(rows, schema)
            rows = []
    if rows:
        yield rows_to_batch(rows, schema)


class JmsBatchReader(DataSourceReader):
    def __init__(self, options: JmsOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        return [ReadPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from ._client import open_connection, open_consumer
        from .schema import arrow_schema

        opts = self.options
        schema = arrow_schema(opts.body_as, opts.include_amqp)
        connection = open_connection(opts)
        try:
            if opts.mode == "browse" and not opts.subscription:
                destination = opts.require_destination()
                if destination.is_topic:
                    raise ValueError(
                        "jms data source: a topic cannot be browsed; use mode=consume with a "
                        "subscription, or read it with readStream"
                    )
                session = connection.create_session(False)
                browser = session.create_browser(destination, opts.selector)
                yield from messages_to_batches(
                    _limited(iter(browser), opts.max_messages), schema, opts.body_as, opts.include_amqp
                )
            else:
                session = connection.create_session(True)
                consumer = open_consumer(session, opts)
                yield from messages_to_batches(
                    _drain(consumer, opts), schema, opts.body_as, opts.include_amqp
                )
                session.commit()
        finally:
            connection.close()


def _limited(messages: Iterator[Any], limit: int | None) -> Iterator[Any]:
    for n, message in enumerate(messages):
        if limit is not None and n >= limit:
            return
        yield message


def _drain(consumer: Any, opts: JmsOptions) -> Iterator[Any]:
    count = 0
    while opts.max_messages is None or count < opts.max_messages:
        message = consumer.receive(opts.timeout_ms) if opts.timeout_ms else consumer.receive_no_wait()
        if message is None:
            return
        count += 1
        yield message
