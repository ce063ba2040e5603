"""``amqp-jms queues / purge / move / delete / connections / subscriptions`` against the embedded
broker: the numbers an operator reads, messages moved exactly and intact, refusals with the
broker's reason and a non-zero exit."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from amqp_jms import ConnectionFactory, Queue, Topic
from amqp_jms.broker.routing.authorization import Authorization
from amqp_jms.cli.main import main
from amqp_jms.types import Int


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _queues(url: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, dict[str, Any]]:
    assert main(["queues", "--url", url, "--json", *extra]) == 0
    return {r["queue"]: r for r in _json_lines(capsys.readouterr().out)}


def _send(url: str, queue: str, bodies: list[tuple[str, dict[str, Any]]]) -> None:
    conn = ConnectionFactory(url).create_connection()
    try:
        s = conn.create_session()
        p = s.create_producer(Queue(queue))
        for text, props in bodies:
            m = s.create_text_message(text)
            for k, v in props.items():
                m.set_object_property(k, v)
            p.send(m)
    finally:
        conn.close()


def test_queues_lists_depth_and_consumers(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    _send(broker.url, "orders", [(f"o{i}", {}) for i in range(5)])
    _send(broker.url, "invoices", [("i0", {}), ("i1", {})])
    conn = ConnectionFactory(broker.url).create_connection()
    try:
        s = conn.create_session()
        s.create_consumer(Queue("audit"))  # a consumer on an empty queue
        rows = _queues(broker.url, capsys)
        assert rows["orders"]["messages"] == 5 and rows["orders"]["consumers"] == 0
        assert rows["invoices"]["messages"] == 2
        assert rows["audit"]["messages"] == 0 and rows["audit"]["consumers"] == 1
        assert not any(name.startswith("TempQueue") for name in rows)  # the CLI's own reply queue
        assert any(name.startswith("TempQueue") for name in _queues(broker.url, capsys, "--all"))
    finally:
        conn.close()
    assert main(["queues", "--url", broker.url]) == 0
    table = capsys.readouterr().out
    assert "orders" in table and "consumers" in table


def test_move_with_selector_moves_exactly_the_matching_messages_intact(
    broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url = broker.url
    sent = [(f"m{i}", {"region": "EU" if i % 3 == 0 else "US", "n": Int(i), "amount": i * 1.5})
            for i in range(30)]
    _send(url, "DLQ", sent)
    _send(url, "orders", [])  # the queue moved to must exist
    assert main(["move", "DLQ", "orders", "--url", url, "--selector", "region = 'EU'", "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1]["moved"] == 10
    rows = _queues(url, capsys)
    assert rows["DLQ"]["messages"] == 20 and rows["orders"]["messages"] == 10

    conn = ConnectionFactory(url).create_connection()
    conn.start()
    try:
        s = conn.create_session()
        c = s.create_consumer(Queue("orders"))
        got = []
        while (m := c.receive(1000)) is not None:
            got.append(m)
        assert [m.get_text() for m in got] == [t for t, p in sent if p["region"] == "EU"]  # order kept
        for m in got:
            n = m.get_int_property("n")
            assert m.get_string_property("region") == "EU"
            assert m.get_double_property("amount") == n * 1.5
            assert not m.get_jms_redelivered()  # a fresh start on the queue moved to
        # the rest stayed in the DLQ: moving them with a limit takes exactly that many
        assert main(["move", "DLQ", "orders", "--url", url, "--limit", "7", "--json"]) == 0
        assert _json_lines(capsys.readouterr().out)[-1]["moved"] == 7
        assert _queues(url, capsys)["DLQ"]["messages"] == 13
    finally:
        conn.close()


@pytest.mark.parametrize("form", [
    "failover:(amqp://{hp}?amqp.idleTimeout=30000)",  # a server URI with its own options
    "failover:amqp://{hp}",  # no parentheses: the verb's jms.sendTimeout goes on the failover URL
    "failover:(amqp://{hp},amqp://127.0.0.1:1)?failover.maxReconnectAttempts=2&jms.sendTimeout=9000",
])
def test_verbs_take_failover_urls(broker: Any, capsys: pytest.CaptureFixture[str], form: str) -> None:
    """Every verb adds jms.sendTimeout (--timeout) to --url: on a failover URL it must land on
    the failover URL's own query, never inside a server URI or after its closing parenthesis
    (both refused by the failover URL's parser)."""
    url = form.format(hp=f"127.0.0.1:{broker.port}")
    _send(broker.url, "fo.orders", [(f"o{i}", {}) for i in range(3)])
    assert _queues(url, capsys)["fo.orders"]["messages"] == 3
    assert main(["purge", "fo.orders", "--url", url, "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1] == {"queue": "fo.orders", "purged": 3}
    assert main(["connections", "--url", url]) == 0
    capsys.readouterr()


def test_move_to_a_missing_queue_fails_with_the_reason(
    broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _send(broker.url, "src", [("x", {})])
    assert main(["move", "src", "nowhere", "--url", broker.url]) == 1
    assert "no queue 'nowhere'" in capsys.readouterr().err
    assert _queues(broker.url, capsys)["src"]["messages"] == 1


def test_purge_and_delete(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url = broker.url
    _send(url, "work", [(f"w{i}", {}) for i in range(25)])
    assert main(["purge", "work", "--url", url, "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1] == {"queue": "work", "purged": 25}
    assert _queues(url, capsys)["work"]["messages"] == 0
    _send(url, "work", [("after", {})])  # the queue is still there and takes messages
    assert _queues(url, capsys)["work"]["messages"] == 1

    assert main(["delete", "work", "--url", url, "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1] == {"deleted": "work", "messages": 1}
    assert "work" not in _queues(url, capsys)
    assert main(["delete", "work", "--url", url]) == 1
    assert "no queue 'work'" in capsys.readouterr().err


def test_subscriptions_listed_and_removed(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url = broker.url
    conn = ConnectionFactory(url).create_connection()
    conn.set_client_id("app1")
    try:
        s = conn.create_session()
        sub = s.create_durable_subscriber(Topic("prices"), "watch", "sku LIKE 'A%'")
        pub = s.create_producer(Topic("prices"))
        for sku in ("A1", "B2", "A3"):
            m = s.create_text_message(sku)
            m.set_string_property("sku", sku)
            pub.send(m)
        assert main(["subscriptions", "--url", url, "--json"]) == 0
        (row,) = _json_lines(capsys.readouterr().out)
        assert row["subscription"] == "app1:watch" and row["topic"] == "prices"
        assert row["selector"] == "sku LIKE 'A%'" and row["consumers"] == 1 and row["durable"] is True
        assert row["messages"] + 0 <= 2  # the consumer may hold some already

        assert main(["subscriptions", "--url", url, "--remove", "app1:watch"]) == 1  # in use
        assert "active consumer" in capsys.readouterr().err
        sub.close()
        assert main(["subscriptions", "--url", url, "--remove", "app1:watch", "--json"]) == 0
        assert _json_lines(capsys.readouterr().out)[-1]["removed"] == "app1:watch"
        assert main(["subscriptions", "--url", url, "--json"]) == 0
        assert _json_lines(capsys.readouterr().out) == []
        assert broker.run_soon(lambda: len(broker.core.router.subscriptions)) == 0
    finally:
        conn.close()


def test_connections_lists_the_users(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    conn = ConnectionFactory(broker.url).create_connection()
    conn.set_client_id("watcher")
    conn.start()
    try:
        assert main(["connections", "--url", broker.url, "--json"]) == 0
        rows = _json_lines(capsys.readouterr().out)
        assert len(rows) == 2  # ours and the CLI's own
        assert "watcher" in {r["container"] for r in rows}
        assert all(r["from"].startswith("127.0.0.1:") for r in rows)
    finally:
        conn.close()


USERS = {"ops": "o-pw", "viewer": "v-pw", "carol": "c-pw"}
RULES = Authorization.build(
    {"ops": ["admins"], "viewer": ["readers"]},
    [
        ("#", {"send": ["admins"], "consume": ["admins"], "browse": ["admins"], "manage": ["admins"],
               "create_temporary": ["admins", "readers"]}),
        ("orders.#", {"send": ["admins"], "browse": ["readers", "admins"], "manage": ["admins"]}),
        ("$management", {"send": ["admins", "readers"], "manage": ["admins"]}),
    ],
)


def _as(url: str, user: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{user}:{USERS[user]}@{parts.hostname}:{parts.port}"))


def test_refused_without_the_permission(broker_factory: Any, capsys: pytest.CaptureFixture[str]) -> None:
    b = broker_factory(users=USERS, authorization=RULES)
    _send(_as(b.url, "ops"), "orders.eu", [("o", {})])
    _send(_as(b.url, "ops"), "payroll", [("p", {})])

    # a reader sees only what it may browse, and may not purge
    rows = _queues(_as(b.url, "viewer"), capsys)
    assert set(rows) == {"orders.eu"} and rows["orders.eu"]["messages"] == 1
    assert main(["purge", "orders.eu", "--url", _as(b.url, "viewer")]) == 1
    err = capsys.readouterr().err
    assert "JMSSecurityException" in err and "viewer" in err and "permission manage" in err
    assert main(["connections", "--url", _as(b.url, "viewer")]) == 1
    assert "may not manage '$management'" in capsys.readouterr().err
    # a user without roles cannot even make the temporary reply queue: refused, exit 1
    assert main(["queues", "--url", _as(b.url, "carol")]) == 1
    assert "carol" in capsys.readouterr().err

    # who consumes a queue is an operator's to see: a reader (browse, no manage) lists none
    watcher = ConnectionFactory(_as(b.url, "ops")).create_connection()
    watcher.create_session().create_consumer(Queue("payroll"))
    assert main(["consumers", "--url", _as(b.url, "viewer"), "--json"]) == 0
    assert _json_lines(capsys.readouterr().out) == []

    # the admin may; nothing changed meanwhile
    ops = _as(b.url, "ops")
    assert main(["consumers", "payroll", "--url", ops, "--json"]) == 0
    (row,) = _json_lines(capsys.readouterr().out)
    assert row["user"] == "ops" and row["queue"] == "payroll"
    watcher.close()
    assert _queues(ops, capsys)["orders.eu"]["messages"] == 1
    assert main(["purge", "orders.eu", "--url", ops]) == 0
    capsys.readouterr()
    assert _queues(ops, capsys)["orders.eu"]["messages"] == 0
    assert main(["connections", "--url", ops]) == 0


def test_rabbitmq_3_10_has_no_management_node(rabbitmq: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """What docs/operations.md says of RabbitMQ: the verbs fail there, with the peer's reason."""
    assert main(["queues", "--url", rabbitmq.url, "--timeout", "5"]) == 1
    assert "Dynamic targets not supported" in capsys.readouterr().err


def test_consumers_lists_who_consumes_each_queue(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    url = broker.url
    _send(url, "orders", [(f"o{i}", {"region": "EU"}) for i in range(5)])
    conn = ConnectionFactory(url + "?jms.prefetchPolicy.all=10").create_connection()
    conn.set_client_id("billing")
    conn.start()
    try:
        s = conn.create_session(False, 2)  # CLIENT_ACKNOWLEDGE: what it received stays unsettled
        c = s.create_consumer(Queue("orders"), "region = 'EU'")
        assert c.receive(5000) is not None
        s.create_durable_subscriber(Topic("prices"), "watch")
        deadline = time.monotonic() + 5
        while True:  # the prefetch arrives in the background
            assert main(["consumers", "--url", url, "--json"]) == 0
            rows = {r["address"]: r for r in _json_lines(capsys.readouterr().out)}
            if rows.get("orders", {}).get("delivering") == 5 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert set(rows) == {"orders", "prices"}  # not the CLI's own reply consumer
        orders = rows["orders"]
        assert orders["queue"] == "orders" and orders["container"] == "billing"
        assert orders["selector"] == "region = 'EU'" and orders["browser"] is False
        assert orders["delivering"] == 5  # all five prefetched, none acknowledged yet
        assert 0 <= orders["credit"] <= 10 - 5
        assert orders["from"].startswith("127.0.0.1:") and orders["user"] is None
        assert orders["link"].startswith("qpid-jms:receiver:")
        prices = rows["prices"]
        assert prices["link"] == "watch" and prices["queue"].startswith("sub:")
        assert prices["connection"] == orders["connection"]

        assert main(["consumers", "orders", "--url", url, "--json"]) == 0
        assert [r["address"] for r in _json_lines(capsys.readouterr().out)] == ["orders"]
        assert main(["consumers", "nothing.here", "--url", url, "--json"]) == 0
        assert _json_lines(capsys.readouterr().out) == []
        assert main(["consumers", "--url", url]) == 0
        table = capsys.readouterr().out
        assert "billing" in table and "delivering" in table
    finally:
        conn.close()
    assert main(["consumers", "--url", url, "--json"]) == 0
    assert _json_lines(capsys.readouterr().out) == []  # gone with their connection
