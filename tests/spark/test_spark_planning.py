"""What the ``jms`` source refuses or reports when a query is planned, before anything is taken
off the queue: a default ``walPath`` on the driver's disk under a cluster master, and an
unreachable broker (whose error's traceback shows no unfilled f-string). Also: a full
write-ahead segment holds exactly ``segmentMessages``."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.message import TextMessage

pytest.importorskip("pyspark")


def _source(root: str | None, master: str | None) -> type:
    from amqp_jms.spark.source import JmsDataSource

    return type("JmsDataSource", (JmsDataSource,), {"checkpoint_root": root, "master": master})


def _browse_count(url: str, queue: str) -> int:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        return sum(1 for _ in conn.create_session(False).create_browser(Queue(queue)).get_enumeration())


@pytest.mark.parametrize("root_form", ["{}", "file://{}"])
def test_no_wal_path_on_a_cluster_with_the_default_on_the_driver_disk_is_refused_naming_it(
    tmp_path: Path, root_form: str
) -> None:
    from amqp_jms.broker import Broker
    from amqp_jms.spark.stream import RefusedStreamReader

    root = root_form.format(tmp_path / "root")
    with Broker(port=0) as broker:
        with ConnectionFactory(broker.url).create_connection() as conn:
            producer = conn.create_session(False).create_producer(Queue("stranded"))
            for i in range(10):
                producer.send(TextMessage(f"m{i}"))
        options = {"url": broker.url, "destination": "queue://stranded"}
        reader = _source(root, "spark://10.0.0.1:7077")(options).streamReader(None)
        assert isinstance(reader, RefusedStreamReader)
        with pytest.raises(ValueError) as caught:
            reader.initialOffset()
        text = str(caught.value)
        assert "option 'walPath' is required on a cluster (master spark://10.0.0.1:7077)" in text
        assert root in text and "nothing was taken off the queue" in text
        assert _browse_count(broker.url, "stranded") == 10
        assert not (tmp_path / "root").exists()  # no log was made either


@pytest.mark.parametrize(
    ("root", "master", "wal_path"),
    [
        ("/chk", "local[2]", None),  # executors on the driver's host
        ("/chk", "local-cluster[2,1,1024]", None),
        ("hdfs://nn:8020/chk", "yarn", None),  # the default is on storage the executors reach
        ("/chk", "spark://10.0.0.1:7077", "s3://bucket/wal"),  # walPath given
        ("/chk", "spark://10.0.0.1:7077", "/shared/mount/wal"),  # given: a shared mount is the user's call
    ],
)
def test_a_default_the_executors_reach_or_a_given_wal_path_is_not_refused(
    root: str, master: str, wal_path: str | None
) -> None:
    from amqp_jms.spark.stream import JmsStreamReader

    options = {"url": "amqp://127.0.0.1:1", "destination": "queue://q"}
    if wal_path:
        options["walPath"] = wal_path
    reader = _source(root, master)(options).streamReader(None)
    assert isinstance(reader, JmsStreamReader)  # (the broker is checked by the driver's reader)


def test_an_unreachable_broker_error_shows_no_unfilled_f_string_in_its_traceback() -> None:
    """The traceback's source line of the raise is what a user reads first: it once showed
    ``f"… cannot connect to {_redacted(opts.url)}: {exc}"`` as if it had not been filled in."""
    from amqp_jms.spark.options import parse_options
    from amqp_jms.spark.source import check_connection

    opts = parse_options({"url": "amqp://user:secret@127.0.0.1:1", "destination": "queue://q"})
    with pytest.raises(ValueError) as caught:
        check_connection(opts)
    shown = "".join(traceback.format_exception(caught.value))
    assert "cannot connect to amqp://127.0.0.1:1" in shown
    assert "{_redacted" not in shown and "{exc}" not in shown and "secret" not in shown


def test_a_full_segment_holds_exactly_segment_messages(tmp_path: Path) -> None:
    """``segmentMessages=2000`` made segments of 1,000 (every chunk was halved); now a full
    chunk is one segment and only the tail a trigger or the end cut short may be split."""
    from amqp_jms.broker import Broker
    from amqp_jms.spark.options import parse_options
    from amqp_jms.spark.receiver import SegmentReceiver
    from amqp_jms.spark.wal import WriteAheadLog, segment_message_count

    wal_path = str(tmp_path / "wal")
    with Broker(port=0) as broker:
        with ConnectionFactory(broker.url).create_connection() as conn:
            session = conn.create_session(True)
            producer = session.create_producer(Queue("sized"))
            for i in range(4500):
                producer.send(TextMessage(f"m{i}"))
            session.commit()
        options = parse_options(
            {"url": broker.url, "destination": "sized", "walPath": wal_path, "segmentMessages": "2000"}
        )
        receiver = SegmentReceiver(options, WriteAheadLog(wal_path), available_now=True, rows_per_batch=None)
        try:
            assert receiver.wait_drained(60)
        finally:
            receiver.stop()
    wal = WriteAheadLog(wal_path)
    sizes = [segment_message_count(wal_path, i) for i in wal.segment_ids()]
    assert sizes == [2000, 2000, 500], sizes
