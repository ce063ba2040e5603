"""A write-ahead log on S3 (moto's server on loopback) whose options travel in the URI's query,
as docs/spark.md recommends, with every receiver count; and a process without S3 credentials
told which walPath refused it and where credentials come from."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest


@pytest.mark.parametrize("count", [1, 2, 3])
def test_each_receivers_log_keeps_the_uri_query(s3_wal_root: str, count: int) -> None:
    from amqp_jms.spark.receiver_process import receiver_log_path
    from amqp_jms.spark.wal import WriteAheadLog, read_segment

    root = s3_wal_root.format(f"receivers-{count}")
    for i in range(count):
        path = receiver_log_path(root, i)
        assert urlsplit(path).query == urlsplit(root).query
        assert urlsplit(path).path == urlsplit(root).path + f"/receiver-{i}"
        wal = WriteAheadLog(path)
        segment_id = wal.append([f"r{i}".encode()])
        assert read_segment(path, segment_id).to_pylist() == [f"r{i}".encode()]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("count", [2, 3])
def test_receivers_stream_through_an_s3_log_with_its_options_in_the_query(
    spark: Any, s3_wal_root: str, tmp_path: Any, send_texts: Any, check_each_once: Any, count: int
) -> None:
    """Rows in = rows out, each message once (issue 34: the first batch failed with "A region
    must be set" when ``receiver-<i>`` was appended after the query)."""
    from amqp_jms.broker import Broker

    sent = 1000
    queue = f"s3_receivers_{count}"
    with Broker(port=0) as broker:
        send_texts(broker.url, queue, sent)
        query = (
            spark.readStream.format("jms")
            .option("url", broker.url)
            .option("destination", f"queue://{queue}")
            .option("walPath", s3_wal_root.format(queue))
            .option("numReceivers", count)
            .option("segmentMessages", 250)
            .load()
            .select("message_id", "text")
            .writeStream.format("memory")
            .queryName(queue)
            .option("checkpointLocation", str(tmp_path / "chk"))
            .trigger(availableNow=True)
            .start()
        )
        try:
            assert query.awaitTermination(180)
            assert query.exception() is None, query.exception()
        finally:
            query.stop()
        rows = spark.sql(f"select message_id, text from {queue}").collect()
        assert len(rows) == sent
        check_each_once(rows, sent)


def test_a_process_without_s3_credentials_is_told_which_wal_path_refused_it(
    s3_wal_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The storage answers ACCESS_DENIED to a process without credentials (moto refuses the
    unsigned write of a key that exists): the error names the walPath, what was being done, and
    where credentials come from (on a cluster: every executor too), not a bare ACCESS_DENIED."""
    from amqp_jms.spark.wal import WriteAheadLog

    path = s3_wal_root.format("no-credentials")
    WriteAheadLog(path)  # the driver, with credentials
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ValueError) as caught:
        WriteAheadLog(path)
    text = str(caught.value)
    assert "ACCESS_DENIED" in text and f"walPath {path!r}: cannot create its directory" in text
    assert "credentials for walPath" in text and "spark.executorEnv" in text
