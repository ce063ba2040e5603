"""The streaming reader's write-ahead log: Arrow IPC segments of raw encoded messages.

Why it exists: a broker forgets a message once it is accepted, and Spark may replay a batch
after a crash. So the driver appends what it received to a segment, makes it durable (fsync of
the file and of the directory), and only then accepts the messages. Each segment holds the
messages of one task; its id is the stream offset; executors read segments by id; a segment is
deleted only once Spark has committed the batch that contains it. A crash at any point either
leaves the messages un-accepted at the broker (redelivered) or durable in a segment (replayed):
never lost, at worst duplicated.

Layout under ``walPath``::

    seg-00000000000000000007.arrow     one Arrow IPC file, schema {amqp: binary}
    .seg-...arrow.tmp                  a segment being written (ignored, removed on open)

Segment ids increase by one and are never reused: the next id is one more than the largest of
the ids on disk and the offset Spark hands back (so deleting committed segments cannot make an
id come back).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

import pyarrow as pa

__all__ = ["WAL_SCHEMA", "WriteAheadLog", "delete_segments_through", "read_segment", "segment_path"]

WAL_SCHEMA = pa.schema([pa.field("amqp", pa.binary(), nullable=False)])
_NAME = re.compile(r"^seg-(\d{20})\.arrow$")


def segment_path(directory: str, segment_id: int) -> str:
    """Where segment ``segment_id`` lives under ``directory``."""
    return os.path.join(directory, f"seg-{segment_id:020d}.arrow")


def read_segment(directory: str, segment_id: int) -> pa.Array:
    """The raw encoded messages of one segment, in the order they were received."""
    with pa.memory_map(segment_path(directory, segment_id), "r") as source:
        table = pa.ipc.open_file(source).read_all()
    column = table.column(0)
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


def delete_segments_through(directory: str, end: int) -> int:
    """Delete the segments ``<= end`` of the log in ``directory`` (without opening it: opening
    sweeps half-written files, which must not happen while another thread appends)."""
    removed = 0
    if not os.path.isdir(directory):
        return 0
    for name in os.listdir(directory):
        match = _NAME.match(name)
        if match and int(match.group(1)) <= end:
            try:
                os.unlink(os.path.join(directory, name))
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class WriteAheadLog:
    """A directory of numbered segments. Not thread-safe: the stream reader's receiver guards it."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            if name.startswith(".seg-") and name.endswith(".tmp"):
                os.unlink(os.path.join(directory, name))  # a write cut short by a crash
        ids = self.segment_ids()
        self._last = ids[-1] if ids else 0

    def segment_ids(self) -> list[int]:
        """The ids of the complete segments on disk, ascending."""
        ids = []
        for name in os.listdir(self.directory):
            match = _NAME.match(name)
            if match:
                ids.append(int(match.group(1)))
        ids.sort()
        return ids

    def last_id(self) -> int:
        """The largest id ever appended by this log (or found on disk when it was opened)."""
        return self._last

    def observe(self, offset: int) -> None:
        """Make sure new ids are larger than ``offset`` (an offset Spark has already seen)."""
        self._last = max(self._last, offset)

    def append(self, messages: Sequence[bytes] | pa.Array) -> int:
        """Write one segment durably and return its id. The segment is complete or absent."""
        segment_id = self._last + 1
        final = segment_path(self.directory, segment_id)
        tmp = os.path.join(self.directory, "." + os.path.basename(final) + ".tmp")
        array = messages if isinstance(messages, pa.Array) else pa.array(messages, type=pa.binary())
        batch = pa.record_batch([array], schema=WAL_SCHEMA)
        with open(tmp, "wb") as handle:
            with pa.ipc.new_file(handle, WAL_SCHEMA) as writer:
                writer.write_batch(batch)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, final)
        _fsync_dir(self.directory)
        self._last = segment_id
        return segment_id

    def ids_between(self, start: int, end: int) -> list[int]:
        """Ids on disk with ``start < id <= end``."""
        return [i for i in self.segment_ids() if start < i <= end]

    def delete_through(self, end: int) -> int:
        """Delete every segment with id ``<= end`` (Spark committed them); return how many."""
        removed = 0
        for segment_id in self.segment_ids():
            if segment_id > end:
                break
            try:
                os.unlink(segment_path(self.directory, segment_id))
                removed += 1
            except FileNotFoundError:
                pass
        return removed

    def delete(self, ids: Iterable[int]) -> None:
        for segment_id in ids:
            try:
                os.unlink(segment_path(self.directory, segment_id))
            except FileNotFoundError:
                pass
