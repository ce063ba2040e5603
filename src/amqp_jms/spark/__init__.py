"""amqp_jms.spark: the PySpark ``jms`` data source and column functions.

``register(spark)`` makes ``format("jms")`` (and ``format("jms-mq-dump")`` for IBM MQ queue
dumps) available to ``spark.read``, ``spark.readStream``,
``df.write`` and ``df.writeStream``. Importing this package sets ``PYSPARK_PYTHON`` to the running
interpreter when it is unset: Spark's Python workers otherwise start the system ``python3``,
which lacks pyarrow and this package. See ``docs/spark.md``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .._extras import missing_for, needs_extras

if _missing := missing_for("spark"):  # before pyarrow's own "No module named ..."
    raise ModuleNotFoundError(needs_extras("amqp_jms.spark", ("spark",), _missing), name=_missing[0])

from .options import JmsOptions, parse_options
from .schema import COLUMNS, row_schema
from .source import JmsDataSource

__all__ = ["COLUMNS", "JmsDataSource", "JmsOptions", "parse_options", "register", "row_schema"]

if not os.environ.get("PYSPARK_PYTHON"):
    os.environ["PYSPARK_PYTHON"] = sys.executable


def register(spark: Any) -> None:
    """Register the ``jms`` and ``jms-mq-dump`` formats with ``spark`` (a ``SparkSession``).

    When the session names a checkpoint root (``spark.sql.streaming.checkpointLocation``),
    streaming reads without ``walPath`` keep their write-ahead log under it (docs/spark.md)."""
    from .mq_source import MQDumpDataSource

    conf = getattr(spark, "conf", None)  # (a registry-only stand-in has none)
    root = conf.get("spark.sql.streaming.checkpointLocation", None) if conf is not None else None
    master = conf.get("spark.master", None) if conf is not None else None
    source: type[JmsDataSource] = JmsDataSource
    if root:
        attributes = {"checkpoint_root": str(root), "master": str(master) if master else None}
        source = type("JmsDataSource", (JmsDataSource,), attributes)
    spark.dataSource.register(source)
    spark.dataSource.register(MQDumpDataSource)
