"""The ``$management`` node against requests as any AMQP Management client may send them:
malformed ones answered with their status and the connection unharmed, paging, limits, deep and
paged queues moved without starving the broker, moves and purges that survive a restart."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Message as ProtonMessage

from amqp_jms import ConnectionFactory, DeliveryMode, JMSException, Queue
from amqp_jms.broker.limits import BrokerLimits
from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.management import NODE_TYPE, ManagementClient
from amqp_jms.types import Int


class _Raw:
    """Requests built by hand: any properties, any body, answers read as they come."""

    def __init__(self, url: str) -> None:
        self.conn = ConnectionFactory(url).create_connection()
        self.conn.start()
        self.session = self.conn.create_session()
        self.reply_to = self.session.create_temporary_queue()
        self.producer = self.session.create_producer(Queue("$management"))
        self.consumer = self.session.create_consumer(self.reply_to)

    def ask(self, props: dict[str, Any], body: Any = None, *, reply: bool = True) -> Any:
        s = self.session
        msg = s.create_message() if body is None else s.create_object_message(body)
        for k, v in props.items():
            msg.set_object_property(k, v)
        if reply:
            msg.set_jms_reply_to(self.reply_to)
        self.producer.send(msg)
        answer = self.consumer.receive(5000)
        assert answer is not None, "no answer"
        assert answer.get_jms_correlation_id() == msg.get_jms_message_id()
        return answer


@pytest.fixture
def raw(broker: Any) -> Iterator[_Raw]:
    r = _Raw(broker.url)
    yield r
    r.conn.close()


def _status(answer: Any) -> tuple[int, str]:
    return answer.get_int_property("statusCode"), answer.get_string_property("statusDescription")


def test_malformed_requests_are_answered_and_the_connection_carries_on(raw: _Raw) -> None:
    code, text = _status(raw.ask({"operation": "FROB", "type": "queue", "name": "q"}))
    assert code == 501 and "'FROB' is not implemented" in text
    code, text = _status(raw.ask({"operation": "READ", "name": "q"}))
    assert code == 400 and "'type'" in text
    code, text = _status(raw.ask({"type": "queue", "name": "q"}))
    assert code == 400 and "'operation'" in text
    code, text = _status(raw.ask({"operation": "READ", "type": Int(7), "name": "q"}))
    assert code == 400 and "must be a string" in text
    code, text = _status(raw.ask({"operation": "READ", "type": "org.example.widget", "name": "q"}))
    assert code == 404 and "unknown entity type" in text
    code, text = _status(raw.ask({"operation": "READ", "type": "queue"}))
    assert code == 400 and "'name'" in text
    code, text = _status(raw.ask({"operation": "PURGE", "type": "connection", "name": "1"}))
    assert code == 501
    code, text = _status(raw.ask({"operation": "QUERY", "type": NODE_TYPE}, ["not", "a", "map"]))
    assert code == 400 and "map" in text
    code, text = _status(raw.ask({"operation": "MOVE", "type": "queue", "name": "$nope"}))
    assert code == 404

    # too big to read: the request itself is rejected (the sender hears why); nothing else ends
    with pytest.raises(JMSException, match="management_request_size") as e:
        raw.ask({"operation": "QUERY", "type": NODE_TYPE}, {"attributeNames": ["x" * 70000]})
    assert e.value.error_code == "amqp:resource-limit-exceeded"
    # nowhere to answer: rejected too
    with pytest.raises(JMSException, match="reply-to"):
        raw.ask({"operation": "QUERY", "type": NODE_TYPE}, reply=False)

    code, _ = _status(raw.ask({"operation": "QUERY", "type": NODE_TYPE, "entityType": "queue"}))
    assert code == 200
    raw.session.create_producer(Queue("still.works")).send(raw.session.create_text_message("x"))


def test_query_pages_and_caps_rows(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(management_rows=3))
    conn = ConnectionFactory(b.url).create_connection()
    conn.start()
    try:
        s = conn.create_session()
        for i in range(7):
            s.create_producer(Queue(f"q{i}"))
        with ManagementClient(conn, timeout=5) as mc:
            resp = mc.request("QUERY", NODE_TYPE, "self", properties={"entityType": "queue", "count": 100},
                              body={"attributeNames": ["name", "messageCount"]})
            assert resp.body["attributeNames"] == ["name", "messageCount"]
            assert len(resp.body["results"]) == 3 and resp.properties["count"] == 3  # capped
            names = [r["name"] for r in mc.query("queue", ["name"], page=3)]
            assert [n for n in names if not n.startswith("TempQueue")] == [f"q{i}" for i in range(7)]
            types = mc.request("GET-TYPES", NODE_TYPE, "self").body
            assert "org.amqpjms.queue" in types
            ops = mc.request("GET-OPERATIONS", NODE_TYPE, "self").body
            assert ops["org.amqpjms.queue"]["MOVE"] == ["destination", "selector", "limit"]
    finally:
        conn.close()


def test_move_selector_limits(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(management_selector_length=20))
    conn = ConnectionFactory(b.url).create_connection()
    conn.start()
    try:
        s = conn.create_session()
        s.create_producer(Queue("a"))
        s.create_producer(Queue("b"))
        with ManagementClient(conn, timeout=5) as mc:
            r = mc.request("MOVE", "queue", "a", properties={"destination": "b", "selector": "x = 'y'" * 5},
                           check=False)
            assert r.status == 400 and "management_selector_length" in r.description
            r = mc.request("MOVE", "queue", "a", properties={"destination": "b", "selector": "x = = 1"},
                           check=False)
            assert r.status == 400 and "invalid selector" in r.description
            r = mc.request("MOVE", "queue", "a", properties={"destination": "a"}, check=False)
            assert r.status == 400
            r = mc.request("MOVE", "queue", "a", properties={"destination": "b", "limit": Int(0)},
                           check=False)
            assert r.status == 400
    finally:
        conn.close()


def _encoded(i: int, durable: bool) -> bytes:
    return bytes(ProtonMessage(body=f"m{i}", properties={"n": i, "even": i % 2 == 0},
                               durable=durable).encode())


def _fill(broker: Any, queue: str, n: int, *, durable: bool = False, distinct: bool = True) -> None:
    """``n`` messages straight into a queue on the broker's loop (a client would take minutes);
    not ``distinct``: two encodings shared (only ``even`` tells them apart)."""
    shared = [_encoded(0, durable), _encoded(1, durable)]

    def fill() -> None:
        router = broker.core.router
        router.queue(queue)
        now = router.clock()
        for i in range(n):
            data = _encoded(i, durable) if distinct else shared[i % 2]
            router.publish(queue, BrokerMessage.parse(data, now=now))

    broker.run_soon(fill)


def _depth(broker: Any, queue: str) -> int:
    return int(broker.run_soon(lambda: len(broker.core.router.queues[queue])))


def test_a_deep_move_runs_in_slices_that_leave_the_broker_responsive(broker: Any) -> None:
    n = 60000
    _fill(broker, "deep", n, distinct=False)
    gaps: list[float] = []
    stop = [False]

    def probe(last: float) -> None:  # a timer on the broker's loop: how late does it run?
        now = time.perf_counter()
        gaps.append(now - last)
        if not stop[0]:
            broker.core.loop.call_later(0.002, probe, time.perf_counter())

    broker.run_soon(lambda: broker.core.loop.call_later(0.002, probe, time.perf_counter()))
    conn = ConnectionFactory(broker.url).create_connection()
    conn.start()
    try:
        conn.create_session().create_producer(Queue("shallow"))
        with ManagementClient(conn, timeout=60) as mc:
            started = time.perf_counter()
            r = mc.request("MOVE", "queue", "deep", properties={"destination": "shallow", "selector": "even"})
            took = time.perf_counter() - started
        stop[0] = True
        assert r.body == {"count": n // 2, "more": False}
        assert _depth(broker, "deep") == n // 2 and _depth(broker, "shallow") == n // 2
        # the move took many event-loop turns and none held the loop for long: done in one piece,
        # the probe would have waited the whole move (once or twice in all); sliced, a step is
        # ~10 ms of work, more on a loaded machine (34-37 runs of the probe alone, 19 in the full
        # suite's run)
        assert len(gaps) >= 10, f"the probe ran {len(gaps)} times during a {took:.2f} s move"
        assert max(gaps) < max(0.5, took / 4), f"the loop stalled {max(gaps):.3f} s in a {took:.2f} s move"
    finally:
        conn.close()


def test_browsing_deep_into_a_paged_queue_leaves_the_broker_responsive(broker_factory: Any) -> None:
    """The console's "older" pages of a deep queue: skipping 300,000 messages, most paged to disk,
    held the loop 0.6 s in one piece; sliced, the loop keeps its timers on time."""
    broker = broker_factory(data_dir=None, limits=BrokerLimits(queue_memory_limit=1 << 20))
    n = 300_000
    _fill(broker, "deep", n, distinct=False)
    deadline = time.monotonic() + 60
    while _depth(broker, "deep") < n and time.monotonic() < deadline:
        time.sleep(0.1)
    assert broker.metrics().queue("deep").paged_bytes > 0
    gaps: list[float] = []
    stop = [False]

    def probe(last: float) -> None:  # a timer on the broker's loop: how late does it run?
        gaps.append(time.perf_counter() - last)
        if not stop[0]:
            broker.core.loop.call_later(0.002, probe, time.perf_counter())

    conn = ConnectionFactory(broker.url).create_connection()
    conn.start()
    try:
        with ManagementClient(conn, timeout=60) as mc:
            broker.run_soon(lambda: broker.core.loop.call_later(0.002, probe, time.perf_counter()))
            started = time.perf_counter()
            r = mc.request("BROWSE", "queue", "deep", properties={"offset": n - 10, "count": 20})
            took = time.perf_counter() - started
        stop[0] = True
        assert len(r.body) == 10 and all("error" not in row for row in r.body)
        assert _depth(broker, "deep") == n  # browsing takes nothing
        assert len(gaps) >= 10, f"the probe ran {len(gaps)} times during a {took:.2f} s browse"
        assert max(gaps) < max(0.25, took / 3), f"the loop stalled {max(gaps):.3f} s in a {took:.2f} s browse"
    finally:
        conn.close()


def test_a_paged_queue_moves_in_order(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(queue_memory_limit=32 * 1024))
    _fill(b, "paged", 3000)
    assert b.run_soon(lambda: b.core.router.queues["paged"].paged) > 1000  # most of it is on disk
    conn = ConnectionFactory(b.url).create_connection()
    conn.start()
    try:
        s = conn.create_session()
        s.create_producer(Queue("out"))
        with ManagementClient(conn, timeout=30) as mc:
            r = mc.request("MOVE", "queue", "paged",
                           properties={"destination": "out", "selector": "n >= 1000"})
            assert r.body["count"] == 2000
            r = mc.request("PURGE", "queue", "paged")
            assert r.body["count"] == 1000
        c = s.create_consumer(Queue("out"))
        got = []
        for _ in range(2000):  # each waited for: a loaded machine can pause paging in for seconds
            m = c.receive(10_000)
            assert m is not None, f"{len(got)} of 2000 moved messages arrived"
            got.append(m.get_long_property("n"))
        assert c.receive(300) is None  # nothing beyond them
        assert got == list(range(1000, 3000))
        assert _depth(b, "paged") == 0
    finally:
        conn.close()


def test_moves_and_purges_survive_a_restart(broker_factory: Any, tmp_path: Any) -> None:
    from amqp_jms.broker import Broker

    b = broker_factory(data_dir=str(tmp_path))
    _fill(b, "src", 50, durable=True)
    conn = ConnectionFactory(b.url).create_connection()
    conn.start()
    try:
        conn.create_session().create_producer(Queue("dst"))
        with ManagementClient(conn, timeout=10) as mc:
            assert mc.request("MOVE", "queue", "src", properties={"destination": "dst",
                                                                 "selector": "n < 20"}).body["count"] == 20
            assert mc.request("PURGE", "queue", "src").body["count"] == 30
    finally:
        conn.close()
    b.stop()
    with Broker(port=0, data_dir=str(tmp_path)) as again:
        assert _depth(again, "src") == 0
        assert _depth(again, "dst") == 20


def test_requests_under_way_per_connection_are_limited(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(management_requests_per_connection=1))
    _fill(b, "big", 30000, distinct=False)
    r = _Raw(b.url)
    try:
        r.session.create_producer(Queue("other"))
        first = r.session.create_message()
        second = r.session.create_message()
        for m in (first, second):
            m.set_string_property("operation", "MOVE")
            m.set_string_property("type", "queue")
            m.set_string_property("name", "big")
            m.set_string_property("destination", "other")
            m.set_jms_reply_to(r.reply_to)
            # not waiting for the first's outcome: both arrive while the first move is under way
            # (a sync send let a fast machine finish the move before the second was sent)
            r.producer.send(m, delivery_mode=DeliveryMode.NON_PERSISTENT)
        answers = {a.get_jms_correlation_id(): _status(a) for a in (r.consumer.receive(30000) for _ in "12")}
        assert answers[second.get_jms_message_id()][0] == 503  # the first was still moving
        assert answers[first.get_jms_message_id()] == (200, "OK")
        assert _status(r.ask({"operation": "READ", "type": "queue", "name": "other"}))[0] == 200
    finally:
        r.conn.close()


def test_reading_needs_a_permission_on_the_address(broker_factory: Any) -> None:
    from amqp_jms.broker.routing.authorization import Authorization

    rules = Authorization.build(
        {"admin": ["admins"], "clerk": ["clerks"]},
        [("#", {"send": ["admins"], "manage": ["admins"], "create_temporary": ["admins", "clerks"],
                "browse": ["admins"]}),
         ("orders", {"browse": ["clerks"], "send": ["admins"], "consume": ["admins"], "manage": ["admins"]})],
    )
    b = broker_factory(users={"admin": "a", "clerk": "c"}, authorization=rules)
    admin = ConnectionFactory(b.url, username="admin", password="a").create_connection()
    admin.set_client_id("ops-console")
    admin.start()
    admin.create_session().create_producer(Queue("orders"))
    consumer = admin.create_session().create_consumer(Queue("orders"))
    identity = b.run_soon(lambda: next(f"{c.id}/{st.link.name}" for c in b.core.connections.values()
                                       for st in c.links.values() if getattr(st, "queue", None) is not None
                                       and st.queue.name == "orders"))
    assert consumer is not None
    admin.create_session().create_producer(Queue("secret"))
    clerk = ConnectionFactory(b.url, username="clerk", password="c").create_connection()
    clerk.start()
    try:
        with ManagementClient(clerk, timeout=5) as mc:
            assert mc.request("READ", "queue", "orders").body["messageCount"] == 0
            r = mc.request("READ", "queue", "secret", check=False)
            assert r.status == 403 and "clerk" in r.description and "'secret'" in r.description
            r = mc.request("PURGE", "queue", "orders", check=False)
            assert r.status == 403 and "permission manage" in r.description
            listed = mc.query("queue", ["name", "kind"])
            assert [q["name"] for q in listed if q["kind"] == "queue"] == ["orders"]
            # who consumes 'orders' (the admin's consumer) takes manage on it: browse is not enough
            assert mc.query("consumer", ["identity"]) == []
            r = mc.request("READ", "consumer", identity, check=False)
            assert r.status == 403 and "permission manage" in r.description
        with ManagementClient(admin, timeout=5) as mc:
            row = mc.request("READ", "consumer", identity).body
            assert (row["queue"], row["user"], row["containerId"]) == ("orders", "admin", "ops-console")
            assert row["deliveringCount"] == 0 and row["credit"] > 0
    finally:
        clerk.close()
        admin.close()


def test_prefix_mode_names_queues_either_way(broker_factory: Any) -> None:
    b = broker_factory(address_prefixes=("queue://", "topic://"))
    conn = ConnectionFactory(b.url).create_connection()
    conn.start()
    try:
        s = conn.create_session()
        p = s.create_producer(Queue("orders"))
        for _ in range(3):
            p.send(s.create_text_message("x"))
        s.create_producer(Queue("back"))
        with ManagementClient(conn, timeout=5) as mc:  # the client prefixes $management too
            moved = mc.request("MOVE", "queue", "orders", properties={"destination": "back"})
            assert moved.body["count"] == 3
            assert mc.request("READ", "queue", "queue://back").body["messageCount"] == 3
    finally:
        conn.close()


def test_a_full_broker_still_takes_management_requests(broker_factory: Any) -> None:
    # producers get no credit once max_memory is reached; the operator must still be able to purge
    b = broker_factory(limits=BrokerLimits(max_memory=64 * 1024, queue_memory_limit=0))
    _fill(b, "full", 3000, distinct=False)  # ~117 kB in memory
    conn = ConnectionFactory(b.url + "?jms.sendTimeout=5000").create_connection()  # no credit: fail
    conn.start()
    try:
        with ManagementClient(conn, timeout=5) as mc:
            for _ in range(120):  # past the management link's first credit window (100)
                assert mc.request("READ", "queue", "full").body["messageCount"] == 3000
            assert mc.request("PURGE", "queue", "full").body["count"] == 3000
    finally:
        conn.close()
    stats = b.metrics().queue("full")  # the purge shows in the queue's figures
    assert stats is not None and (stats.depth, stats.removed, stats.enqueued) == (0, 3000, 3000)


class _Requester:
    """What the node needs of a connection (as ``BrokerConnection``): an id, a user, refusals."""

    id = 10**6
    user = None

    def refusal(self, address: str, permission: Any) -> None:
        return None


def test_a_request_nested_too_deep_is_rejected_before_it_is_decoded(broker: Any) -> None:
    deep: Any = "x"
    for _ in range(150):
        deep = [deep]
    data = bytes(ProtonMessage(id="r1", reply_to="replies", body=deep,
                               properties={"operation": "QUERY", "type": NODE_TYPE}).encode())

    def send() -> Any:
        broker.core.router.queue("replies")
        return broker.core.management.receive(_Requester(), data)

    condition, description = broker.run_soon(send)
    assert condition == "amqp:decode-error" and "100" in description
    assert _depth(broker, "replies") == 0  # rejected, not answered


def test_a_subscription_is_found_when_its_client_id_has_colons(broker: Any) -> None:
    from amqp_jms import Topic

    conn = ConnectionFactory(broker.url).create_connection()
    conn.set_client_id("svc:eu:1")
    conn.start()
    try:
        s = conn.create_session()
        s.create_durable_subscriber(Topic("audit"), "all").close()
        with ManagementClient(conn, timeout=5) as mc:
            row = mc.request("READ", "subscription", "svc:eu:1:all").body
            assert (row["clientId"], row["name"], row["consumerCount"]) == ("svc:eu:1", "all", 0)
            assert mc.request("DELETE", "subscription", "svc:eu:1:all").status == 204
            assert mc.request("READ", "subscription", "svc:eu:1:all", check=False).status == 404
    finally:
        conn.close()
