"""A streaming query run as its own driver process by test_spark_crash.py (not a test module).

usage: crash_driver.py URL QUEUE WORK_DIR (crash|finish)

``crash``: micro-batches of at most 10 messages every 200 ms until the crash point set in the
environment stops the process (the test then SIGKILLs its process group). ``finish``: restart
from the same checkpoint and write-ahead log with ``availableNow`` and exit when done.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    url, queue, work, mode = sys.argv[1:5]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from amqp_jms.spark import register

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("amqp-jms-crash")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    df = (
        spark.readStream.format("jms")
        .option("url", url)
        .option("destination", f"queue://{queue}")
        .option("walPath", os.path.join(work, "wal"))
        .option("maxMessagesPerTrigger", 10)
        .option("segmentMessages", 5)
        .option("pollMs", 100)
        # paced by the batches (the receiver would otherwise take all 60 before batch 0), so
        # that a crash point armed by the first commit is still passed after it
        .option("maxBufferedMessages", 10)
        .load()
    )
    writer = (
        df.select("message_id", "text")
        .writeStream.format("parquet")
        .option("path", os.path.join(work, "out"))
        .option("checkpointLocation", os.path.join(work, "chk"))
    )
    trigger = {"processingTime": "200 milliseconds"} if mode == "crash" else {"availableNow": True}
    for attempt in range(3):
        # retried only when Spark times out starting a Python worker on a loaded machine
        query = writer.trigger(**trigger).start()
        try:
            query.awaitTermination(600)
        except Exception as exc:
            if "connect back" in str(exc) and attempt < 2:
                continue
            raise SystemExit(f"query failed: {exc}") from None
        break
    spark.stop()


if __name__ == "__main__":
    main()
