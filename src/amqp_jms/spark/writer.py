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
    from .failover import is_failover_url
    from .schema import epoch_millis, values_to_message

    failover = is_failover_url(options.url)
    if failover and id_prefix is None:  # a re-send after a failover keeps the message ids
        import uuid

        id_prefix = f"{uuid.uuid4()}:{_task_ids()[0]}"
    connection = open_connection(options)
    count = 0
    sent: _Sent | None = [] if failover else None
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
            how = {"delivery_mode": int(mode), "priority": int(priority), "time_to_live": ttl}
            producer.send(message, **how)
            if sent is not None:
                sent.append((dest, message, how))
            count += 1
        _commit(session, producers, sent, id_prefix)
    finally:
        connection.close()
    return count


#: Re-sends of a partition a failover voided before its commit gives up.
_MAX_RESENDS = 5


_Sent = list[tuple[Any, Any, dict[str, int]]]  # (destination, message, send keywords)


def _commit(session: Any, producers: dict[Any, Any], sent: _Sent | None, prefix: str | None) -> None:
    """Commit the task's transaction. With a failover url (``sent`` holds the task's messages) a
    commit a failover voided (``TransactionRolledBackException``: the sends on the lost connection
    are gone) re-sends them all, in order and under the same message ids, in the session's new
    transaction; a commit that was in doubt so leaves duplicates with the same ``message_id`` only."""
    from ..exceptions import TransactionRolledBackException

    for attempt in range(_MAX_RESENDS + 1):
        try:
            session.commit()
            return
        except TransactionRolledBackException:
            if sent is None or attempt == _MAX_RESENDS:
                raise
        if prefix is not None:
            for producer in producers.values():
                _fix_message_ids(producer, prefix)  # the counter restarts: the same ids again
        for dest, message, how in sent:
            producers[dest].send(message, **how)


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
