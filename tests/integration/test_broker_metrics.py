"""The broker's Prometheus endpoint scraped over HTTP and checked against known traffic."""

from __future__ import annotations

import itertools
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from proton import Message, Timeout
from proton.utils import BlockingConnection
from test_broker_features import fail_deliveries

from amqp_jms import ConnectionFactory, JMSSecurityException, Queue, Session
from amqp_jms.broker.operations import metrics_http
from amqp_jms.broker.operations.metrics import CONTENT_TYPE, parse
from amqp_jms.testing.broker_process import BrokerProcess

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
P = "amqp_jms_broker_"


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.headers["Content-Type"] == CONTENT_TYPE
        return parse(resp.read().decode())


def q(samples: Samples, name: str, address: str, queue: str | None = None) -> float:
    return samples[(P + name, (("address", address), ("queue", queue or address)))]


def dead(samples: Samples, address: str, reason: str) -> float:
    return samples[(P + "queue_dead_lettered_total", (("address", address), ("queue", address),
                                                      ("reason", reason)))]


def until(url: str, check: Callable[[Samples], bool], timeout: float = 10.0) -> Samples:
    """Scrape until ``check`` holds (outcomes travel asynchronously); the last scrape."""
    deadline = time.monotonic() + timeout
    while True:
        s = scrape(url)
        try:
            if check(s):
                return s
        except KeyError:
            pass
        if time.monotonic() > deadline:
            return s
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def fresh_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics_http, "MIN_INTERVAL", 0.0)  # every scrape a new snapshot


def test_counts_match_the_traffic(broker_factory: Any) -> None:
    b = broker_factory(metrics="127.0.0.1:0", users={"alice": "pw"}, max_delivery_attempts=2)
    url = b.metrics_url
    assert url is not None and url.startswith("http://127.0.0.1:")
    base = scrape(url)
    assert base[(P + "connections", ())] == 0 and base[(P + "auth_failures_total", ())] == 0

    factory = ConnectionFactory(b.url, username="alice", password="pw")
    with factory.create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        producer = session.create_producer(Queue("orders"))
        for i in range(10):
            producer.send(session.create_text_message(f"o{i}"))
        consumer = session.create_consumer(Queue("orders"))
        got = [consumer.receive(5) for _ in range(4)]
        assert all(m is not None for m in got)
        got[-1].acknowledge()  # CLIENT_ACKNOWLEDGE: the four received so far
        s = until(url, lambda s: q(s, "queue_dequeued_total", "orders") == 4)
        assert q(s, "queue_enqueued_total", "orders") == 10
        assert q(s, "queue_dequeued_total", "orders") == 4
        assert q(s, "queue_consumers", "orders") == 1
        # the rest sit in the consumer's prefetch (delivering) or on the queue
        assert q(s, "queue_depth", "orders") + q(s, "queue_delivering", "orders") == 6
        consumer.close()

        # expiry: three messages with a 50 ms TTL, met by a consumer after they expired
        ttl = session.create_producer(Queue("ttl"))
        ttl.set_time_to_live(50)
        for i in range(3):
            ttl.send(session.create_text_message(f"t{i}"))
        time.sleep(0.2)
        assert session.create_consumer(Queue("ttl")).receive(0.5) is None
        s = until(url, lambda s: q(s, "queue_expired_total", "ttl") == 3)
        assert q(s, "queue_expired_total", "ttl") == 3 and q(s, "queue_depth", "ttl") == 0

    # dead-lettered after max_delivery_attempts (2) failed deliveries, and one rejected
    c = BlockingConnection(b.url, timeout=10, user="alice", password="pw")
    sender = c.create_sender("fragile")
    sender.send(Message(body="boom"))
    r = c.create_receiver("fragile")
    fail_deliveries(r, 2)
    sender.send(Message(body="poison"))
    r.receive(timeout=5)
    r.reject()
    with pytest.raises(Timeout):  # drives the connection: the last outcome goes out
        c.create_receiver("nothing-here").receive(timeout=0.3)
    s = until(url, lambda s: dead(s, "fragile", "rejected") == 1)
    assert dead(s, "fragile", "delivery_limit") == 1 and dead(s, "fragile", "rejected") == 1
    assert q(s, "queue_depth", "fragile") == 0 and q(s, "queue_enqueued_total", "fragile") == 2
    assert q(s, "queue_enqueued_total", "DLQ") == 2 and q(s, "queue_depth", "DLQ") == 2
    c.close()

    # failed logins
    for password in ("wrong", "also-wrong"):
        bad = ConnectionFactory(b.url, username="alice", password=password).create_connection()
        with pytest.raises(JMSSecurityException):
            bad.start()
        bad.close()
    s = until(url, lambda s: s[(P + "auth_failures_total", ())] == 2)
    assert s[(P + "auth_failures_total", ())] == 2

    # the Python API reads the same numbers
    snap = b.metrics()
    orders, fragile = snap.queue("orders"), snap.queue("fragile")
    assert orders is not None and (orders.enqueued, orders.dequeued) == (10, 4)
    assert fragile is not None and (fragile.dead_lettered, fragile.dead_lettered_attempts) == (2, 1)
    assert snap.auth_failures_total == 2 and snap.resident_memory_bytes


def test_connections_sessions_and_links_open_and_after_close(broker_factory: Any) -> None:
    b = broker_factory(metrics="127.0.0.1:0")
    url = b.metrics_url

    def gauges(s: Samples) -> tuple[float, ...]:
        return tuple(s[(P + n, ())] for n in ("connections", "sessions", "links", "connections_total"))

    assert gauges(scrape(url)) == (0, 0, 0, 0)
    conns = [BlockingConnection(b.url, timeout=10) for _ in range(2)]
    for c in conns:
        c.create_sender("gauges")
        c.create_receiver("gauges")
    s = until(url, lambda s: gauges(s) == (2, 2, 4, 2))
    assert gauges(s) == (2, 2, 4, 2)  # BlockingConnection: one session for all its links
    assert q(s, "queue_consumers", "gauges") == 2
    conns[0].close()
    s = until(url, lambda s: gauges(s) == (1, 1, 2, 2))
    assert gauges(s) == (1, 1, 2, 2)
    conns[1].close()
    s = until(url, lambda s: gauges(s) == (0, 0, 0, 2))
    assert gauges(s) == (0, 0, 0, 2) and q(s, "queue_consumers", "gauges") == 0


def test_topic_subscriptions_are_labelled_by_topic_and_queue(broker_factory: Any) -> None:
    b = broker_factory(metrics="127.0.0.1:0")
    c = BlockingConnection(b.url, timeout=10)
    c.create_receiver("news", name="reader", options=_topic())
    s = c.create_sender("news", options=_topic())
    for i in range(3):
        s.send(Message(body=i))
    snap = b.metrics()
    (sub,) = [x for x in snap.queues if x.address == "news"]
    assert sub.kind == "subscription" and sub.enqueued == 3
    samples = until(b.metrics_url, lambda x: x[(P + "topic_published_total", (("address", "news"),))] == 3)
    assert samples[(P + "topic_subscriptions", (("address", "news"),))] == 1
    assert q(samples, "queue_enqueued_total", "news", sub.queue) == 3
    c.close()


def _topic() -> Any:
    from test_broker_peer import Caps

    return Caps("topic")


def test_one_queue_and_the_async_broker_from_python() -> None:
    import asyncio

    from amqp_jms.broker import AsyncBroker
    from amqp_jms.broker.operations.metrics import queue_stats

    async def main() -> None:
        async with AsyncBroker(port=0) as b:
            assert b.metrics_url is None  # no endpoint unless asked for
            assert b.core is not None
            b.core.router.queue("one")
            snap = b.metrics()
            assert [x.queue for x in snap.queues] == ["one"] and snap.connections == 0
            stats = queue_stats(b.core, "one")
            assert stats is not None and stats.kind == "queue" and stats.depth == 0
            assert queue_stats(b.core, "none") is None

    asyncio.run(main())


def test_label_values_are_escaped(broker_factory: Any) -> None:
    b = broker_factory(metrics="127.0.0.1:0")
    name = 'we"ird\\queue\nname'
    b.run_soon(b.core.router.queue, name)
    with urllib.request.urlopen(b.metrics_url, timeout=10) as resp:
        text = resp.read().decode()
    assert 'address="we\\"ird\\\\queue\\nname"' in text
    assert q(parse(text), "queue_depth", name) == 0


def test_the_endpoint_bounds_what_a_scraper_controls(
    broker_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metrics_http, "TIMEOUT", 0.5)
    b = broker_factory(metrics="127.0.0.1:0")
    host, port = b.metrics_url.split("//")[1].split("/")[0].split(":")
    addr = (host, int(port))

    def exchange(data: bytes) -> bytes:
        with socket.create_connection(addr, timeout=5) as sock:
            sock.sendall(data)
            return _read_all(sock)

    assert exchange(b"GET /other HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 404")
    assert exchange(b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 405")
    assert exchange(b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400")
    head = exchange(b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n")  # no body
    big = b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * (metrics_http.MAX_REQUEST + 100) + b"\r\n\r\n"
    assert exchange(big).startswith(b"HTTP/1.1 431")

    # a client that never finishes its request is cut after TIMEOUT
    slow = socket.create_connection(addr, timeout=5)
    slow.sendall(b"GET /metrics HTTP/1.1\r\n")
    t0 = time.monotonic()
    assert _read_all(slow) == b"" and time.monotonic() - t0 < 4
    slow.close()

    # silent sockets hold no serving slot (issue 26: eight of them made every scrape a 503);
    # past MAX_WAITING of them a new socket is closed at once, and then the endpoint serves again
    monkeypatch.setattr(metrics_http, "MAX_WAITING", metrics_http.MAX_CLIENTS + 4)
    idle = [socket.create_connection(addr, timeout=5) for _ in range(metrics_http.MAX_CLIENTS + 3)]
    time.sleep(0.1)
    try:
        assert exchange(b"GET /metrics HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 200")
        idle.append(socket.create_connection(addr, timeout=5))  # the last one allowed
        time.sleep(0.1)
        try:  # one more: closed unread
            assert exchange(b"GET /metrics HTTP/1.1\r\n\r\n") == b""
        except ConnectionResetError:
            pass
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.1)
    assert (P + "connections", ()) in scrape(b.metrics_url)


def _read_all(sock: socket.socket) -> bytes:
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def test_a_taken_address_stops_the_start(broker_factory: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError):
            broker_factory(metrics=f"127.0.0.1:{port}")


def test_a_bad_metrics_address_is_refused_at_construction(broker_factory: Any) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        broker_factory(metrics="localhost")


def test_broker_process_with_a_store_scraped(tmp_path: Path) -> None:
    """As operators run it: ``amqp-jms broker --metrics ... --data-dir ...`` in its own process."""
    p = BrokerProcess("--metrics", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"))
    try:
        url = p.metrics_url
        assert url is not None
        c = BlockingConnection(p.url, timeout=10)
        s = c.create_sender("durable")
        for _ in range(50):
            s.send(Message(body="x" * 1000, durable=True))
        r = c.create_receiver("durable", credit=20)
        for _ in range(20):
            r.receive(timeout=5)
            r.accept()
        r.close()
        samples = until(url, lambda x: q(x, "queue_dequeued_total", "durable") == 20
                        and q(x, "queue_depth", "durable") == 30, timeout=15)
        assert q(samples, "queue_enqueued_total", "durable") == 50
        assert q(samples, "queue_dequeued_total", "durable") == 20
        assert q(samples, "queue_depth", "durable") == 30
        assert samples[(P + "connections", ())] == 1 and samples[(P + "links", ())] == 1
        assert samples[(P + "store_size_bytes", ())] > 30 * 1000  # the 30 left are on disk
        rss = samples[(P + "process_resident_memory_bytes", ())] / 2**20
        assert abs(rss - p.rss_mb()) < 0.25 * p.rss_mb()
        c.close()
    finally:
        p.stop()


def test_scrapes_are_rate_limited_but_never_stale(
    broker_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most one snapshot per MIN_INTERVAL however often it is scraped, and an answer always
    shows what happened before its request (a scrape too soon waits for the next snapshot)."""
    import threading

    from amqp_jms.broker.operations import broker as broker_module

    monkeypatch.setattr(metrics_http, "MIN_INTERVAL", 0.5)
    taken: list[float] = []
    real = broker_module.snapshot_sliced

    def counting(core: Any, slice_: int | None = None) -> Any:
        taken.append(time.monotonic())
        return real(core, slice_)

    monkeypatch.setattr(broker_module, "snapshot_sliced", counting)
    b = broker_factory(metrics="127.0.0.1:0")
    url = b.metrics_url
    c = BlockingConnection(b.url, timeout=10)
    s = c.create_sender("fresh")
    for i in range(3):
        s.send(Message(body=i))
        assert q(scrape(url), "queue_enqueued_total", "fresh") == i + 1  # at once, not stale
    results: list[Samples] = []
    threads = [threading.Thread(target=lambda: results.append(scrape(url))) for _ in range(6)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6 and all(q(r, "queue_enqueued_total", "fresh") == 3 for r in results)
    during = [t for t in taken if t >= t0]
    assert 1 <= len(during) <= 2  # six scrapes at once share one (or two) snapshots
    gaps = [b2 - a for a, b2 in itertools.pairwise(taken)]
    assert min(gaps) >= 0.45
    c.close()


def test_the_broker_stops_at_once_with_a_scraper_hanging_on(broker_factory: Any) -> None:
    b = broker_factory(metrics="127.0.0.1:0")
    host, port = b.metrics_url.split("//")[1].split("/")[0].split(":")
    hanging = socket.create_connection((host, int(port)), timeout=5)
    hanging.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
    time.sleep(0.1)
    t0 = time.monotonic()
    b.stop()
    assert time.monotonic() - t0 < 3  # not the endpoint's 10 s request timeout
    assert _read_all(hanging) == b""  # cut
    hanging.close()


def test_paged_bytes_rise_over_the_memory_limit_and_fall_back_as_consumed(broker_factory: Any) -> None:
    from amqp_jms.broker.limits import BrokerLimits

    limit = 32 * 1024
    b = broker_factory(metrics="127.0.0.1:0", limits=BrokerLimits(queue_memory_limit=limit))
    url = b.metrics_url
    assert url is not None
    n, body = 2000, "x" * 500  # ~1.1 MB: all but the first ~32 kB of it paged to disk
    # prefetch 100: at the half-way scrape the broker has delivered at most 1,100 of the 2,000,
    # so about 900 are still paged whenever the scrape lands. With the default 1,000 the credit
    # refill granted at the 1,000th receive could page in and deliver the rest first (paged 0).
    with ConnectionFactory(b.url + "?jms.prefetchPolicy.all=100").create_connection() as conn:
        conn.start()
        session = conn.create_session()
        producer = session.create_producer(Queue("deep"))
        for i in range(n):
            producer.send(session.create_text_message(f"{i:05d}{body}"))
        s = until(url, lambda s: q(s, "queue_depth", "deep") == n, timeout=60)
        paged = q(s, "queue_paged_bytes", "deep")
        assert q(s, "queue_depth", "deep") == n
        assert paged > n * 500 * 0.9  # nearly every message's bytes are on disk ...
        assert q(s, "queue_memory_bytes", "deep") <= 2 * limit  # ... and only about the limit in memory

        consumer = session.create_consumer(Queue("deep"))
        for i in range(n // 2):
            m = consumer.receive(5)
            assert m is not None and m.get_text().startswith(f"{i:05d}")  # paged messages come back in order
        half = until(url, lambda s: q(s, "queue_dequeued_total", "deep") == n // 2, timeout=60)
        assert q(half, "queue_dequeued_total", "deep") == n // 2
        # paged back in as the queue drains, no more than the consumer's credit needs
        assert n * 500 * 0.3 < q(half, "queue_paged_bytes", "deep") < paged
        for _ in range(n - n // 2):
            assert consumer.receive(5) is not None
        s = until(url, lambda s: q(s, "queue_dequeued_total", "deep") == n, timeout=60)
        assert q(s, "queue_paged_bytes", "deep") == 0 and q(s, "queue_depth", "deep") == 0
        consumer.close()


def test_removed_total_counts_what_an_operator_purged_or_moved(broker_factory: Any) -> None:
    from amqp_jms.management import ManagementClient

    b = broker_factory(metrics="127.0.0.1:0")
    url = b.metrics_url
    assert url is not None
    with ConnectionFactory(b.url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        producer = session.create_producer(Queue("work"))
        for i in range(8):
            m = session.create_text_message(f"w{i}")
            m.set_int_property("n", i)
            producer.send(m)
        session.create_producer(Queue("elsewhere"))
        with ManagementClient(conn, timeout=10) as mc:
            assert mc.request("MOVE", "queue", "work",
                              properties={"destination": "elsewhere", "selector": "n < 3"}).body["count"] == 3
            assert mc.request("PURGE", "queue", "work").body["count"] == 5
    s = scrape(url)
    assert q(s, "queue_removed_total", "work") == 8 and q(s, "queue_depth", "work") == 0
    assert q(s, "queue_enqueued_total", "work") == 8 and q(s, "queue_dequeued_total", "work") == 0
    assert q(s, "queue_enqueued_total", "elsewhere") == 3 and q(s, "queue_removed_total", "elsewhere") == 0


def test_a_metrics_token_is_asked_for_as_bearer_or_basic_auth(broker_factory: Any) -> None:
    """The endpoint listed queue names and figures to anyone who could reach it (issue 26); with
    ``metrics_token`` it answers only a scraper that shows the token, as Prometheus's
    ``authorization`` (Bearer) or ``basic_auth`` (the token as password) send it."""
    import base64
    import urllib.error

    b = broker_factory(metrics="127.0.0.1:0", metrics_token="s3cret-token")
    url = b.metrics_url

    def get(auth: str | None) -> int:
        req = urllib.request.Request(url, headers={"Authorization": auth} if auth else {})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                assert b"amqp_jms_broker_connections" in resp.read()
                return int(resp.status)
        except urllib.error.HTTPError as e:
            assert e.headers.get("WWW-Authenticate", "").startswith("Basic")
            return int(e.code)

    basic = "Basic " + base64.b64encode(b"prometheus:s3cret-token").decode()
    wrong = "Basic " + base64.b64encode(b"prometheus:guess").decode()
    assert get(None) == 401
    assert get("Bearer nope") == 401
    assert get(wrong) == 401
    assert get("Basic !!!") == 401
    assert get("Bearer s3cret-token") == 200
    assert get(basic) == 200


@pytest.mark.parametrize("mode", ["names", "hashed", "none"])
def test_queue_labels_can_hide_queue_names(broker_factory: Any, mode: str) -> None:
    """The endpoint named every queue and topic to whoever scraped it (issue 26). An operator
    chooses: ``names`` (the default, as Artemis's exporter), ``hashed`` (per-queue series keep
    working under a stable digest), ``none`` (one sum per family, as RabbitMQ's ``/metrics``)."""
    from amqp_jms.broker.operations.metrics import hashed_label

    b = broker_factory(metrics="127.0.0.1:0", metrics_queue_labels=mode)
    c = BlockingConnection(b.url, timeout=10)
    for name, count in (("orders.secret", 2), ("payroll.eu", 3)):
        s = c.create_sender(name)
        for i in range(count):
            s.send(Message(body=i))
    c.create_sender("news", options=_topic()).send(Message(body="x"))
    with urllib.request.urlopen(b.metrics_url, timeout=10) as resp:
        text = resp.read().decode()
    samples = parse(text)
    c.close()
    if mode == "names":
        assert q(samples, "queue_depth", "orders.secret") == 2
        assert q(samples, "queue_depth", "payroll.eu") == 3
        return
    for secret in ("orders", "payroll", "news"):
        assert secret not in text
    if mode == "hashed":
        assert q(samples, "queue_depth", hashed_label("orders.secret")) == 2
        assert q(samples, "queue_depth", hashed_label("payroll.eu")) == 3
        assert samples[(P + "topic_published_total", (("address", hashed_label("news")),))] == 1
        assert hashed_label("payroll.eu") == hashed_label("payroll.eu") != hashed_label("payroll.EU")
    else:
        assert samples[(P + "queue_depth", ())] == 5
        assert samples[(P + "queue_enqueued_total", ())] == 5
        assert samples[(P + "topic_published_total", ())] == 1
        assert samples[(P + "queue_dead_lettered_total", (("reason", "rejected"),))] == 0
        assert not [k for k in samples if any(label in ("address", "queue") for label, _ in k[1])]


def test_queue_labels_from_the_command_line_and_the_config_file(tmp_path: Path) -> None:
    from amqp_jms.broker.operations.cli import build_parser, config_from_args
    from amqp_jms.broker.operations.config import ConfigError, load_config

    toml = tmp_path / "broker.toml"
    toml.write_text('[listener]\nmetrics = "127.0.0.1:0"\nmetrics_queue_labels = "hashed"\n')
    assert load_config(toml).broker_options()["metrics_queue_labels"] == "hashed"
    args = build_parser().parse_args(["--config", str(toml), "--metrics-queue-labels", "none"])
    assert config_from_args(args).broker_options()["metrics_queue_labels"] == "none"
    toml.write_text('[listener]\nmetrics_queue_labels = "sha1"\n')
    with pytest.raises(ConfigError, match="metrics_queue_labels"):
        load_config(toml)
    with pytest.raises(ValueError, match="metrics_queue_labels"):
        from amqp_jms.broker import Broker

        Broker(metrics="127.0.0.1:0", metrics_queue_labels="sha1")
