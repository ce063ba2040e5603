"""The ``jms`` data source: a factory that parses options and hands out readers and writers.

Following PySpark's contract, the source object only stores and validates options (it is
constructed in several processes and pickled); readers and writers open connections inside their
methods.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, DataSourceWriter

from .options import JmsOptions, parse_options

__all__ = ["JmsDataSource"]


class JmsDataSource(DataSource):
    """``format("jms")``: batch and streaming reads and writes of JMS messages over AMQP 1.0."""

    #: The checkpoint root (``spark.sql.streaming.checkpointLocation``) of the session that
    #: registered the source, for the default ``walPath``; set on a subclass by ``register``.
    checkpoint_root: str | None = None
    #: That session's master (``spark.master``), to refuse a default ``walPath`` on the
    #: driver's disk when the executors run elsewhere; set by ``register``.
    master: str | None = None

    @classmethod
    def name(cls) -> str:
        return "jms"

    def _options(self) -> JmsOptions:
        return parse_options(self.options)

    def schema(self) -> Any:
        from .schema import row_schema

        opts = self._options()
        return row_schema(opts.body_as, opts.include_amqp, opts.typed_properties_as)

    def reader(self, schema: Any) -> DataSourceReader:
        from .reader import JmsBatchReader

        opts = self._options()
        opts.require_destination()
        if opts.mode == "consume" or opts.subscription:
            raise ValueError(
                "jms data source: a consuming batch read (mode=consume, or a subscription) is "
                "refused: Spark gives a batch "
                "read no commit hook, so it would accept messages before anything was written (and "
                "every action would drain again). Consume with the streaming form, which accepts only "
                "what its write-ahead log holds: spark.readStream.format('jms')...load()"
                ".writeStream...trigger(availableNow=True).start() reads what is there and stops"
            )
        check_connection(opts)
        return JmsBatchReader(opts)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        """The options are checked here, without I/O: Spark calls this again in a planning
        worker for every batch it plans (to pickle ``read``), also while the broker is away.
        The log and the broker are checked once, by the driver's reader, before it takes
        anything (:meth:`.stream.JmsStreamReader.check_once`)."""
        from .stream import JmsStreamReader, RefusedStreamReader
        from .wal import check_wal_path

        try:
            cls = type(self)
            opts = self._options()
            if not opts.wal_path:
                refuse_driver_local_default(cls.checkpoint_root, cls.master)
            opts = opts.with_default_wal_path(cls.checkpoint_root)
            opts.require_destination()
            if opts.partitioning is not None:
                raise ValueError(
                    "jms data source: partitionColumn/lowerBound/upperBound/numPartitions split a "
                    "browse (spark.read); a stream is split by its write-ahead segments (and "
                    "numReceivers)"
                )
            check_wal_path(opts.require_wal_path())
        except ValueError as exc:
            # PySpark's stream runner calls ``reader.stop()`` in a ``finally`` even when
            # ``streamReader`` raised, burying the error under an UnboundLocalError: a reader
            # that fails its first call reports this error alone, as the query's first act.
            return RefusedStreamReader(str(exc))
        if opts.num_receivers > 1:
            from .stream_multi import MultiReceiverStreamReader

            return MultiReceiverStreamReader(opts)
        return JmsStreamReader(opts)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        from .writer import JmsWriter

        _check_write_schema(schema)
        return JmsWriter(self._options())

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        from .writer import JmsStreamWriter

        _check_write_schema(schema)
        return JmsStreamWriter(self._options())


def check_connection(opts: JmsOptions) -> None:
    """Planning-time check that the broker is there and lets us in, so an unreachable broker or
    bad credentials fail the query now, not in a task or at the first trigger. (The selector is
    parsed when the options are.)"""
    from ._client import open_connection

    try:
        connection = open_connection(opts, probe=True)
    except Exception as exc:
        # the message is made first: a traceback shows the raising line's source, and an
        # f-string there reads as if it had not been filled in
        message = f"jms data source: cannot connect to {_redacted(opts.url)}: {exc}"
        raise ValueError(message) from None
    connection.close()


def is_local_master(master: str | None) -> bool:
    """Whether ``master`` runs the executors in the driver's process or on its host
    (``local``, ``local[4]``, ``local-cluster[…]``); ``None`` (unknown) counts as local."""
    return master is None or master.strip().lower().startswith("local")


def refuse_driver_local_default(checkpoint_root: str | None, master: str | None) -> None:
    """A stream without ``walPath`` on a cluster whose default log would be on the driver's own
    disk: ``ValueError`` naming ``walPath``, before the query takes anything off the queue (the
    receiver would accept messages into a log the executors cannot read, and only a local-mode
    rerun on that host could get them back)."""
    if not checkpoint_root or is_local_master(master):
        return
    scheme = checkpoint_root.split(":", 1)[0].lower() if ":" in checkpoint_root else ""
    if scheme not in ("", "file"):
        return  # hdfs://, s3a:// … : storage the executors reach (the checkpoint lives there)
    raise ValueError(
        f"jms data source: option 'walPath' is required on a cluster (master {master}): the default "
        f"log location under the session's checkpoint root {checkpoint_root!r} is on the driver's "
        "local disk, which the executors cannot read. Set walPath to storage every executor "
        "reaches: s3://…, gs://…, hdfs://…, abfs://…, or a filesystem mounted at the same path "
        "on every host (nothing was taken off the queue)"
    )


def _redacted(url: str) -> str:
    from urllib.parse import urlsplit

    from .failover import is_failover_url

    if is_failover_url(url):
        from ..provider.failover.uri import parse_failover_url

        servers = parse_failover_url(url).servers
        return "failover:(" + ",".join(f"{s.scheme}://{s.host}:{s.port}" for s in servers) + ")"
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port}"


def _check_write_schema(schema: Any) -> None:
    """Reject a DataFrame none of whose columns a writer understands (a likely mistake)."""
    from .schema import WRITE_COLUMNS

    names = set(getattr(schema, "names", []) or [])
    if names and not names & WRITE_COLUMNS:
        raise ValueError(
            "jms data source: the DataFrame has none of the writable columns "
            + ", ".join(sorted(WRITE_COLUMNS))
            + f"; it has {', '.join(sorted(names))}"
        )
