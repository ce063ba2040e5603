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

    @classmethod
    def name(cls) -> str:
        return "jms"

    def _options(self) -> JmsOptions:
        return parse_options(self.options)

    def schema(self) -> Any:
        from .schema import row_schema

        opts = self._options()
        return row_schema(opts.body_as, opts.include_amqp)

    def reader(self, schema: Any) -> DataSourceReader:
        from .reader import JmsBatchReader

        opts = self._options()
        opts.require_destination()
        return JmsBatchReader(opts)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        from .stream import JmsStreamReader

        opts = self._options()
        opts.require_destination()
        opts.require_wal_path()
        return JmsStreamReader(opts)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        from .writer import JmsWriter

        _check_write_schema(schema)
        return JmsWriter(self._options())

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        from .writer import JmsStreamWriter

        _check_write_schema(schema)
        return JmsStreamWriter(self._options())


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
