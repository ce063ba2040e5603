"""Hostile input against the broker as a subprocess with its defaults (issue 18).

Each attack runs against a fresh ``python -m amqp_jms.broker``; the test asserts that the attack
is refused or bounded, that the broker's memory stays bounded (``/proc/<pid>/status``), and that an
innocent client's round trip stays under a second meanwhile. Bounded in size so the module runs
in well under a minute.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_helpers import (
    SASL_HEADER,
    SASL_INIT,
    BrokerProcess,
    drain,
    raw_receiver,
    raw_sender,
    read_until,
    round_trip,
    sasl_frame,
    transfer,
)
from proton import Message
from proton.utils import BlockingConnection
from test_broker_peer import DETACH, DISPOSITION, Selector

from amqp_jms.broker.limits import MiB
from amqp_jms.types import Int, Long, Symbol, UInt

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")


@pytest.fixture
def proc() -> Iterator[BrokerProcess]:
    p = BrokerProcess()
    try:
        yield p
    finally:
        p.stop()


@pytest.mark.parametrize(
    "response",
    [UInt(100_000_000), Int(-1), Long(2**40), 1.5e9, "100000000", [b"x"] * 3],
    ids=["uint", "negative", "long", "float", "string", "list"],
)
def test_sasl_init_with_a_non_binary_response_is_refused_without_allocating(
    proc: BrokerProcess, response: object
) -> None:
    before = proc.rss_mb()
    sock = proc.socket()
    sock.sendall(SASL_HEADER + sasl_frame(SASL_INIT, [Symbol("PLAIN"), response]))
    data, closed = drain(sock, 5)
    sock.close()
    assert closed, "a malformed SASL init must end the connection"
    assert data.startswith(SASL_HEADER)
    assert proc.alive()
    assert proc.peak_mb() - before < 20, f"peak RSS {before:.0f} -> {proc.peak_mb():.0f} MB"
    assert round_trip(proc.url) < 1.0
    assert "Traceback" not in proc.stop()


def test_silent_and_slowloris_connections_are_closed_after_the_handshake_timeout(proc: BrokerProcess) -> None:
    silent = [proc.socket() for _ in range(150)]
    slow = [proc.socket() for _ in range(50)]
    header = b"AMQP\x00\x01\x00\x00"
    t0 = time.monotonic()
    worst = 0.0
    i = 0
    while time.monotonic() - t0 < 11.5:  # the default handshake timeout is 10 s
        for s in slow:
            try:
                s.send(header[i % 8:i % 8 + 1])  # one byte at a time, never an Open
            except OSError:
                pass
        i += 1
        worst = max(worst, round_trip(proc.url))
        time.sleep(0.5)
    assert worst < 1.0, f"an innocent round trip took {worst:.2f}s"
    for s in silent + slow:
        _data, closed = drain(s, 0.5)
        s.close()
        assert closed, "a connection that never completed its handshake is still open"
    assert proc.alive()


def test_connections_beyond_max_connections_are_refused_at_once() -> None:
    p = BrokerProcess("--max-connections", "40", "--handshake-timeout", "1")
    try:
        held = [p.socket() for _ in range(40)]
        time.sleep(0.2)
        extra = p.socket()
        _, closed = drain(extra, 0.5)
        assert closed, "the 41st connection must be refused"
        extra.close()
        time.sleep(1.5)  # the held ones time out; room again
        assert round_trip(p.url) < 1.0
        for s in held:
            s.close()
        assert "max_connections (40) reached" in p.stderr()
    finally:
        p.stop()


def test_a_never_finishing_transfer_is_cut_off_at_max_message_size(proc: BrokerProcess) -> None:
    before = proc.rss_mb()
    sock = raw_sender(proc, "endless")
    chunk = transfer(0, b"\x00" * 60000, more=True)
    sent = 0
    detach = None
    sock.settimeout(5)
    try:
        while sent < 300 * MiB:
            sock.sendall(chunk * 16)
            sent += len(chunk) * 16
    except OSError:
        pass  # the broker detached the link and closed or stopped reading: expected
    try:
        detach = next(f for f in read_until(sock, DETACH) if f[0] == DETACH)
    except (AssertionError, OSError):
        detach = None
    sock.close()
    assert detach is not None, "the broker never detached the link"
    assert str(detach[2][2].value[0]) == "amqp:link:message-size-exceeded"
    assert proc.peak_mb() - before < 100, f"peak RSS {before:.0f} -> {proc.peak_mb():.0f} MB"
    assert round_trip(proc.url) < 1.0


def test_deeply_nested_application_properties_are_refused_at_send(proc: BrokerProcess) -> None:
    from amqp_jms.mapping.codec import encode_value
    from amqp_jms.types import Described, ULong

    value = encode_value(UInt(1))
    for _ in range(2000):
        value = b"\xd0" + (len(value) + 4).to_bytes(4, "big") + (1).to_bytes(4, "big") + value
    key = encode_value("deep")
    body = key + value
    props = b"\x00\x53\x74\xd1" + (len(body) + 4).to_bytes(4, "big") + (2).to_bytes(4, "big") + body
    message = props + encode_value(Described(ULong(0x77), "payload"))
    sock = raw_sender(proc, "deep")
    sock.sendall(transfer(0, message))
    frames = read_until(sock, DISPOSITION)
    sock.close()
    disp = next(f for f in frames if f[0] == DISPOSITION)[2]
    outcome = disp[4]
    assert int(outcome.descriptor) == 0x25, "rejected"
    assert "max_value_depth" in str(outcome.value[0].value[1])
    # nothing was queued: a consumer sees only the innocent message
    assert round_trip(proc.url, "deep") < 1.0


def test_application_properties_that_lie_about_their_count_do_not_cost_routing(proc: BrokerProcess) -> None:
    """Routing reads the header, the annotations and the properties only: a map claiming four
    billion entries in the application properties is not decoded to route the message (a
    selector's reading of it fails closed: ``selector_view``), and the broker stays responsive."""
    from amqp_jms.mapping.codec import encode_value
    from amqp_jms.types import Described, ULong

    body = encode_value("k") + encode_value("v")
    props = b"\x00\x53\x74\xd1" + (len(body) + 4).to_bytes(4, "big") + (0xFFFFFFFE).to_bytes(4, "big") + body
    message = b"\x00\x53\x70\xc0\x04\x02\x41\x50\x07" + props + encode_value(Described(ULong(0x77), "x"))
    before = proc.rss_mb()
    sock = raw_sender(proc, "lying-count")
    for i in range(200):
        sock.sendall(transfer(i, message))
    frames = read_until(sock, DISPOSITION)
    sock.close()
    assert any(f[0] == DISPOSITION for f in frames)
    assert proc.peak_mb() - before < 20, f"peak RSS {before:.0f} -> {proc.peak_mb():.0f} MB"
    assert round_trip(proc.url, "lying-count-innocent") < 1.0


def test_a_backtracking_like_selector_does_not_block_the_broker(proc: BrokerProcess) -> None:
    conn = BlockingConnection(proc.url, timeout=10)
    try:
        conn.create_receiver("evil-like", credit=10, options=Selector("p LIKE '%a%a%a%a%a%a%a%a%b'"))
        snd = conn.create_sender("evil-like")
        for n in (80, 90, 5000, 100_000):
            snd.send(Message(body="x", properties={"p": "a" * n}))
        assert round_trip(proc.url) < 1.0
    finally:
        conn.close()


def test_paging_files_live_under_the_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    p = BrokerProcess("--data-dir", str(data), "--queue-memory-limit", "100000")
    try:
        conn = BlockingConnection(p.url, timeout=10)
        snd = conn.create_sender("deep-q")
        for _ in range(50):
            snd.send(Message(body="x" * 10_000))
        spilled = list((data / "spill").glob("*.db"))
        conn.close()
        assert spilled, "a queue over its memory limit pages to <data-dir>/spill"
    finally:
        p.stop()


def test_a_consumer_that_does_not_read_its_socket_does_not_pull_the_queue_into_memory(tmp_path: Path) -> None:
    p = BrokerProcess("--queue-memory-limit", str(4 * MiB))
    try:
        conn = BlockingConnection(p.url, timeout=10)
        snd = conn.create_sender("hoard")
        body = "x" * 100_000
        for _ in range(600):  # 60 MB: mostly paged
            snd.send(Message(body=body))
        conn.close()
        before = p.rss_mb()
        sock = raw_receiver(p, "hoard", credit=10_000_000)  # then never reads
        time.sleep(2.0)
        assert p.rss_mb() - before < 40, f"RSS {before:.0f} -> {p.rss_mb():.0f} MB"
        assert round_trip(p.url) < 1.0
        sock.close()
    finally:
        p.stop()


def test_a_message_delivered_before_a_crash_comes_back_redelivered(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    p = BrokerProcess("--data-dir", data)
    try:
        conn = BlockingConnection(p.url, timeout=10)
        snd = conn.create_sender("crash-q")
        for body in ("seen", "unseen"):
            snd.send(Message(body=body, durable=True))
        r = conn.create_receiver("crash-q", credit=1)
        got = r.receive(timeout=5)
        assert got.body == "seen" and got.delivery_count == 0
        time.sleep(0.5)  # the delivery mark commits with the store's next group
        p.proc.kill()  # SIGKILL: no chance to write anything more
        p.proc.wait(10)
    finally:
        p.stop()
    p = BrokerProcess("--data-dir", data)
    try:
        conn = BlockingConnection(p.url, timeout=10)
        r = conn.create_receiver("crash-q", credit=2)
        first, second = r.receive(timeout=5), r.receive(timeout=5)
        r.accept()
        conn.close()
        assert (first.body, first.delivery_count) == ("seen", 1)  # JMSRedelivered=true
        assert (second.body, second.delivery_count) == ("unseen", 0)
    finally:
        p.stop()


@pytest.mark.parametrize("relay", [False, True], ids=["named-link", "anonymous-relay"])
def test_a_100_mb_message_goes_through_without_being_held_in_memory(proc: BrokerProcess, relay: bool) -> None:
    before = proc.rss_mb()
    body = b"x" * (95 * 1000 * 1000)
    conn = BlockingConnection(proc.url, timeout=120)
    try:
        r = conn.create_receiver("large", credit=1)  # the queue exists: the relay routes to it
        if relay:
            conn.create_sender(None).send(Message(address="large", body=body))
        else:
            conn.create_sender("large").send(Message(body=body))
        assert round_trip(proc.url) < 1.0
        got = r.receive(timeout=120)
        r.accept()
        assert len(got.body) == len(body)
    finally:
        conn.close()
    assert proc.peak_mb() - before < 100, f"peak RSS {before:.0f} -> {proc.peak_mb():.0f} MB"


def test_the_fuzzer_finds_nothing_in_a_short_run() -> None:
    """``benchmarks/broker_fuzz.py --quick``: a few thousand mutated frames, no crash, hang,
    traceback or ERROR line (the full run is recorded in docs/benchmarks.md)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    out = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "broker_fuzz.py"), "--quick", "--frames", "1500"],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "broker_fuzz: ratio 0 (goal 0)"


def test_malformed_frames_get_decode_error_and_one_log_line_each() -> None:
    from test_broker_peer import AMQP_HEADER, OPEN, close_error, frame

    p = BrokerProcess(quiet=False)
    try:
        for _ in range(5):
            sock = p.socket()
            bad = AMQP_HEADER + frame(OPEN, ["XXXX"]).replace(b"\xa1\x04XXXX", b"\xa1\x04\xff\xfe\xfd\xfc")
            sock.sendall(bad)
            data, _ = drain(sock, 0.5)
            sock.close()
            assert close_error(AMQP_HEADER + data[8:]) == "amqp:decode-error"
        assert round_trip(p.url) < 1.0
        log = p.stop()
        assert log.count("malformed frame") == 5
        assert "Traceback" not in log and " ERROR " not in log
    finally:
        p.stop()


def test_a_redelivered_100_mb_message_is_not_held_in_memory(proc: BrokerProcess) -> None:
    """Its header is rewritten with the new delivery-count; the rest streams from the file."""
    before = proc.rss_mb()
    body = b"r" * (95 * 1000 * 1000)
    conn = BlockingConnection(proc.url, timeout=120)
    try:
        conn.create_sender("large-redo").send(Message(body=body))
        r = conn.create_receiver("large-redo", credit=1)
        first = r.receive(timeout=120)
        assert first.delivery_count == 0
        del first
        dlv = r.fetcher.unsettled.popleft()
        dlv.local.failed = True  # modified, delivery-failed: it comes back with its count + 1
        dlv.update(dlv.MODIFIED)
        dlv.settle()
        again = r.receive(timeout=120)
        r.accept()
        assert again.delivery_count == 1 and again.body == body
    finally:
        conn.close()
    assert proc.peak_mb() - before < 100, f"peak RSS {before:.0f} -> {proc.peak_mb():.0f} MB"


def test_a_100_mb_message_paged_out_of_a_full_queue_is_not_read_into_memory() -> None:
    p = BrokerProcess("--queue-memory-limit", str(1 * MiB))
    try:
        conn = BlockingConnection(p.url, timeout=120)
        snd = conn.create_sender("large-paged")
        for i in range(20):  # 2 MB: the queue pages from here on
            snd.send(Message(body=b"s" * 100_000, properties={"i": i}))
        before = p.rss_mb()
        body = b"p" * (95 * 1000 * 1000)
        snd.send(Message(body=body, properties={"i": 20}))
        r = conn.create_receiver("large-paged", credit=1)
        for i in range(21):
            got = r.receive(timeout=120)
            r.accept()
            assert got.properties["i"] == i
        assert got.body == body
        conn.close()
        assert p.peak_mb() - before < 100, f"peak RSS {before:.0f} -> {p.peak_mb():.0f} MB"
    finally:
        p.stop()


def test_a_100_mb_message_sent_in_a_transaction_is_not_held_in_memory(proc: BrokerProcess) -> None:
    from amqp_jms import ConnectionFactory

    before = proc.rss_mb()
    body = b"t" * (95 * 1000 * 1000)
    with ConnectionFactory(proc.url).create_connection() as conn:
        s = conn.create_session(True)
        q = s.create_queue("large-txn")
        m = s.create_bytes_message()
        m.write_bytes(body)
        s.create_producer(q).send(m)
        del m
        assert round_trip(proc.url) < 1.0
        s.commit()
        conn.start()
        got = s.create_consumer(q).receive(120_000)
        s.commit()
        assert got is not None and got.get_body(bytes) == body
    assert proc.peak_mb() - before < 100, f"peak RSS {before:.0f} -> {proc.peak_mb():.0f} MB"


def test_a_durable_100_mb_message_is_stored_and_recovered_outside_memory(tmp_path: Path) -> None:
    """Stored as a file of its own beside the database (not a row), mapped back after a crash."""
    data = str(tmp_path / "data")
    body = b"d" * (95 * 1000 * 1000)
    p = BrokerProcess("--data-dir", data)
    try:
        before = p.rss_mb()
        conn = BlockingConnection(p.url, timeout=120)
        conn.create_sender("large-durable").send(Message(body=body, durable=True))  # accepted once stored
        assert p.peak_mb() - before < 50, f"peak RSS {before:.0f} -> {p.peak_mb():.0f} MB"
        p.proc.kill()
        p.proc.wait(10)
    finally:
        p.stop()
    p = BrokerProcess("--data-dir", data)
    try:
        before = p.rss_mb()
        conn = BlockingConnection(p.url, timeout=120)
        r = conn.create_receiver("large-durable", credit=1)
        got = r.receive(timeout=120)
        r.accept()
        assert got.body == body
        conn.close()
        assert p.peak_mb() - before < 100, f"peak RSS {before:.0f} -> {p.peak_mb():.0f} MB"
        time.sleep(0.5)  # the row's delete commits with the store's next group, then the file goes
        assert not any((tmp_path / "data" / "large").iterdir())
    finally:
        p.stop()


def test_a_browser_on_a_deep_paged_queue_does_not_read_the_paged_part_into_memory() -> None:
    from proton.reactor import Copy

    p = BrokerProcess("--queue-memory-limit", str(4 * MiB))
    try:
        start = p.rss_mb()
        conn = BlockingConnection(p.url, timeout=30)
        snd = conn.create_sender("browsed")
        for i in range(1000):  # 100 MB: mostly paged (and no more than a page file's batch in memory)
            snd.send(Message(body="x" * 100_000, properties={"i": i}))
        browser = conn.create_receiver("browsed", credit=1, options=Copy())
        assert browser.receive(timeout=10).properties["i"] == 0
        browser.accept()
        assert p.peak_mb() - start < 40, f"peak RSS {start:.0f} -> {p.peak_mb():.0f} MB"
        browser.flow(1000)
        seen = []
        for _ in range(999):
            seen.append(browser.receive(timeout=10).properties["i"])
            browser.accept()
        assert seen == list(range(1, 1000))  # all of it, in order, memory then disk
        conn.close()
    finally:
        p.stop()
