"""The streaming reader's write-ahead log: Arrow IPC segments of raw encoded messages.

Why it exists: a broker forgets a message once it is accepted, and Spark may replay a batch
after a crash. So the driver appends what it received to a segment, makes it durable, and only
then accepts the messages. Each segment holds the messages of one task; its id is the stream
offset; executors read segments by id; a segment is deleted only once Spark has committed the
batch that contains it. A crash at any point either leaves the messages un-accepted at the broker
(redelivered) or durable in a segment (replayed): never lost, at worst duplicated.

Where it lives: ``walPath`` is an absolute path or a URI, opened with ``pyarrow.fs`` on the
driver *and on every executor*, so on a cluster it must be storage every host reaches: ``s3://``,
``gs://``, ``hdfs://``, ``abfs://`` (what the installed pyarrow supports), or a shared mount.
The scheme decides the filesystem; a relative path is refused (it would resolve against each
process's own working directory).

Publication is atomic on every filesystem:

- one with an atomic rename (local, HDFS): written to ``.seg-N.arrow.tmp``, fsynced (local: the
  file and the directory), renamed to ``seg-N.arrow``;
- an object store (S3, GCS, Azure): no rename, so the segment object is written first and a small
  manifest ``seg-N.manifest`` is published after it (as Spark's own checkpoint does). Only a
  segment with its manifest exists; a data object without one was cut short and is removed when
  the log is opened.

Layout under ``walPath``::

    _owner.json                        which source the log belongs to (see :meth:`WriteAheadLog.claim`)
    seg-00000000000000000007.arrow     one Arrow IPC file, schema {amqp: binary}
    seg-00000000000000000007.manifest  (object stores only) published after the segment
    ids-00000000000000000007-100.txt   the message ids of segment 7 (100 of them), one a line,
                                       kept after the segment for the redelivery window (below)

The ``ids-`` files let a receiver know what the log already took (:mod:`.seen`): a message the
broker delivers again (after a lost accept, a failover, a broker crash) whose id is there is
accepted and not appended a second time. They are written after their segment is durable and
before its accept, without fsync (a lost one costs a duplicate, never a message), and kept for
the newest ``SEEN_WINDOW`` messages even once Spark committed their segments.

Segment ids increase by one and are never reused: the next id is one more than the largest of
the ids on disk and the offset Spark hands back (so deleting committed segments cannot make an
id come back).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

__all__ = [
    "CLAIM_SETTLE_S",
    "WAL_SCHEMA",
    "WalOwnershipError",
    "WriteAheadLog",
    "check_wal_path",
    "delete_segments_through",
    "log_status",
    "open_filesystem",
    "read_segment",
    "segment_exists",
    "segment_message_count",
    "validate_wal_path",
]

WAL_SCHEMA = pa.schema([pa.field("amqp", pa.binary(), nullable=False)])
OWNER_FILE = "_owner.json"
_NAME = re.compile(r"^seg-(\d{20})\.(arrow|manifest)$")
_IDS_NAME = re.compile(r"^ids-(\d{20})-(\d+)\.txt$")
_SCHEMES = "file:///…, s3://…, gs://…, hdfs://…, abfs://…"


#: Object stores and HDFS (no create-if-absent through pyarrow.fs): how long a claim waits
#: between writing the owner record and reading it back. Two fresh queries claiming one log at
#: once both write it; the last write wins and the other claimer, reading back, is refused. What
#: is left: a claimer that stalls longer than this between reading "no owner" and writing its
#: record (both then pass here); the first batch's :meth:`WriteAheadLog.confirm` re-reads the
#: record and stops the one that lost. Meanwhile an append fails on a segment id the other has
#: published (:meth:`WriteAheadLog.append` looks first); only two appends of one id racing
#: each other can still overwrite.
CLAIM_SETTLE_S = 1.0


class WalOwnershipError(ValueError):
    """A second query or source tried to use a write-ahead log another one owns."""


#: URI schemes ``pyarrow.fs.FileSystem.from_uri`` knows (whether the build supports each one is
#: found out when the log is opened at planning time).
KNOWN_SCHEMES = ("file", "s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss")


def check_wal_path(wal_path: str) -> str:
    """``walPath`` stripped, or ``ValueError``: a relative path or an unknown scheme (no I/O)."""
    text = wal_path.strip()
    scheme = urlsplit(text).scheme.lower() if "://" in text else ""
    if not scheme and not os.path.isabs(text):
        raise ValueError(
            f"jms data source: option 'walPath' must be an absolute path or a URI ({_SCHEMES}), "
            f"got the relative path {wal_path!r}: it would resolve against each process's own "
            "working directory, which executors do not share with the driver"
        )
    if scheme and scheme not in KNOWN_SCHEMES:
        raise ValueError(
            f"jms data source: option 'walPath' {wal_path!r} has the scheme {scheme!r}; pyarrow.fs "
            f"knows {', '.join(KNOWN_SCHEMES)}"
        )
    return text


def open_filesystem(wal_path: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem and the path in it that ``walPath`` names; ``ValueError`` when unusable."""
    text = check_wal_path(wal_path)
    if "://" not in text:
        return pafs.LocalFileSystem(), os.path.normpath(text)
    try:
        fs, path = pafs.FileSystem.from_uri(text)
    except Exception as exc:  # pyarrow's own errors: unknown scheme, missing library …
        raise ValueError(
            f"jms data source: option 'walPath' {wal_path!r} cannot be opened with pyarrow.fs "
            f"(supported here: {_SCHEMES} as built into pyarrow): {exc}"
        ) from None
    return fs, path.rstrip("/")


#: How pyarrow.fs's stores word "you may not" (S3, GCS, Azure; HTTP 403).
_REFUSALS = ("ACCESS_DENIED", "AccessDenied", "Forbidden", "HTTP status 403", "PERMISSION_DENIED")


def _refused(exc: BaseException) -> bool:
    """Whether ``exc`` is the storage refusing this process (no or wrong credentials)."""
    text = str(exc)
    return any(word in text for word in _REFUSALS)


def storage_error(wal_path: str, what: str, exc: BaseException) -> OSError:
    """An error of the log's storage, naming ``walPath`` and what was being done; one the storage
    refused says where credentials come from (an executor needs its own)."""
    hint = ""
    if _refused(exc) or isinstance(exc, PermissionError):
        hint = (
            ". The storage refused this process: give it credentials for walPath (S3: "
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile or instance role; GCS, Azure: "
            "their own chains), on the driver and, on a cluster, on every executor too (e.g. "
            "spark.executorEnv.AWS_ACCESS_KEY_ID)"
        )
    return OSError(f"jms data source: walPath {wal_path!r}: cannot {what}: {exc}{hint}")


def validate_wal_path(wal_path: str) -> None:
    """Planning-time check: the log's filesystem opens and its directory exists or can be made.

    Nothing else is touched (the driver's long-lived process may be appending to the log)."""
    fs, root = open_filesystem(wal_path)
    try:
        fs.create_dir(root, recursive=True)
        info = fs.get_file_info(root)
    except Exception as exc:
        raise ValueError(str(storage_error(wal_path, "make or list its directory", exc))) from None
    if info.type == pafs.FileType.File:
        raise ValueError(f"jms data source: walPath {wal_path!r} is a file, not a directory")


_FILESYSTEMS: dict[str, tuple[pafs.FileSystem, str]] = {}


def _cached(wal_path: str) -> tuple[pafs.FileSystem, str]:
    """Executors read many segments of one log: open its filesystem once per process."""
    got = _FILESYSTEMS.get(wal_path)
    if got is None:
        got = _FILESYSTEMS[wal_path] = open_filesystem(wal_path)
    return got


def _renames_atomically(fs: pafs.FileSystem) -> bool:
    return isinstance(fs, pafs.LocalFileSystem) or type(fs).__name__ == "HadoopFileSystem"


def _data_name(segment_id: int) -> str:
    return f"seg-{segment_id:020d}.arrow"


def _manifest_name(segment_id: int) -> str:
    return f"seg-{segment_id:020d}.manifest"


def _join(root: str, name: str) -> str:
    return f"{root}/{name}" if root else name


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_segment(wal_path: str, segment_id: int) -> pa.Array:
    """The raw encoded messages of one segment, in the order they were received."""
    fs, root = _cached(wal_path)
    path = _join(root, _data_name(segment_id))
    try:
        if isinstance(fs, pafs.LocalFileSystem):
            with pa.memory_map(path, "r") as source:
                table = pa.ipc.open_file(source).read_all()
        else:
            with fs.open_input_file(path) as source:
                table = pa.ipc.open_file(source).read_all()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"jms data source: write-ahead segment {path} is not visible on this executor: walPath "
            "must be storage every executor reaches (s3://, gs://, hdfs://, abfs://, or a shared mount)"
        ) from None
    except OSError as exc:
        raise storage_error(wal_path, f"read segment {segment_id}", exc) from None
    column = table.column(0)
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


def segment_exists(wal_path: str, segment_id: int) -> bool:
    """Whether segment ``segment_id`` is published (complete) in the log at ``wal_path``."""
    fs, root = _cached(wal_path)
    name = _data_name(segment_id) if _renames_atomically(fs) else _manifest_name(segment_id)
    return fs.get_file_info(_join(root, name)).type == pafs.FileType.File


def delete_segments_through(wal_path: str, end: int) -> int:
    """Delete the segments ``<= end`` of the log at ``wal_path`` without opening it (opening
    sweeps half-written files, which must not happen while another thread appends)."""
    fs, root = _cached(wal_path)
    return _delete(fs, root, [i for i in _published_ids(fs, root) if i <= end])


def _listing(fs: pafs.FileSystem, root: str) -> list[pafs.FileInfo]:
    return list(fs.get_file_info(pafs.FileSelector(root, allow_not_found=True)))


def _published_ids(fs: pafs.FileSystem, root: str) -> list[int]:
    return list(_status(fs, root).ids)


@dataclass(frozen=True)
class LogStatus:
    """What one listing of a log shows: its published segments and the bytes their data takes."""

    ids: tuple[int, ...]
    data_bytes: int


def _status(fs: pafs.FileSystem, root: str) -> LogStatus:
    wanted = "arrow" if _renames_atomically(fs) else "manifest"
    ids: list[int] = []
    data_bytes = 0
    for info in _listing(fs, root):
        match = _NAME.match(info.base_name)
        if not match:
            continue
        if match.group(2) == wanted:
            ids.append(int(match.group(1)))
        if match.group(2) == "arrow":
            data_bytes += info.size or 0
    ids.sort()
    return LogStatus(tuple(ids), data_bytes)


def log_status(wal_path: str) -> LogStatus:
    """The published segments of the log at ``wal_path`` and their bytes (one listing; for the
    progress figures, read beside a running receiver, so nothing is swept or opened for append)."""
    fs, root = _cached(wal_path)
    return _status(fs, root)


def segment_message_count(wal_path: str, segment_id: int) -> int | None:
    """How many messages a published segment holds (``None`` when it is gone meanwhile).

    Cheap where it matters: a local segment is memory-mapped and only its batch header read; on
    an object store the manifest says it; elsewhere (HDFS) the segment is read."""
    fs, root = _cached(wal_path)
    try:
        if not _renames_atomically(fs):
            with fs.open_input_stream(_join(root, _manifest_name(segment_id))) as handle:
                return int(json.loads(handle.read().decode("utf-8"))["messages"])
        path = _join(root, _data_name(segment_id))
        local = isinstance(fs, pafs.LocalFileSystem)
        with pa.memory_map(path, "r") if local else fs.open_input_file(path) as source:
            reader = pa.ipc.open_file(source)
            return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if _not_found(exc):
            return None
        raise


def _not_found(exc: OSError) -> bool:
    """Whether ``exc`` is a remote filesystem's "not found" (pyarrow raises a plain OSError
    there, not ``FileNotFoundError``)."""
    text = str(exc).lower()
    return "not found" in text or "no such" in text


def _delete(fs: pafs.FileSystem, root: str, ids: Iterable[int]) -> int:
    removed = 0
    for segment_id in ids:
        # the manifest first: a crash in between leaves an unpublished object, swept on open
        names = [_data_name(segment_id)]
        if not _renames_atomically(fs):
            names.insert(0, _manifest_name(segment_id))
        for name in names:
            try:
                fs.delete_file(_join(root, name))
            except FileNotFoundError:
                pass
        removed += 1
    return removed


class WriteAheadLog:
    """The log at one ``walPath``. Not thread-safe: the stream reader's receiver guards it."""

    def __init__(self, wal_path: str) -> None:
        self.wal_path = wal_path
        self.fs, self.root = open_filesystem(wal_path)
        self.atomic_rename = _renames_atomically(self.fs)
        self.local = isinstance(self.fs, pafs.LocalFileSystem)
        try:
            self.fs.create_dir(self.root, recursive=True)
        except Exception as exc:
            raise ValueError(str(storage_error(wal_path, "create its directory", exc))) from None
        published = set(self._published())
        for info in _listing(self.fs, self.root):  # writes cut short by a crash
            name = info.base_name
            match = _NAME.match(name)
            stale = name.startswith(".seg-") and name.endswith(".tmp")
            if match and match.group(2) == "arrow" and not self.atomic_rename:
                stale = int(match.group(1)) not in published
            if stale:
                self.fs.delete_file(info.path)
        ids = sorted(published)
        self._last = ids[-1] if ids else 0

    # -- ownership ---------------------------------------------------------------------------------
    def owner(self) -> dict[str, Any] | None:
        """The owner record, or ``None`` when the log has none yet."""
        path = _join(self.root, OWNER_FILE)
        try:
            with self.fs.open_input_stream(path) as handle:
                data = handle.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            if _not_found(exc):
                return None
            raise storage_error(self.wal_path, "read its owner record", exc) from None
        return dict(json.loads(data.decode("utf-8")))

    def claim(self, log_id: str | None, describe: dict[str, Any], fresh: bool = False) -> str:
        """Bind the log to one source (``log_id``, carried in its stream offsets); return the id.

        The first claim writes ``_owner.json`` (unconfirmed). A later claim with the same id (the
        same query, restarted from its checkpoint) passes; any other id is a second query or a
        second source on this ``walPath``, and is refused with an error naming both, because two
        logs in one directory count segment ids each on its own and hand each other's segments
        out (half the messages lost, the rest duplicated). One exception: a ``fresh`` query (its
        checkpoint has no offsets) takes over a log whose owner never had a batch recorded by
        Spark (never :meth:`confirm`-ed): that is the same query, killed before Spark wrote its
        first batch's offsets, and the segments it accepted are offered first. ``log_id=None``
        (an offset from before owner records) adopts the recorded owner, or claims a new id.
        """
        current = self.owner()
        if log_id is None:
            if current is not None:
                return str(current["log"])
            import uuid

            log_id = uuid.uuid4().hex
        if current is None or (fresh and current.get("log") != log_id and not current.get("confirmed", True)):
            if current is not None:
                from .._logs import SPARK

                SPARK.warning(
                    "jms data source: walPath %s: taking over log %s, whose query never had a batch "
                    "recorded (killed before its first offsets were written); its segments are offered first",
                    self.wal_path,
                    current.get("log"),
                )
            record = {
                **describe,
                "log": log_id,
                "confirmed": False,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            self._write_owner(record, replace=current is not None)
            if not self.local:
                # no create-if-absent in pyarrow.fs outside the local disk: claim, let a concurrent
                # claimer's write land, then verify (the log id is the claim's unique token)
                time.sleep(CLAIM_SETTLE_S)
            current = self.owner()  # read back: the last writer of the record wins, the others are refused
            if current is None:
                raise ValueError(f"jms data source: cannot read back the owner record of {self.wal_path!r}")
        if current.get("log") == log_id:
            return log_id
        theirs = ", ".join(f"{k}={v}" for k, v in current.items() if k not in ("log", "confirmed"))
        ours = ", ".join(f"{k}={v}" for k, v in describe.items())
        raise WalOwnershipError(
            f"jms data source: walPath {self.wal_path!r} belongs to another source "
            f"(log {current.get('log')}: "
            f"{theirs}); this source (log {log_id}: {ours}) cannot share it. Each streaming source "
            "needs its own walPath. If the owner is gone for good (its checkpoint deleted), make sure "
            "the segments left there were processed, then delete the walPath."
        )

    def confirm(self, log_id: str) -> None:
        """Spark has recorded a batch of ``log_id`` in its checkpoint (``partitions`` runs only
        after the offsets were written): from now on no fresh query may take the log over. Raises
        ``WalOwnershipError`` when another source took it over meanwhile."""
        current = self.owner()
        if current is None or current.get("log") != log_id:
            raise WalOwnershipError(
                f"jms data source: walPath {self.wal_path!r} was taken over by another source "
                f"({current}) while this one (log {log_id}) ran: give each query its own walPath"
            )
        if not current.get("confirmed", True):
            self._write_owner({**current, "confirmed": True}, replace=True)

    def _write_owner(self, record: dict[str, Any], replace: bool = False) -> None:
        data = json.dumps(record, sort_keys=True).encode("utf-8")
        path = _join(self.root, OWNER_FILE)
        if self.local:
            tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            if replace:
                os.replace(tmp, path)
            else:
                try:
                    os.link(tmp, path)  # create-if-absent: a concurrent claimer may have won
                except FileExistsError:
                    pass
                os.unlink(tmp)
            _fsync_dir(self.root)
            return
        with self.fs.open_output_stream(path) as handle:
            handle.write(data)

    # -- segments ----------------------------------------------------------------------------------
    def _published(self) -> list[int]:
        return _published_ids(self.fs, self.root)

    def segment_ids(self) -> list[int]:
        """The ids of the complete segments, ascending."""
        return self._published()

    def last_id(self) -> int:
        """The largest id ever appended by this log (or found on disk when it was opened)."""
        return self._last

    def observe(self, offset: int) -> None:
        """Make sure new ids are larger than ``offset`` (an offset Spark has already seen)."""
        self._last = max(self._last, offset)

    def append(self, messages: Sequence[bytes] | pa.Array) -> int:
        """Write one segment durably and return its id. The segment is complete or absent."""
        segment_id = self._last + 1
        array = messages if isinstance(messages, pa.Array) else pa.array(messages, type=pa.binary())
        batch = pa.record_batch([array], schema=WAL_SCHEMA)
        final = _join(self.root, _data_name(segment_id))
        if self.local:
            tmp = _join(self.root, "." + _data_name(segment_id) + ".tmp")
            with open(tmp, "wb") as handle:
                with pa.ipc.new_file(handle, WAL_SCHEMA) as writer:
                    writer.write_batch(batch)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(tmp, final)  # never replaces: an id collision is a second writer, not data to lose
            except FileExistsError:
                os.unlink(tmp)
                raise self._collision(segment_id) from None
            os.unlink(tmp)
            _fsync_dir(self.root)
        else:
            sink = pa.BufferOutputStream()  # encoded whole first: the upload is one write
            with pa.ipc.new_file(sink, WAL_SCHEMA) as writer:
                writer.write_batch(batch)
            data = sink.getvalue()
            # no create-if-absent here: look first, so a second writer that got past the owner
            # check (see CLAIM_SETTLE_S) fails instead of overwriting a published segment, unless
            # both look before either publishes
            published = final if self.atomic_rename else _join(self.root, _manifest_name(segment_id))
            if self.fs.get_file_info(published).type != pafs.FileType.NotFound:
                raise self._collision(segment_id)
            if self.atomic_rename:
                tmp = _join(self.root, "." + _data_name(segment_id) + ".tmp")
                with self.fs.open_output_stream(tmp) as out:
                    out.write(data)
                self.fs.move(tmp, final)
            else:
                with self.fs.open_output_stream(final) as out:
                    out.write(data)
                manifest = json.dumps({"messages": len(array), "bytes": data.size}).encode("utf-8")
                with self.fs.open_output_stream(_join(self.root, _manifest_name(segment_id))) as out:
                    out.write(manifest)
        self._last = segment_id
        return segment_id

    def _collision(self, segment_id: int) -> WalOwnershipError:
        return WalOwnershipError(
            f"jms data source: write-ahead segment {segment_id} already exists in {self.wal_path!r}: "
            "another source writes to this walPath"
        )

    # -- the ids of what the log took (``ids-`` files, see the module's docstring) ---------------
    def write_ids(self, segment_id: int, message_ids: Sequence[str]) -> None:
        """Record the message ids of segment ``segment_id`` (call once it is durable)."""
        data = "\n".join(message_ids).encode("utf-8")
        name = f"ids-{segment_id:020d}-{len(message_ids)}.txt"
        with self.fs.open_output_stream(_join(self.root, name)) as handle:
            handle.write(data)

    def _id_files(self) -> list[tuple[int, int, str]]:
        """(segment id, id count, path) of every ``ids-`` file, newest first."""
        found = []
        for info in _listing(self.fs, self.root):
            match = _IDS_NAME.match(info.base_name)
            if match:
                found.append((int(match.group(1)), int(match.group(2)), info.path))
        return sorted(found, reverse=True)

    def recent_ids(self, limit: int) -> list[str]:
        """The ids of the newest ``ids-`` files, about ``limit`` of them, oldest first."""
        chunks: list[list[str]] = []
        total = 0
        for _, count, path in self._id_files():
            if total >= limit:
                break
            try:
                with self.fs.open_input_stream(path) as handle:
                    text = handle.read().decode("utf-8", "replace")
            except OSError:  # deleted meanwhile, or unreadable: fewer ids, never a wrong one
                continue
            chunks.append([line for line in text.split("\n") if line])
            total += count
        return [message_id for chunk in reversed(chunks) for message_id in chunk]

    def prune_ids(self, through: int, keep: int) -> None:
        """Delete the ``ids-`` files of segments ``<= through`` beyond the newest ``keep`` ids."""
        total = 0
        for segment_id, count, path in self._id_files():
            total += count
            if segment_id <= through and total > keep:
                try:
                    self.fs.delete_file(path)
                except FileNotFoundError:
                    pass

    def ids_between(self, start: int, end: int) -> list[int]:
        """Published ids with ``start < id <= end``."""
        return [i for i in self._published() if start < i <= end]

    def delete_through(self, end: int) -> int:
        """Delete every segment with id ``<= end`` (Spark committed them); return how many."""
        return _delete(self.fs, self.root, [i for i in self._published() if i <= end])

    def delete(self, ids: Iterable[int]) -> None:
        _delete(self.fs, self.root, ids)

    def bytes_on_disk(self) -> int:
        """Bytes the segments' data takes (a progress figure: ``walBytes``)."""
        return _status(self.fs, self.root).data_bytes
