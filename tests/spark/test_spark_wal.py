"""The write-ahead log: durable numbered segments, never-reused ids, deletion after commit, on
the local filesystem and on S3 (a local moto endpoint), and bound to one source by its owner record."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest

from amqp_jms.spark.options import parse_options
from amqp_jms.spark.wal import (
    WalOwnershipError,
    WriteAheadLog,
    delete_segments_through,
    read_segment,
    segment_exists,
    validate_wal_path,
)


def _segment_name(i: int) -> str:
    return f"seg-{i:020d}.arrow"


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
    assert sorted(os.listdir(tmp_path)) == [_segment_name(i) for i in (1, 2, 3)]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("wal", "must be an absolute path or a URI"),
        ("s3:/bucket/wal", "must be an absolute path or a URI"),  # one slash: a relative path
        ("ftp://host/wal", "has the scheme 'ftp'"),
    ],
)
def test_relative_paths_and_unknown_schemes_are_refused_when_options_are_parsed(
    path: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        parse_options({"url": "amqp://h:1", "destination": "q", "walPath": path})


def test_file_uri_is_the_local_filesystem(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/wal"
    validate_wal_path(uri)
    wal = WriteAheadLog(uri)
    assert wal.append([b"x"]) == 1
    assert (tmp_path / "wal" / _segment_name(1)).exists()
    assert segment_exists(uri, 1) and read_segment(uri, 1).to_pylist() == [b"x"]


def test_a_second_source_on_the_same_log_is_refused_naming_both(tmp_path: Path) -> None:
    first = WriteAheadLog(str(tmp_path))
    assert first.claim("aaaa", {"destination": "queue://a"}) == "aaaa"
    assert WriteAheadLog(str(tmp_path)).claim("aaaa", {"destination": "queue://a"}) == "aaaa"  # a restart
    with pytest.raises(WalOwnershipError) as info:
        WriteAheadLog(str(tmp_path)).claim("bbbb", {"destination": "queue://b"})
    text = str(info.value)
    assert "log aaaa" in text and "queue://a" in text and "log bbbb" in text and "queue://b" in text
    # an offset from before owner records adopts the recorded owner
    assert WriteAheadLog(str(tmp_path)).claim(None, {"destination": "queue://a"}) == "aaaa"


def test_a_fresh_query_takes_over_a_log_whose_owner_never_had_a_batch_recorded(tmp_path: Path) -> None:
    """The same query killed before Spark wrote its first offsets restarts with a new log id:
    it takes the log over and its accepted segments are offered; once Spark recorded a batch
    (``confirm``), nobody takes the log over."""
    first = WriteAheadLog(str(tmp_path))
    first.claim("aaaa", {"destination": "queue://a"}, fresh=True)
    first.append([b"accepted before the crash"])
    again = WriteAheadLog(str(tmp_path))
    assert again.claim("bbbb", {"destination": "queue://a"}, fresh=True) == "bbbb"
    assert again.segment_ids() == [1]
    with pytest.raises(WalOwnershipError, match="taken over"):
        first.confirm("aaaa")  # the old owner, were it still running, now stops
    again.confirm("bbbb")
    with pytest.raises(WalOwnershipError, match="log bbbb"):
        WriteAheadLog(str(tmp_path)).claim("cccc", {"destination": "queue://a"}, fresh=True)


def test_a_segment_id_collision_never_overwrites(tmp_path: Path) -> None:
    one, two = WriteAheadLog(str(tmp_path)), WriteAheadLog(str(tmp_path))
    assert one.append([b"first"]) == 1
    with pytest.raises(WalOwnershipError, match="segment 1 already exists"):
        two.append([b"second"])
    assert read_segment(str(tmp_path), 1).to_pylist() == [b"first"]


def test_a_segment_id_collision_on_s3_fails_instead_of_overwriting(s3_wal_root: str) -> None:
    """No create-if-absent on S3: the writer looks for the segment's manifest first, so a second
    writer that got past the owner check (the claim's residual window) fails, losing nothing."""
    uri = s3_wal_root.format("collide")
    one, two = WriteAheadLog(uri), WriteAheadLog(uri)
    assert one.append([b"first"]) == 1
    with pytest.raises(WalOwnershipError, match="segment 1 already exists"):
        two.append([b"second"])
    assert read_segment(uri, 1).to_pylist() == [b"first"]


def test_default_wal_path_lies_under_the_checkpoint_root() -> None:
    opts = parse_options({"url": "amqp://h:1", "destination": "queue://orders"})
    assert opts.with_default_wal_path(None).wal_path is None
    a = opts.with_default_wal_path("s3://b/chk")
    assert a.wal_path is not None and a.wal_path.startswith("s3://b/chk/jms-wal/")
    other = parse_options({"url": "amqp://h:1", "destination": "queue://other"}).with_default_wal_path(
        "s3://b/chk"
    )
    assert other.wal_path != a.wal_path  # one log per source
    given = parse_options({"url": "amqp://h:1", "destination": "q", "walPath": "/w"})
    assert given.with_default_wal_path("s3://b/chk").wal_path == "/w"


def test_s3_log_publishes_a_manifest_after_each_segment(s3_wal_root: str) -> None:
    uri = s3_wal_root.format("unit")
    validate_wal_path(uri)
    wal = WriteAheadLog(uri)
    assert wal.claim("owner1", {"destination": "queue://s3"}) == "owner1"
    assert wal.append([b"a", b"b"]) == 1
    assert wal.append([b"c"]) == 2
    assert segment_exists(uri, 1) and read_segment(uri, 2).to_pylist() == [b"c"]
    fs, root = wal.fs, wal.root
    # a segment object whose manifest was never published (a crash between the two) does not exist
    with fs.open_output_stream(f"{root}/{_segment_name(3)}") as out:
        out.write(b"ARROW1 cut short")
    assert not segment_exists(uri, 3)
    reopened = WriteAheadLog(uri)
    assert reopened.segment_ids() == [1, 2] and reopened.last_id() == 2
    assert fs.get_file_info(f"{root}/{_segment_name(3)}").type == pafs.FileType.NotFound  # swept
    assert delete_segments_through(uri, 1) == 1
    assert WriteAheadLog(uri).segment_ids() == [2]
    with pytest.raises(WalOwnershipError, match="log owner1"):
        reopened.claim("owner2", {"destination": "queue://s3"})


def test_two_fresh_queries_claiming_an_s3_log_at_once_leave_one_owner(
    s3_wal_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S3 has no create-if-absent through pyarrow.fs: both claimers read "no owner" and write
    their record; each waits ``CLAIM_SETTLE_S`` and reads back, and only the last writer passes."""
    import threading

    from amqp_jms.spark import wal as wal_module

    monkeypatch.setattr(wal_module, "CLAIM_SETTLE_S", 0.5)
    uri = s3_wal_root.format("race")
    first, second = WriteAheadLog(uri), WriteAheadLog(uri)
    monkeypatch.setattr(second, "owner", _none_once(second.owner))  # read before first's write landed
    outcome: dict[str, object] = {}

    def claim(wal: WriteAheadLog, log_id: str) -> None:
        try:
            outcome[log_id] = wal.claim(log_id, {"destination": "queue://race"}, fresh=True)
        except WalOwnershipError as exc:
            outcome[log_id] = exc

    a = threading.Thread(target=claim, args=(first, "aaaa"))
    a.start()
    time.sleep(0.2)  # within first's settle delay
    claim(second, "bbbb")
    a.join()
    assert outcome["bbbb"] == "bbbb"  # the last writer owns the log
    assert isinstance(outcome["aaaa"], WalOwnershipError) and "log bbbb" in str(outcome["aaaa"])
    assert WriteAheadLog(uri).owner()["log"] == "bbbb"  # type: ignore[index]


def _none_once(read: Any) -> Any:
    calls = []

    def owner() -> Any:
        calls.append(1)
        return None if len(calls) == 1 else read()

    return owner
