"""The streaming source's receiver (no Spark needed) with a ``failover:`` url through a
:class:`FaultProxy` dropped several times while it fills the write-ahead log: the failover
provider reconnects (the receiver does not), nothing is lost, and nothing is in the log twice:
the broker's redelivery of a message the log took (a chunk whose accept a drop voided) is
accepted and dropped (``seen.py``)."""

from __future__ import annotations

import collections
import time
from pathlib import Path

import pytest

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.message import TextMessage

pytest.importorskip("pyarrow")

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=250"


def test_receiver_with_failover_url_loses_nothing_through_drops(tmp_path: Path) -> None:
    from amqp_jms.broker import Broker
    from amqp_jms.spark._client import decode
    from amqp_jms.spark.options import parse_options
    from amqp_jms.spark.receiver import SegmentReceiver
    from amqp_jms.spark.wal import WriteAheadLog, read_segment
    from amqp_jms.testing.proxy import FaultProxy

    n, drops = 10000, 3
    with Broker(port=0) as broker, FaultProxy(broker.port) as proxy:
        with ConnectionFactory(broker.url).create_connection() as conn:
            producer = conn.create_session(False).create_producer(Queue("fo-recv"))
            for i in range(n):
                producer.send(TextMessage(f"m{i}"))
        wal_path = str(tmp_path / "wal")
        options = parse_options(
            {"url": f"failover:({proxy.url})?{FAST}", "destination": "fo-recv", "walPath": wal_path,
             "segmentMessages": "100"}
        )
        receiver = SegmentReceiver(options, WriteAheadLog(wal_path), available_now=False, rows_per_batch=None)
        copies: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        begin, dropped, deadline = 0, 0, time.monotonic() + 60
        try:
            while len(copies) < n:
                assert time.monotonic() < deadline, f"{len(copies)} of {n} after {dropped} drops"
                end = receiver.latest(begin, 1000, 0.5)
                for segment_id in range(begin + 1, end + 1):
                    for data in read_segment(wal_path, segment_id).to_pylist():
                        message = decode(data)
                        copies[message.get_text()][message.get_jms_message_id()] += 1
                begin = end
                if dropped < drops and len(copies) >= (dropped + 1) * n // (drops + 2):
                    dropped += proxy.drop() and 1  # mid-stream, with a chunk in the receiver
        finally:
            receiver.stop()
        assert dropped == drops and receiver.stats.reconnects == drops
        assert set(copies) == {f"m{i}" for i in range(n)}
        assert all(len(ids) == 1 for ids in copies.values())  # one message id per text
        twice = [text for text, ids in copies.items() if sum(ids.values()) > 1]
        assert twice == [], f"{len(twice)} messages logged twice; {receiver.stats.summary()}"
