"""The receiver (no Spark needed) drops a redelivery of what its log already holds: the message
is accepted again and not appended a second time, within one run and across runs (the log's
``ids-`` files). A first delivery is never dropped, whatever its id."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.message import TextMessage

pytest.importorskip("pyarrow")


def _receive_all(options: dict[str, str], wal_path: str) -> tuple[list[tuple[str, str]], int]:
    """Run an availableNow receiver to the end: (message_id, text) of every message its log took,
    and how many redeliveries it dropped."""
    from amqp_jms.spark._client import decode
    from amqp_jms.spark.options import parse_options
    from amqp_jms.spark.receiver import SegmentReceiver
    from amqp_jms.spark.wal import WriteAheadLog, read_segment

    wal = WriteAheadLog(wal_path)
    first = wal.last_id()
    receiver = SegmentReceiver(parse_options(options), wal, available_now=True, rows_per_batch=None)
    try:
        assert receiver.wait_drained(30)
        end = receiver.latest(first, None, 0.1)
    finally:
        receiver.stop()
    got = []
    for segment_id in range(first + 1, end + 1):
        for data in read_segment(wal_path, segment_id).to_pylist():
            message = decode(data)
            got.append((message.get_jms_message_id(), message.get_text()))
    return got, receiver.stats.duplicates


def test_a_redelivery_of_what_the_log_holds_is_accepted_not_appended_again(tmp_path: Path) -> None:
    """A previous run logged m0..m99 but its accepts never reached the broker (as when a broker
    killed with -9 had not stored them): the broker delivers them again, flagged redelivered,
    and the next run takes only m100..m199."""
    from amqp_jms.broker import Broker
    from amqp_jms.client.acknowledgement import CLIENT_ACKNOWLEDGE
    from amqp_jms.spark._client import encode
    from amqp_jms.spark.wal import WriteAheadLog

    wal_path = str(tmp_path / "wal")
    with Broker(port=0) as broker:
        with ConnectionFactory(broker.url).create_connection() as conn:
            producer = conn.create_session(False).create_producer(Queue("redelivered"))
            for i in range(200):
                producer.send(TextMessage(f"m{i}"))
        with ConnectionFactory(broker.url).create_connection() as conn:  # the previous run
            conn.start()
            consumer = conn.create_session(False, CLIENT_ACKNOWLEDGE).create_consumer(Queue("redelivered"))
            logged = [consumer.receive(5000) for _ in range(100)]
            wal = WriteAheadLog(wal_path)
            segment_id = wal.append([encode(m) for m in logged])
            wal.write_ids(segment_id, [m.get_jms_message_id() for m in logged])
            wal.delete_through(segment_id)  # Spark committed it: only the ids are left
        # ... and its connection closed without accepting: the broker delivers them again
        options = {"url": broker.url, "destination": "redelivered", "walPath": wal_path}
        got, dropped = _receive_all(options, wal_path)
        assert sorted(text for _, text in got) == sorted(f"m{i}" for i in range(100, 200))
        assert dropped == 100
        # accepted: nothing comes back
        got, dropped = _receive_all(options, wal_path)
        assert (got, dropped) == ([], 0)


def test_a_first_delivery_is_never_dropped_even_with_an_id_the_log_holds(tmp_path: Path) -> None:
    """A producer that sends a new message under an id already taken loses nothing: only a
    redelivery is looked up."""
    from amqp_jms.broker import Broker
    from amqp_jms.spark.wal import WriteAheadLog

    wal_path = str(tmp_path / "wal")
    with Broker(port=0) as broker:
        with ConnectionFactory(broker.url).create_connection() as conn:
            producer = conn.create_session(False).create_producer(Queue("reused"))
            producer.set_message_id_prefix("ID:fixed")
            producer.send(TextMessage("first"))
        options = {"url": broker.url, "destination": "reused", "walPath": wal_path}
        got, _ = _receive_all(options, wal_path)
        assert [text for _, text in got] == ["first"]
        with ConnectionFactory(broker.url).create_connection() as conn:
            producer = conn.create_session(False).create_producer(Queue("reused"))
            producer.set_message_id_prefix("ID:fixed")  # the same id again, for another message
            producer.send(TextMessage("second"))
        got, dropped = _receive_all(options, wal_path)
        assert [text for _, text in got] == ["second"] and dropped == 0
    assert WriteAheadLog(wal_path).recent_ids(10) == [got[0][0], got[0][0]]


def test_ids_files_are_kept_for_the_window_and_read_back_newest_last(tmp_path: Path) -> None:
    from amqp_jms.spark.seen import SeenIds
    from amqp_jms.spark.wal import WriteAheadLog

    wal = WriteAheadLog(str(tmp_path))
    for n in range(1, 6):
        segment_id = wal.append([b"x"] * 3)
        wal.write_ids(segment_id, [f"ID:{n}:{i}" for i in range(3)])
    assert wal.recent_ids(4)[-3:] == ["ID:5:0", "ID:5:1", "ID:5:2"]
    assert len(wal.recent_ids(4)) == 6  # whole files: the newest two
    wal.delete_through(5)
    wal.prune_ids(3, keep=6)  # segments 1..3 committed; the newest 6 ids kept whatever
    assert wal.recent_ids(100) == [f"ID:{n}:{i}" for n in (4, 5) for i in range(3)]
    seen = SeenIds(4, wal.recent_ids(100))
    assert "ID:5:2" in seen and "ID:4:1" not in seen and len(seen) == 4
