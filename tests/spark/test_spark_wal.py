"""The write-ahead log: durable numbered segments, never-reused ids, deletion after commit."""

from __future__ import annotations

import os
from pathlib import Path

from amqp_jms.spark.wal import WriteAheadLog, read_segment, segment_path


def test_append_read_and_ids_increase(tmp_path: Path) -> None:
    wal = WriteAheadLog(str(tmp_path))
    assert wal.last_id() == 0 and wal.segment_ids() == []
    first = wal.append([b"a", b"bb"])
    second = wal.append([b"", b"\x00" * 1000])
    assert (first, second) == (1, 2)
    assert read_segment(str(tmp_path), 1).to_pylist() == [b"a", b"bb"]
    assert read_segment(str(tmp_path), 2).to_pylist() == [b"", b"\x00" * 1000]
    assert wal.ids_between(0, 2) == [1, 2] and wal.ids_between(1, 5) == [2]


def test_delete_through_keeps_later_segments_and_ids_are_never_reused(tmp_path: Path) -> None:
    wal = WriteAheadLog(str(tmp_path))
    for n in range(4):
        wal.append([bytes([n])])
    assert wal.delete_through(2) == 2
    assert wal.segment_ids() == [3, 4]
    wal.delete_through(4)
    reopened = WriteAheadLog(str(tmp_path))
    reopened.observe(4)  # the offset Spark checkpointed
    assert reopened.append([b"x"]) == 5


def test_reopen_continues_after_segments_on_disk_and_drops_partial_writes(tmp_path: Path) -> None:
    wal = WriteAheadLog(str(tmp_path))
    wal.append([b"1"])
    wal.append([b"2"])
    partial = tmp_path / ".seg-00000000000000000003.arrow.tmp"
    partial.write_bytes(b"ARROW1 cut short")
    reopened = WriteAheadLog(str(tmp_path))
    assert not partial.exists()
    assert reopened.last_id() == 2
    assert reopened.append([b"3"]) == 3
    assert sorted(os.listdir(tmp_path)) == [
        os.path.basename(segment_path(str(tmp_path), i)) for i in (1, 2, 3)
    ]
