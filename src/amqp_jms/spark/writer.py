"""Batch and streaming writers: each task sends its partition in one transacted session.

A task commits its session when its rows are all sent, so a failed or retried task leaves
nothing behind (the connection closes without a commit: the broker discards the transaction).
A Spark job can still fail after some tasks committed; a streaming batch is then replayed, and
because streaming-write message ids are deterministic (``ID:<queryId>:<batchId>:<partition>:
<seq>``, ``seq`` counting from 1 per destination) a consumer can de-duplicate the replay on ``message_id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage

from .options import JmsOptions

__all__ = ["JmsCommitMessage", "JmsStreamWriter", "JmsWriter", "send_partition"]


@dataclass(frozen=True)
class JmsCommitMessage(WriterCommitMessage):
    """What a write task reports: its partition and how many messages it committed."""

    partition: int
    count: int


def _task_ids() -> tuple[int, str | None, str | None]:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return 0, None, None
    return (
        ctx.partitionId(),
        ctx.getLocalProperty("sql.streaming.queryId"),
        ctx.getLocalProperty("streaming.sql.batchId"),
    )


def send_partition(options: JmsOptions, rows: Iterator[Any], id_prefix: str | None = None) -> int:
    """Send ``rows`` in one transaction; return the count. Rows may name their own destination."""
    from ..destination import parse_destination
    from ._client import open_connection
    from .schema import epoch_millis, values_to_message

    connection = open_connection(options)
    count = 0
    try:
        session = connection.create_session(True)
        producers: dict[Any, Any] = {}
        default_dest = options.destination
        for row in rows:
            values = row.asDict() if hasattr(row, "asDict") else dict(row)
            dest_text = values.get("destination")
            dest = parse_destination(dest_text) if dest_text and default_dest is None else default_dest
            if dest is None:
                raise ValueError("jms data source: no 'destination' option and the row has no destination")
            producer = producers.get(dest)
            if producer is None:
                producer = producers[dest] = session.create_producer(dest)
                if id_prefix is not None:
                    _fix_message_ids(producer, id_prefix)
            message = values_to_message(values, options.message_type)
            mode = values.get("delivery_mode") or options.delivery_mode
            priority = values.get("priority")
            priority = options.priority if priority is None else priority
            ttl = options.time_to_live
            expiration = epoch_millis(values.get("expiration"))
            if expiration:
                import time

                ttl = max(1, expiration - int(time.time() * 1000))
            producer.send(message, delivery_mode=int(mode), priority=int(priority), time_to_live=ttl)
            count += 1
        session.commit()
    finally:
        connection.close()
    return count


def _fix_message_ids(producer: Any, prefix: str) -> None:
    """Make the producer number its messages ``ID:<prefix>:1``, ``:2`` ... (replay-stable ids)."""
    from ._client import set_message_id_prefix

    set_message_id_prefix(producer, f"ID:{prefix}")


class JmsWriter(DataSourceWriter):
    """``df.write.format("jms")``: one transaction per partition."""

    def __init__(self, options: JmsOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> JmsCommitMessage:
        partition, _, _ = _task_ids()
        return JmsCommitMessage(partition, send_partition(self.options, iterator))


class JmsStreamWriter(DataSourceStreamWriter):
    """``df.writeStream.format("jms")``: per-task transactions, deterministic message ids."""

    def __init__(self, options: JmsOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> JmsCommitMessage:
        partition, query_id, batch_id = _task_ids()
        prefix = f"{query_id or 'query'}:{batch_id or 0}:{partition}"
        return JmsCommitMessage(partition, send_partition(self.options, iterator, prefix))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to do: each task already committed its own transaction."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Failed tasks rolled back; committed ones are de-duplicated downstream by message id."""
