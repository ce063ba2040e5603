"""The broker's web console over real HTTP (issue 30): signing in with the broker's users, what
each page shows as messages flow, and every action refused without a session, with a wrong CSRF
token, or by a user lacking ``manage``; done with a confirmation, and logged.

root manages everything; bob may browse ``orders.#`` (a read-only role); the DLQ needs manage.
A real browser drives the same console in tests/integration/test_broker_console_browser.py.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
import urllib.parse
import urllib.request
from typing import Any

import pytest
from console_helpers import RULES, USERS, Client
from hostile_helpers import drain, round_trip

from amqp_jms import ConnectionFactory, Queue


@pytest.fixture
def secured(broker_factory: Any) -> Any:
    return broker_factory(users=USERS, authorization=RULES, console=True, metrics="127.0.0.1:0")


def _send(broker: Any, queue: str, n: int, first: int = 0, **props: Any) -> None:
    with ConnectionFactory(broker.url, username="root", password="r-pw").create_connection() as c:
        s = c.create_session()
        p = s.create_producer(Queue(queue))
        for i in range(first, first + n):
            m = s.create_text_message(f"order {i}")
            m.set_int_property("n", i)
            for k, v in props.items():
                m.set_string_property(k, v)
            p.send(m)


def _depth(client: Client, queue: str) -> int:
    status, body = client.get("/queues")
    assert status == 200
    row = re.search(rf'>{re.escape(queue)}</a></td><td>[^<]*</td><td class=n>(\d+)</td>', body)
    return int(row.group(1)) if row else -1


def test_pages_need_a_sign_in_and_a_wrong_password_is_refused(secured: Any) -> None:
    c = Client(secured.console_url)
    status, body = c.get("/queues")
    assert status == 200 and "Sign in" in body  # redirected to the login page
    status, body = c.post("/login", {"user": "root", "password": "nope"})
    assert status == 401 and "Wrong user name or password" in body
    status, body = c.post("/login", {"user": "nobody", "password": "x"})
    assert status == 401
    c.login("root")
    assert "root" in c.get("/")[1]


def test_the_queues_page_follows_the_depth_and_the_queue_page_shows_messages(secured: Any) -> None:
    c = Client(secured.console_url)
    c.login("root")
    _send(secured, "orders.eu", 3, region="EU")
    assert _depth(c, "orders.eu") == 3
    _send(secured, "orders.eu", 2, 3, region="EU")
    assert _depth(c, "orders.eu") == 5
    status, body = c.get("/queues/orders.eu")
    assert status == 200
    assert "order 0" in body and "order 4" in body  # text bodies
    assert "region <span class=muted>(String)</span> = EU" in body  # typed properties
    assert "n <span class=muted>(int)</span> = 4" in body
    assert "PERSISTENT" in body and "messageId: ID:" in body


def test_move_by_selector_asks_for_confirmation_then_moves_and_logs(secured: Any,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    _send(secured, "orders.eu", 0)  # the destination exists (a producer attached to it)
    _send(secured, "orders.dlq", 4, region="EU")
    _send(secured, "orders.dlq", 2, region="US")
    c = Client(secured.console_url)
    c.login("root")
    token = c.csrf("/queues/orders.dlq")
    fields = {"csrf": token, "destination": "orders.eu", "selector": "region = 'EU'"}
    status, body = c.post("/queues/orders.dlq/move", fields)
    assert status == 200 and "Confirm" in body and "region = &#x27;EU&#x27;" in body
    assert _depth(c, "orders.dlq") == 6  # nothing moved before the confirmation
    with caplog.at_level(logging.INFO, logger="amqp_jms.broker"):
        status, body = c.post("/queues/orders.dlq/move", {**fields, "confirmed": "yes"})
    assert status == 200 and "done (4 messages)" in body
    assert _depth(c, "orders.dlq") == 2 and _depth(c, "orders.eu") == 4
    audit = [r.getMessage() for r in caplog.records if r.name == "amqp_jms.broker.console"]
    assert any("user 'root'" in line and "orders.dlq" in line and "200" in line for line in audit), audit


def test_purge_and_delete(secured: Any) -> None:
    _send(secured, "orders.old", 3)
    c = Client(secured.console_url)
    c.login("root")
    token = c.csrf("/queues/orders.old")
    status, body = c.post("/queues/orders.old/purge", {"csrf": token, "confirmed": "yes"})
    assert status == 200 and "done (3 messages)" in body
    assert _depth(c, "orders.old") == 0
    status, body = c.post("/queues/orders.old/delete", {"csrf": token, "confirmed": "yes"})
    assert status == 200 and "Delete the queue" in body
    assert _depth(c, "orders.old") == -1


@pytest.mark.parametrize("action", ["move", "purge", "delete"])
def test_every_action_is_refused_without_a_session_with_a_wrong_token_or_without_manage(
        secured: Any, action: str) -> None:
    _send(secured, "orders.keep", 2)
    fields = {"destination": "orders.eu", "confirmed": "yes"}
    anonymous = Client(secured.console_url)
    status, body = anonymous.post(f"/queues/orders.keep/{action}", {**fields, "csrf": "x"})
    assert "Sign in" in body  # no session: to the login page, nothing done
    root = Client(secured.console_url)
    root.login("root")
    root.csrf("/queues/orders.keep")
    status, body = root.post(f"/queues/orders.keep/{action}", {**fields, "csrf": "forged"})
    assert status == 403 and "CSRF" in body
    status, body = root.post(f"/queues/orders.keep/{action}", fields)  # no token at all
    assert status == 403 and "CSRF" in body
    bob = Client(secured.console_url)
    bob.login("bob")
    token = bob.csrf("/queues/orders.keep")  # bob may look (browse on orders.#) ...
    status, body = bob.post(f"/queues/orders.keep/{action}", {**fields, "csrf": token})
    assert status == 403 and "may not manage" in body and "bob" in body  # ... and is told why not
    assert _depth(root, "orders.keep") == 2


def test_a_reader_sees_only_what_it_may_browse(secured: Any) -> None:
    _send(secured, "orders.eu", 1)
    _send(secured, "payroll", 1)
    bob = Client(secured.console_url)
    bob.login("bob")
    status, body = bob.get("/queues")
    assert "orders.eu" in body and "payroll" not in body
    status, body = bob.get("/queues/payroll")
    assert status == 403 and "may not" in body


def test_a_broker_without_users_shows_a_read_only_console(broker_factory: Any) -> None:
    b = broker_factory(console=True, metrics="127.0.0.1:0")
    _send(b, "q", 2)
    c = Client(b.console_url)
    status, body = c.get("/queues/q")
    assert status == 200 and "Read-only" in body and "order 1" in body
    token = re.search(r'name="csrf" value="([^"]+)"', body)
    assert token
    status, body = c.post("/queues/q/purge", {"csrf": token.group(1), "confirmed": "yes"})
    assert status == 403 and "read-only" in body
    assert _depth(c, "q") == 2


def test_hostile_http_clients_do_not_slow_the_amqp_side(secured: Any) -> None:
    """A huge header is answered 431; then slow clients trickling their request a byte at a time
    and many connections (more than the listener keeps waiting) at once on the console's
    listener: the AMQP listener keeps answering sends and receives as quickly as before."""
    host, port = urllib.parse.urlsplit(secured.console_url).netloc.split(":")
    amqp = secured.url.replace("amqp://", "amqp://root:r-pw@")
    baseline = min(round_trip(amqp) for _ in range(3))
    huge = socket.create_connection((host, int(port)))
    huge.sendall(b"GET / HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n")
    answer, _ = drain(huge, 10)
    huge.close()
    assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
    stop = threading.Event()

    def trickle() -> None:
        with socket.create_connection((host, int(port))) as s:
            for byte in b"GET /queues HTTP/1.1\r\nHost: x\r\n" * 10:
                if stop.wait(0.2):
                    return
                try:
                    s.sendall(bytes([byte]))
                except OSError:
                    return  # cut by the listener (its request timeout): as it should be

    slow = [threading.Thread(target=trickle, daemon=True) for _ in range(5)]
    for t in slow:
        t.start()
    time.sleep(0.5)  # the slow ones connected first: then more silent sockets than are kept waiting
    silent = [socket.create_connection((host, int(port))) for _ in range(100)]
    try:
        trips = [round_trip(amqp) for _ in range(5)]
        assert max(trips) < max(2.0, 20 * baseline), (baseline, trips)
        t = time.monotonic()
        _send(secured, "orders.fast", 20)
        with ConnectionFactory(secured.url, username="root", password="r-pw").create_connection() as conn:
            conn.start()
            consumer = conn.create_session().create_consumer(Queue("orders.fast"))
            assert all(consumer.receive(5000) is not None for _ in range(20))
        assert time.monotonic() - t < 5
    finally:
        stop.set()
        for s in silent:
            s.close()
        for t in slow:
            t.join(5)


def test_a_broker_from_its_configuration_file_signs_in_with_scram_hashed_passwords(tmp_path: Any) -> None:
    """``[listener] console = true`` and ``[users.<name>]`` passwords stored as SCRAM hashes, as
    docs/broker.md's example writes them: the console checks a password against the hash."""
    from amqp_jms.broker import Broker
    from amqp_jms.broker.operations.config import load_config
    from amqp_jms.broker.protocol.scram import hash_password

    cfg = tmp_path / "broker.toml"
    cfg.write_text(f"""
[listener]
port = 0
metrics = "127.0.0.1:0"
console = true

[users.ops]
password = "{hash_password('ops-pw', iterations=4096)}"
roles = ["admin"]

[[permissions]]
match = "#"
send = ["admin"]
consume = ["admin"]
browse = ["admin"]
manage = ["admin"]
""")
    with Broker(**load_config(str(cfg)).broker_options()) as b:
        c = Client(b.console_url)
        assert c.post("/login", {"user": "ops", "password": "wrong"})[0] == 401
        status, body = c.post("/login", {"user": "ops", "password": "ops-pw", "next": "/queues"})
        assert status == 200 and "<h1>Queues</h1>" in body
