"""``format("jms")`` through Spark Connect: a client session (``SparkSession.builder.remote``)
registers the source and reads a queue. The data source runs in the server's Python workers, so
amqp-jms must be installed where the Connect server runs; the client needs only what
``register`` imports. Here the server is the local one pyspark starts (``remote("local[2]")``),
in a child process of its own so that no classic session of another test module is in the way.

No ``pyspark-client`` extra is offered: that client replaces the ``pyspark`` package and is
released behind the ``spark`` extra's Spark version, so it cannot be checked in this venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SRC = Path(__file__).resolve().parents[2] / "src"

CLIENT = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    from amqp_jms.spark import register

    spark = SparkSession.builder.remote("local[2]").getOrCreate()
    try:
        assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
        register(spark)
        df = (spark.read.format("jms").option("url", sys.argv[1])
              .option("destination", "queue://over-connect").option("selector", "n >= 1").load())
        print(json.dumps(sorted(r.text for r in df.select("text").collect())))
    finally:
        spark.stop()
    """
)


def test_a_spark_connect_session_reads_a_queue(broker: Any) -> None:
    pytest.importorskip("pyspark.sql.connect.session")
    with ConnectionFactory(broker.url).create_context() as context:
        producer = context.create_producer()
        for n in range(3):
            producer.set_property("n", n).send(Queue("over-connect"), f"m{n}")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", CLIENT, broker.url], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["m1", "m2"]  # the selector pushed down
