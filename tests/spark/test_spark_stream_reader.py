"""The stream reader's offset protocol, driven directly (no Spark) against the embedded broker.

Spark calls initialOffset/latestOffset/partitions/commit on the driver and read() on executors;
calling them in the same order here checks the WAL design quickly: accept only after append,
segments as offsets, replay of planned-but-uncommitted batches, deletion after commit.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.exceptions import IllegalStateException
from amqp_jms.message import TextMessage
from amqp_jms.spark.options import parse_options
from amqp_jms.spark.stream import JmsStreamReader, SegmentPartition


@pytest.fixture(scope="module")
def broker_url() -> Iterator[str]:
    from amqp_jms.broker import Broker

    with Broker(port=0) as broker:
        yield broker.url


def _send(url: str, queue: str, count: int, start: int = 0) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        producer = conn.create_session(False).create_producer(Queue(queue))
        for i in range(start, start + count):
            producer.send(TextMessage(f"m{i}"))


def _remaining(url: str, queue: str) -> list[str]:
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(False).create_consumer(Queue(queue))
        while (message := consumer.receive(300)) is not None:
            out.append(message.get_text())
    return out


def _reader(url: str, queue: str, wal: Path, **extra: str) -> JmsStreamReader:
    options = {"url": url, "destination": f"queue://{queue}", "walPath": str(wal), "pollMs": "200", **extra}
    reader = JmsStreamReader(parse_options(options))
    return pickle.loads(pickle.dumps(reader))  # Spark pickles it; nothing may connect before use


def _texts(reader: JmsStreamReader, start: dict[str, Any], end: dict[str, Any]) -> list[str]:
    texts: list[str] = []
    for partition in reader.partitions(start, end):
        for batch in reader.read(pickle.loads(pickle.dumps(partition))):
            texts.extend(batch.column("text").to_pylist())
    return texts


def _segments(wal: Path) -> list[int]:
    return sorted(int(p.name[4:24]) for p in wal.iterdir() if p.name.startswith("seg-"))


def _run_batches(
    reader: JmsStreamReader, start: dict[str, Any], limit: Any, want: int, wal: Path | None = None
) -> tuple[list[list[str]], dict[str, Any]]:
    """Plan, read and commit batches as Spark does until ``want`` messages were read."""
    batches: list[list[str]] = []
    for _ in range(200):
        if sum(map(len, batches)) >= want:
            break
        end = reader.latestOffset(start, limit)
        if wal is not None:  # planning batch k+1 deleted the segments of batch k
            assert all(i > start["segment"] for i in _segments(wal))
        if end == start:
            continue
        texts = _texts(reader, start, end)
        assert _texts(reader, start, end) == texts  # a replay reads the same segments
        batches.append(texts)
        reader.commit(end)
        start = end
    return batches, start


def test_batches_respect_the_limit_and_segments_go_after_commit(broker_url: str, tmp_path: Path) -> None:
    _send(broker_url, "r1", 25)
    reader = _reader(broker_url, "r1", tmp_path, segmentMessages="4", maxMessagesPerTrigger="10")
    assert reader.getDefaultReadLimit() == ReadMaxRows(10)
    batches, end = _run_batches(reader, reader.initialOffset(), ReadMaxRows(10), 25, tmp_path)
    assert all(0 < len(b) <= 10 for b in batches)
    assert [t for b in batches for t in b] == [f"m{i}" for i in range(25)]  # in order, once each
    assert _segments(tmp_path) == []  # every committed segment is gone
    assert reader.latestOffset(end, ReadMaxRows(10)) == end  # nothing new: same offset
    reader.stop()
    assert _remaining(broker_url, "r1") == []  # all accepted


def test_batches_fill_up_to_the_limit_when_the_receiver_ran_ahead(broker_url: str, tmp_path: Path) -> None:
    _send(broker_url, "r1b", 30)
    reader = _reader(broker_url, "r1b", tmp_path, segmentMessages="4", maxMessagesPerTrigger="10")
    start = reader.latestOffset(reader.initialOffset(), ReadMaxRows(10))  # starts the receiver
    first = _texts(reader, reader.initialOffset(), start)
    time.sleep(1.5)  # it receives ahead meanwhile, cutting segments where a full batch ends
    batches, _ = _run_batches(reader, start, ReadMaxRows(10), 30 - len(first))
    assert all(len(b) <= 10 for b in batches)
    assert 10 in [len(b) for b in batches]  # not only the segment size (4) or less
    assert first + [t for b in batches for t in b] == [f"m{i}" for i in range(30)]
    reader.stop()


def test_receiver_works_ahead_while_a_batch_runs_but_only_so_far(broker_url: str, tmp_path: Path) -> None:
    _send(broker_url, "r5", 50)
    reader = _reader(broker_url, "r5", tmp_path, segmentMessages="5", maxBufferedMessages="10")
    end = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    planned = len(_texts(reader, {"segment": 0}, end))
    time.sleep(1.5)  # "the executors work": no latestOffset call
    ahead = [i for i in _segments(tmp_path) if i > end["segment"]]
    assert ahead, "nothing was received while the batch ran"
    ahead_texts = _texts(reader, end, {"segment": ahead[-1]})
    assert len(ahead_texts) <= 10  # maxBufferedMessages: the rest waits at the broker
    assert reader._receiver is not None
    assert reader._receiver.stats.messages <= planned + 10  # nothing more was even accepted
    after, _ = _run_batches(reader, end, ReadAllAvailable(), 50 - planned)
    assert sum(map(len, after)) == 50 - planned
    reader.stop()


def test_restart_offers_segments_written_before_the_crash(broker_url: str, tmp_path: Path) -> None:
    _send(broker_url, "r2", 6)
    first = _reader(broker_url, "r2", tmp_path)
    end = first.latestOffset(first.initialOffset(), ReadAllAvailable())
    assert end != {"segment": 0}
    time.sleep(0.5)  # the receiver may have appended more: all of it comes back below
    first.stop()  # the process dies here: Spark never recorded ``end``
    _send(broker_url, "r2", 3, start=6)
    second = _reader(broker_url, "r2", tmp_path)
    pending = second.latestOffset({"segment": 0}, ReadMaxRows(1))
    assert pending["segment"] >= end["segment"]  # the accepted messages come back first, whatever the limit
    texts = _texts(second, {"segment": 0}, pending)
    assert len(texts) >= 1 and texts == [f"m{i}" for i in range(len(texts))]
    batches, _ = _run_batches(second, pending, ReadAllAvailable(), 9 - len(texts))
    assert texts + [t for b in batches for t in b] == [f"m{i}" for i in range(9)]
    second.stop()


def test_available_now_stops_at_the_first_empty_poll_without_a_fixed_wait(
    broker_url: str, tmp_path: Path
) -> None:
    _send(broker_url, "r3", 5)
    reader = _reader(broker_url, "r3", tmp_path, maxMessagesPerTrigger="3", pollMs="5000")
    reader.prepareForTriggerAvailableNow()
    limit = reader.getDefaultReadLimit()
    assert limit == ReadMaxRows(3)
    batches, end = _run_batches(reader, reader.initialOffset(), limit, 5)
    assert all(0 < len(b) <= 3 for b in batches)  # a trigger gets what is durable, up to the limit
    assert [t for b in batches for t in b] == [f"m{i}" for i in range(5)]
    # the receiver may still be looking for more right after the last batch: once it has found
    # the destination empty, whatever arrives later belongs to the next run
    assert reader._receiver is not None and reader._receiver.wait_drained(10.0)
    _send(broker_url, "r3", 2, start=5)  # arrives after the destination was found empty
    began = time.monotonic()
    assert reader.latestOffset(end, limit) == end  # not read by this run
    assert time.monotonic() - began < 3.0  # decided by a drain, not by waiting pollMs (5 s)
    reader.stop()
    assert _remaining(broker_url, "r3") == ["m5", "m6"]


def test_available_now_rides_a_short_pause_mid_stream_with_one_drain(broker_url: str, tmp_path: Path) -> None:
    """A pause in the flow shorter than the receiver's quiet spell (a broker busy with its store,
    or sharing the cores with Spark) is not "the destination is empty": the messages after it are
    in the same availableNow run, and the receiver asks for one drain, at the end."""
    import threading

    _send(broker_url, "r3p", 5)
    reader = _reader(broker_url, "r3p", tmp_path)
    reader.prepareForTriggerAvailableNow()
    start = reader.initialOffset()
    ends: list[dict[str, Any]] = []
    planner = threading.Thread(target=lambda: ends.append(reader.latestOffset(start, ReadAllAvailable())))
    with ConnectionFactory(broker_url).create_connection() as conn:
        producer = conn.create_session(False).create_producer(Queue("r3p"))
        planner.start()
        deadline = time.monotonic() + 20
        while (reader._receiver is None or reader._receiver._chunk_len < 5) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.15)  # a pause: three of the receiver's 50 ms ticks
        for i in range(5, 10):
            producer.send(TextMessage(f"m{i}"))
        planner.join(20)
    assert ends and _texts(reader, start, ends[0]) == [f"m{i}" for i in range(10)]
    assert reader._receiver is not None and reader._receiver.wait_drained(10.0)
    assert reader._receiver.stats.drains == 1
    reader.stop()


def test_a_url_asking_for_presettled_consumers_cannot_make_the_receiver_lose(
    broker_url: str, tmp_path: Path
) -> None:
    """``jms.presettlePolicy.presettleAll=true`` on the url: the receiver's consumer is still not
    presettled, so what it holds un-accepted (here, a chunk not yet in the log) goes back to the
    broker when it stops; a presettled consumer would have taken it from the broker at once."""
    from amqp_jms.spark.receiver import SegmentReceiver
    from amqp_jms.spark.wal import WriteAheadLog

    _send(broker_url, "r3s", 5)
    url = broker_url + "?jms.presettlePolicy.presettleAll=true"
    options = parse_options(
        {"url": url, "destination": "queue://r3s", "walPath": str(tmp_path), "segmentMessages": "1000"}
    )
    receiver = SegmentReceiver(options, WriteAheadLog(str(tmp_path)), False, None)
    deadline = time.monotonic() + 20
    while receiver._chunk_len < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert receiver._chunk_len == 5  # received, in memory, not in the log
    receiver.stop()
    assert _remaining(broker_url, "r3s") == [f"m{i}" for i in range(5)]


def test_available_now_on_an_empty_queue_ends_at_once(broker_url: str, tmp_path: Path) -> None:
    reader = _reader(broker_url, "r3b", tmp_path, pollMs="5000")
    reader.prepareForTriggerAvailableNow()
    began = time.monotonic()
    assert reader.latestOffset(reader.initialOffset(), ReadAllAvailable())["segment"] == 0
    assert time.monotonic() - began < 3.0  # connect + one drain, not pollMs (5 s) of polling
    reader.stop()


_EXIT_WITHOUT_STOP = """
import sys, time
from pyspark.sql.streaming.datasource import ReadAllAvailable
from amqp_jms.spark.options import parse_options
from amqp_jms.spark.stream import JmsStreamReader, SegmentPartition
url, queue, wal = sys.argv[1:4]
reader = JmsStreamReader(parse_options({"url": url, "destination": "queue://" + queue, "walPath": wal,
                                        "segmentMessages": "5", "maxBufferedMessages": "10"}))
print(reader.latestOffset({"segment": 0}, ReadAllAvailable())["segment"], flush=True)
time.sleep(1)  # the receiver works ahead, then the process ends without stop()
"""


def test_the_receiver_never_keeps_the_driver_alive_and_loses_nothing(broker_url: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    _send(broker_url, "r6", 40)
    wal = tmp_path / "wal"
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WITHOUT_STOP, broker_url, "r6", str(wal)],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    on_disk: list[str] = []
    reader = _reader(broker_url, "r6-none", wal)
    for segment_id in _segments(wal):
        on_disk.extend(_texts(reader, {"segment": segment_id - 1}, {"segment": segment_id}))
    assert 0 < len(on_disk) <= 15  # planned (one segment) plus at most maxBufferedMessages
    left = _remaining(broker_url, "r6")
    assert sorted(on_disk + left, key=lambda t: int(t[1:])) == [f"m{i}" for i in range(40)]


def test_missing_segment_is_an_error_not_a_gap(broker_url: str, tmp_path: Path) -> None:
    reader = _reader(broker_url, "r4", tmp_path)
    with pytest.raises(IllegalStateException, match="segment 1 is missing"):
        reader.partitions({"segment": 0}, {"segment": 1})


def test_a_vanished_segment_fails_the_batch_or_with_fail_on_data_loss_false_is_skipped_with_a_warning(
    broker_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka's failOnDataLoss: a planned segment that is gone (deleted by hand, a lifecycle
    rule) fails the query by default; with ``false`` the batch reads the others and a WARNING
    names the lost segment."""
    _send(broker_url, "vanish", 6)
    reader = _reader(broker_url, "vanish", tmp_path, segmentMessages="2")
    start = reader.initialOffset()
    reader.latestOffset(start, ReadAllAvailable())  # starts the receiver
    deadline = time.time() + 20
    while time.time() < deadline and len(_segments(tmp_path)) < 3:
        time.sleep(0.1)
    end = reader.latestOffset(start, ReadAllAvailable())
    reader.stop()
    assert end["segment"] == 3 and _segments(tmp_path) == [1, 2, 3]
    (tmp_path / f"seg-{2:020d}.arrow").unlink()
    with pytest.raises(IllegalStateException, match=r"segment 2 is missing.*failOnDataLoss=false"):
        reader.partitions(start, end)
    lenient = _reader(broker_url, "vanish", tmp_path, segmentMessages="2", failOnDataLoss="false")
    with caplog.at_level("WARNING"):
        texts = _texts(lenient, start, end)
    assert texts == ["m0", "m1", "m4", "m5"]  # the others, in order
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("segment 2 is missing" in w and "skipped" in w for w in warnings)


def test_progress_figures_say_what_is_buffered_past_the_planned_batch(
    broker_url: str, tmp_path: Path
) -> None:
    """``reportLatestOffset`` (shown as the progress's latestOffset): the newest durable segment,
    and the messages durable past the batch just planned."""
    _send(broker_url, "figures", 20)
    reader = _reader(broker_url, "figures", tmp_path, segmentMessages="5", maxMessagesPerTrigger="5")
    assert reader.reportLatestOffset() is None  # nothing planned yet
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadMaxRows(5))
    deadline = time.time() + 20
    while time.time() < deadline and len(_segments(tmp_path)) < 4:
        time.sleep(0.1)  # the receiver runs ahead of the planned batch
    report = reader.reportLatestOffset()
    reader.stop()
    assert report is not None
    assert report["log"] == end["log"] and report["segment"] == 4 and end["segment"] == 1
    assert (report["received"], report["buffered"], report["bufferedSegments"]) == (20, 15, 3)
    assert report["walBytes"] == sum(p.stat().st_size for p in tmp_path.glob("seg-*.arrow"))
    # Kafka's names for the same lag, over the (one) receiver's log
    assert (report["minOffsetsBehindLatest"], report["maxOffsetsBehindLatest"]) == (15, 15)
    assert report["avgOffsetsBehindLatest"] == 15.0


def test_a_release_that_never_asks_for_the_report_gets_the_figures_in_the_log(
    broker_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A build with admission control but without ``reportLatestOffset`` (features.py): Spark
    would never call it, so each ``latestOffset`` logs the figures at INFO instead; on a release
    that calls it, nothing is logged (the figures are in the progress)."""
    import dataclasses

    from amqp_jms.spark import features as features_module

    def run(queue: str, wal: Path) -> list[str]:
        """Two triggers of 5 over 15 messages in segments of 5: the figure lines logged."""
        _send(broker_url, queue, 15)
        reader = _reader(broker_url, queue, wal, segmentMessages="5", maxMessagesPerTrigger="5")
        caplog.clear()
        try:
            with caplog.at_level("INFO", logger="amqp_jms.spark"):
                start = reader.latestOffset(reader.initialOffset(), ReadMaxRows(5))
                deadline = time.time() + 20
                while time.time() < deadline and len(_segments(wal)) < 3:
                    time.sleep(0.1)
                reader.latestOffset(start, ReadMaxRows(5))  # plans segment 2; 3 stays buffered
        finally:
            reader.stop()
        return [r.getMessage() for r in caplog.records if "received=" in r.getMessage()]

    assert run("figures-shown", tmp_path / "shown") == []  # this release shows them in the progress
    older = dataclasses.replace(features_module.features(), report_latest_offset=False)
    monkeypatch.setattr(features_module, "features", lambda: older)
    lines = run("figures-log", tmp_path / "log")
    assert len(lines) == 2 and lines[-1].startswith("jms data source queue://figures-log: received=15 ")
    assert "buffered=5 " in lines[-1] and "maxOffsetsBehindLatest=5 " in lines[-1]
    assert "walBytes=" in lines[0]


def test_a_receiver_that_cannot_connect_fails_the_trigger_clearly(tmp_path: Path) -> None:
    import socket

    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        url = f"amqp://127.0.0.1:{free.getsockname()[1]}"
    reader = _reader(url, "nowhere", tmp_path)
    with pytest.raises(ValueError, match=f"cannot connect to {url}"):  # the query's first call
        reader.initialOffset()
    # a broker gone between that check and the receiver's connect: the trigger fails clearly
    reader = _reader(url, "nowhere", tmp_path)
    reader.check_once = lambda: None  # type: ignore[method-assign]
    with pytest.raises(IllegalStateException, match="background receiver failed"):
        reader.latestOffset(reader.initialOffset(), ReadAllAvailable())


def test_a_poison_message_is_skipped_with_a_warning_and_the_stream_goes_on(
    broker_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A message the client cannot read as JMS (an unknown x-opt-jms-msg-type) never fails the
    stream nor reaches a segment; the ones around it are all read. The client settles it
    modified(delivery-failed, undeliverable-here) with one WARNING (issue 16; that it is settled
    so is proven in tests/integration/test_client_poison.py, by the DLQ)."""
    from proton import Message
    from proton.utils import BlockingConnection

    _send(broker_url, "poison", 3)
    conn = BlockingConnection(broker_url, timeout=10)
    conn.create_sender("poison").send(Message(body="bad", annotations={"x-opt-jms-msg-type": 9}))
    conn.close()
    _send(broker_url, "poison", 3, start=3)
    reader = _reader(broker_url, "poison", tmp_path)
    reader.prepareForTriggerAvailableNow()
    with caplog.at_level("WARNING"):
        batches, _ = _run_batches(reader, reader.initialOffset(), ReadAllAvailable(), 6)
    reader.stop()
    assert sorted(t for b in batches for t in b) == [f"m{i}" for i in range(6)]
    assert len([r for r in caplog.records if "cannot be read as a JMS message" in r.getMessage()]) == 1


def test_the_driver_vets_headers_only_and_a_bad_body_is_a_row_not_a_loss(
    broker_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Decode once: the driver's receiver vets each message from its headers and properties (a
    bad type annotation is still poison, settled by the client and never logged), and leaves the
    body to the executors. A body that does not decode (text bytes not in their charset) was
    accepted and is in the log, so it is not dropped: its row has its headers and properties,
    null ``message_type`` and body, and a WARNING names it."""
    from proton import Message
    from proton.utils import BlockingConnection

    _send(broker_url, "badbody", 2)
    conn = BlockingConnection(broker_url, timeout=10)
    sender = conn.create_sender("badbody")
    sender.send(Message(body="bad", annotations={"x-opt-jms-msg-type": 9}))
    bad = Message(id="bad-body-1", body=b"\xff\xfe not utf-8", inferred=True, properties={"k": "v"})
    bad.content_type = "text/plain; charset=utf-8"
    sender.send(bad)
    conn.close()
    _send(broker_url, "badbody", 2, start=2)
    reader = _reader(broker_url, "badbody", tmp_path, includeAmqp="true")
    reader.prepareForTriggerAvailableNow()
    start = reader.initialOffset()
    rows: list[dict[str, Any]] = []
    with caplog.at_level("WARNING"):
        for _ in range(50):
            end = reader.latestOffset(start, ReadAllAvailable())
            if end == start:
                if reader._receiver is not None and reader._receiver.wait_drained(0):
                    break
                continue
            for partition in reader.partitions(start, end):
                for batch in reader.read(partition):
                    rows.extend(batch.to_pylist())
            reader.commit(end)
            start = end
    reader.stop()
    assert [r["text"] for r in rows] == ["m0", "m1", None, "m2", "m3"]
    odd = rows[2]
    assert (
        odd["message_id"] == "ID:AMQP_NO_PREFIX:bad-body-1"
        and odd["message_type"] is None
        and odd["body"] is None
    )
    assert dict(odd["properties"])["k"] == "v" and b"\xff\xfe not utf-8" in odd["amqp"]
    assert any("bad-body-1" in r.getMessage() and "cannot be read" in r.getMessage() for r in caplog.records)
    assert len([r for r in caplog.records if "cannot be read as a JMS message" in r.getMessage()]) == 1


def test_min_offsets_per_trigger_waits_for_enough_messages_or_the_delay(
    broker_url: str, tmp_path: Path
) -> None:
    """Kafka's minOffsetsPerTrigger/maxTriggerDelay: fewer messages than the minimum make no
    batch, until the delay since the last batch has passed."""
    _send(broker_url, "minrows", 3)
    reader = _reader(broker_url, "minrows", tmp_path, minOffsetsPerTrigger="5", maxTriggerDelay="2s")
    start = reader.initialOffset()
    began = time.monotonic()
    end = reader.latestOffset(start, ReadAllAvailable())
    while end == start and time.monotonic() - began < 10:
        end = reader.latestOffset(start, ReadAllAvailable())
    assert time.monotonic() - began >= 1.5  # held back until maxTriggerDelay
    # the delayed batch carries what the receiver had made durable by then: all three, or (on a
    # slow machine) the first ones, the rest following at the next delay
    got = _texts(reader, start, end)
    assert got and got == ["m0", "m1", "m2"][: len(got)]
    while len(got) < 3 and time.monotonic() - began < 20:
        nxt = reader.latestOffset(end, ReadAllAvailable())
        if nxt != end:
            reader.commit(end)
            got += _texts(reader, end, nxt)
            end = nxt
    assert got == ["m0", "m1", "m2"]
    reader.commit(end)
    _send(broker_url, "minrows", 6, start=3)
    time.sleep(0.5)
    began = time.monotonic()
    nxt = reader.latestOffset(end, ReadAllAvailable())
    while nxt == end and time.monotonic() - began < 10:
        nxt = reader.latestOffset(end, ReadAllAvailable())
    assert time.monotonic() - began < 1.5  # enough messages: at once
    assert sorted(_texts(reader, end, nxt), key=lambda t: int(t[1:])) == [f"m{i}" for i in range(3, 9)]
    reader.stop()


def test_the_first_available_now_batch_takes_what_is_buffered_up_to_the_limit(
    broker_url: str, tmp_path: Path
) -> None:
    """Not the few messages that arrived first: the first batch pays the Python workers'
    start-up, so it should carry a full batch."""
    _send(broker_url, "first", 3000)
    reader = _reader(broker_url, "first", tmp_path, segmentMessages="2000")
    reader.prepareForTriggerAvailableNow()
    batches, _ = _run_batches(reader, reader.initialOffset(), ReadAllAvailable(), 3000)
    reader.stop()
    assert len(batches[0]) >= 2000 and sum(map(len, batches)) == 3000


def test_two_receivers_each_in_its_own_process_lose_nothing_and_keep_their_order(
    broker_url: str, tmp_path: Path
) -> None:
    """numReceivers=2: two competing consumers, each a process of its own with its own
    connection and log (receiver-0/, receiver-1/); every message is read exactly once, each
    receiver's messages come in the queue's order, and all are accepted."""
    from amqp_jms.spark.stream_multi import MultiReceiverStreamReader

    options = {
        "url": broker_url,
        "destination": "queue://multi",
        "walPath": str(tmp_path),
        "pollMs": "200",
        "numReceivers": "2",
        "segmentMessages": "7",
        "jms.prefetchPolicy.all": "3",  # small prefetch: the broker alternates between the two
    }
    reader = pickle.loads(pickle.dumps(MultiReceiverStreamReader(parse_options(options))))
    start = reader.initialOffset()
    assert start["segments"] == [0, 0]
    start = reader.latestOffset(start, ReadAllAvailable())  # both receivers attach, nothing there
    pids = {r.proc.pid for r in reader._receivers or []}
    assert len(pids) == 2 and os.getpid() not in pids
    _send(broker_url, "multi", 60)
    by_log: dict[str, list[int]] = {}
    for _ in range(100):
        if sum(map(len, by_log.values())) >= 60:
            break
        end = reader.latestOffset(start, ReadAllAvailable())
        report = reader.reportLatestOffset()  # as Spark does after each latestOffset
        for partition in reader.partitions(start, end):
            assert isinstance(partition, SegmentPartition)
            for batch in reader.read(pickle.loads(pickle.dumps(partition))):
                by_log.setdefault(partition.wal_path, []).extend(
                    int(t[1:]) for t in batch.column("text").to_pylist()
                )
        reader.commit(end)
        start = end
    reader.stop()
    assert report is not None  # the progress figures, summed over both logs
    assert (report["segments"], report["received"], report["buffered"]) == (start["segments"], 60, 0)
    assert (report["minOffsetsBehindLatest"], report["maxOffsetsBehindLatest"]) == (0, 0)
    assert sorted(n for ns in by_log.values() for n in ns) == list(range(60))  # each once
    assert sorted(Path(p).name for p in by_log) == ["receiver-0", "receiver-1"]  # both took part
    assert all(ns == sorted(ns) for ns in by_log.values())  # in order per receiver
    assert _remaining(broker_url, "multi") == []  # all accepted
    assert not [p for p in tmp_path.glob("receiver-*/seg-*")]  # committed segments deleted


def test_num_receivers_is_refused_where_it_cannot_be_sound() -> None:
    with pytest.raises(ValueError, match="clientId"):
        parse_options({"url": "amqp://h", "destination": "queue://q", "numReceivers": "2", "clientId": "c"})
    with pytest.raises(ValueError, match="needs a 'subscription'"):
        parse_options({"url": "amqp://h", "destination": "topic://t", "numReceivers": "2"})
    assert (
        parse_options(
            {"url": "amqp://h", "destination": "topic://t", "numReceivers": "2", "subscription": "s"}
        ).num_receivers
        == 2
    )


def test_receiver_processes_end_with_the_driver_process(broker_url: str, tmp_path: Path) -> None:
    """A driver that dies (os._exit, no cleanup) leaves no receiver behind: each sees its pipe
    close and exits (what it held un-accepted goes back to the broker)."""
    import subprocess
    import sys

    script = (
        "import os, sys\n"
        "from pyspark.sql.streaming.datasource import ReadAllAvailable\n"
        "from amqp_jms.spark.options import parse_options\n"
        "from amqp_jms.spark.stream_multi import MultiReceiverStreamReader\n"
        f"r = MultiReceiverStreamReader(parse_options({{'url': {broker_url!r}, "
        f"'destination': 'queue://orphans', 'walPath': {str(tmp_path)!r}, 'numReceivers': '2', "
        "'pollMs': '100'}))\n"
        "r.latestOffset(r.initialOffset(), ReadAllAvailable())\n"
        "print(' '.join(str(p.proc.pid) for p in r._receivers), flush=True)\n"
        "os._exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2, out.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.2)
    assert not [p for p in pids if Path(f"/proc/{p}").exists()]


def test_report_backlog_adds_the_queue_depth_the_broker_reports(broker_url: str, tmp_path: Path) -> None:
    """reportBacklog=true: the embedded broker's management node says how many messages still
    wait on the queue; with a small prefetch and buffer most of them do."""
    _send(broker_url, "backlog", 40)
    reader = _reader(
        broker_url,
        "backlog",
        tmp_path,
        segmentMessages="5",
        maxMessagesPerTrigger="5",
        maxBufferedMessages="5",
        reportBacklog="true",
        **{"jms.prefetchPolicy.all": "1"},
    )
    reader.latestOffset(reader.initialOffset(), ReadMaxRows(5))
    time.sleep(1.0)  # the receiver fills its buffer, then waits for Spark
    report = reader.reportLatestOffset()
    reader.stop()
    assert report is not None
    assert 40 - 5 - 5 - 2 <= report["backlog"] <= 40 - report["received"]  # planned, buffered, in flight
    assert reader._backlog is None or reader._backlog._connection is None  # closed with the reader
