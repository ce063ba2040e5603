"""What each console page shows, and the actions not covered by test_broker_console.py, over real
HTTP against an embedded broker (issue 30): the overview's counts and rates, the queues page's
rates, depth chart, consumers and dead-lettered count, a message page for each of the six JMS body
types and for a non-JMS body, connections and consumers with user, address, selector and credit,
durable subscriptions and their removal (confirmed, logged, refused without a session, with a
wrong token or without manage), the anonymous-actions flag, the console over TLS, and
``amqp-jms broker --console`` printing an address that serves the console.
"""

from __future__ import annotations

import logging
import re
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from console_helpers import RULES, USERS, Client
from proton import Message as ProtonMessage
from proton.utils import BlockingConnection

from amqp_jms import ConnectionFactory, Queue, Topic


def _factory(broker: Any, user: str = "root") -> ConnectionFactory:
    return ConnectionFactory(broker.url, username=user, password=USERS[user])


def _cells(body: str, first: str) -> list[str]:
    """The text of each cell of the table row whose first cell reads ``first``."""
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in {body}")


def _card(body: str, label: str) -> str:
    m = re.search(rf"<b>([^<]*)</b><span>{re.escape(label)}</span>", body)
    assert m, f"no card {label!r} in {body}"
    return m.group(1)


@pytest.fixture
def secured(broker_factory: Any) -> Any:
    return broker_factory(users=USERS, authorization=RULES, console=True, metrics="127.0.0.1:0")


def test_overview_and_queues_show_counts_rates_history_consumers_and_dead_letters(secured: Any) -> None:
    c = Client(secured.console_url)
    c.login("root")
    with _factory(secured).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        p = s.create_producer(None)
        consumer = s.create_consumer(Queue("orders.busy"))  # one consumer on orders.busy
        p.send(Queue("orders.rate"), s.create_text_message("m0"))  # the queue exists from here on
        time.sleep(1.1)  # the history samples at most once a second (signing in took one)
        c.get("/queues")  # the first sample of its rate history
        time.sleep(1.1)  # the history samples at most once a second
        for i in range(1, 30):
            p.send(Queue("orders.rate"), s.create_text_message(f"m{i}"))
        deadline = time.monotonic() + 10
        while True:
            time.sleep(1.1)
            status, body = c.get("/queues")
            assert status == 200
            rate = _cells(body, "orders.rate")
            # queue, kind, depth, in/s, out/s, depth chart, consumers, dead-lettered
            if (float(rate[3]) > 0 and "<svg" in body) or time.monotonic() > deadline:
                break
        assert float(rate[3]) > 0, rate  # messages per second in, from two samples
        assert re.search(r'orders\.rate</a>.*?<svg class="spark"', body, re.S)  # depth history chart
        assert _cells(body, "orders.busy")[6] == "1"  # its consumer
        # a message its consumer rejects is dead-lettered: counted on the queue it was on
        p.send(Queue("orders.poison"), s.create_text_message("poison"))
        raw = BlockingConnection(secured.url.replace("amqp://", "amqp://root:r-pw@"), timeout=10)
        try:
            r = raw.create_receiver("orders.poison", credit=1)
            r.receive(timeout=10)
            r.reject()
        finally:
            raw.close()
        deadline = time.monotonic() + 10
        while _cells(c.get("/queues")[1], "orders.poison")[7] != "1" and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _cells(c.get("/queues")[1], "orders.poison")[7] == "1"  # dead-lettered

        status, body = c.get("/")
        assert status == 200
        assert int(_card(body, "connections")) >= 1
        assert int(_card(body, "queues")) >= 2
        assert int(_card(body, "messages waiting")) >= 30
        assert int(_card(body, "dead-lettered")) >= 1
        assert "in / s" in body and "out / s" in body
        assert _cells(body, "orders.rate")[1] == "30"  # the deepest queues, with their depth
        consumer.close()


def test_a_queue_page_previews_each_jms_body_type_and_a_non_jms_body(secured: Any) -> None:
    with _factory(secured).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("orders.kinds"))
        p.send(s.create_text_message("hello text"))
        b = s.create_bytes_message()
        b.write_bytes(b"\x01\x02\xfe")
        p.send(b)
        m = s.create_map_message()
        m.set_string("city", "Lyon")
        m.set_int("count", 7)
        p.send(m)
        st = s.create_stream_message()
        st.write_string("first")
        st.write_boolean(True)
        p.send(st)
        p.send(s.create_object_message({"k": "object body"}))
        msg = s.create_message()
        msg.set_jms_type("bare")
        msg.set_boolean_property("flag", True)
        msg.set_double_property("ratio", 0.5)
        p.send(msg)
    raw = BlockingConnection(secured.url.replace("amqp://", "amqp://root:r-pw@"), timeout=10)
    try:
        raw.create_sender("orders.kinds").send(ProtonMessage(body=[1, "two", 3.0]))  # amqp-value list
    finally:
        raw.close()

    c = Client(secured.console_url)
    c.login("root")
    status, body = c.get("/queues/orders.kinds")
    assert status == 200, body
    kinds = re.findall(r"<b>(text|bytes|map|stream|object|message)</b><pre>(.*?)</pre>", body, re.S)
    assert [k for k, _ in kinds] == ["text", "bytes", "map", "stream", "object", "message", "object"], kinds
    previews = [v for _, v in kinds]
    assert previews[0] == "hello text"
    assert previews[1] == "01 02 fe"
    assert "city (String) = Lyon" in previews[2] and "count (int) = 7" in previews[2]
    assert previews[3] == "(String) first\n(boolean) true"
    assert "object body" in previews[4]
    assert previews[5] == ""
    assert "two" in previews[6] and "1" in previews[6]  # the non-JMS body, as the mapping reads it
    assert "type: bare" in body
    assert "flag <span class=muted>(boolean)</span> = true" in body
    assert "ratio <span class=muted>(double)</span> = 0.5" in body


def test_a_queue_page_browses_its_messages_twenty_to_a_page(secured: Any) -> None:
    with _factory(secured).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("orders.many"))
        for i in range(25):
            p.send(s.create_text_message(f"order {i}"))
    c = Client(secured.console_url)
    c.login("root")
    status, first = c.get("/queues/orders.many")
    assert status == 200
    bodies = re.findall(r"<b>text</b><pre>order (\d+)</pre>", first)
    assert bodies == [str(i) for i in range(20)]  # the oldest first, as they are delivered
    assert 'href="?offset=20"' in first and "← newer" not in first
    status, second = c.get("/queues/orders.many?offset=20")
    assert re.findall(r"<b>text</b><pre>order (\d+)</pre>", second) == [str(i) for i in range(20, 25)]
    assert 'href="?offset=0"' in second and "older →" not in second
    assert secured.metrics().queue("orders.many").depth == 25  # browsing takes nothing


def test_connections_consumers_and_subscriptions_pages(secured: Any) -> None:
    with _factory(secured).create_connection() as conn:
        conn.set_client_id("shop-1")
        conn.start()
        s = conn.create_session()
        s.create_consumer(Queue("orders.eu"), "region = 'EU'")
        sub = s.create_durable_consumer(Topic("prices"), "daily", "currency = 'EUR'")
        sub.close()
        c = Client(secured.console_url)
        c.login("root")
        status, body = c.get("/connections")
        assert status == 200
        row = _cells(body, "root")  # user, address, container, sessions, links
        assert row[1].startswith("127.0.0.1:") and row[2] == "shop-1"
        consumer = _cells(body, "orders.eu")  # reads, user, address, selector, kind, credit, delivering
        assert consumer[1] == "root" and consumer[2].startswith("127.0.0.1:")
        assert consumer[3] == "region = &#x27;EU&#x27;" and consumer[4] == "consumer"
        assert int(consumer[5]) > 0  # the credit it granted

        status, body = c.get("/subscriptions")
        assert status == 200
        row = _cells(body, "shop-1:daily")  # identity, topic, selector, durable, shared, waiting, consumers
        assert row[1] == "prices" and row[2] == "currency = &#x27;EUR&#x27;" and row[3] == "yes"
        assert row[6] == "0"


def test_removing_a_subscription_is_confirmed_logged_and_refused_without_right(
        secured: Any, caplog: pytest.LogCaptureFixture) -> None:
    with _factory(secured).create_connection() as conn:
        conn.set_client_id("shop-2")
        s = conn.create_session()
        s.create_durable_consumer(Topic("orders.prices"), "weekly").close()
        s.create_producer(Queue("orders.any"))  # a queue page bob may read, with its forms
    path = "/subscriptions/" + urllib.parse.quote("shop-2:weekly", safe="") + "/delete"

    anonymous = Client(secured.console_url)
    status, body = anonymous.post(path, {"csrf": "x", "confirmed": "yes"})
    assert "Sign in" in body  # no session: to the login page
    root = Client(secured.console_url)
    root.login("root")
    token = root.csrf("/subscriptions")
    assert root.post(path, {"csrf": "forged", "confirmed": "yes"})[0] == 403
    assert root.post(path, {"confirmed": "yes"})[0] == 403
    bob = Client(secured.console_url)
    bob.login("bob")
    status, body = bob.post(path, {"csrf": bob.csrf("/queues/orders.any"), "confirmed": "yes"})
    assert status == 403 and "bob" in body
    assert "shop-2:weekly" in root.get("/subscriptions")[1]  # still there

    status, body = root.post(path, {"csrf": token})
    assert status == 200 and "Confirm" in body and "Remove the subscription" in body
    assert "shop-2:weekly" in root.get("/subscriptions")[1]  # nothing before the confirmation
    with caplog.at_level(logging.INFO, logger="amqp_jms.broker"):
        status, body = root.post(path, {"csrf": token, "confirmed": "yes"})
    assert status == 200 and "Remove the subscription &#x27;shop-2:weekly&#x27;: done" in body
    assert "shop-2:weekly</td>" not in body
    audit = [r.getMessage() for r in caplog.records if r.name == "amqp_jms.broker.console"]
    assert any("user 'root'" in line and "shop-2:weekly" in line for line in audit), audit


@pytest.mark.parametrize("verb", ["purge", "delete"])
def test_purge_and_delete_wait_for_the_confirmation_and_are_logged(
        secured: Any, verb: str, caplog: pytest.LogCaptureFixture) -> None:
    with _factory(secured).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("orders.old"))
        for i in range(3):
            p.send(s.create_text_message(str(i)))
    c = Client(secured.console_url)
    c.login("root")
    token = c.csrf("/queues/orders.old")
    status, body = c.post(f"/queues/orders.old/{verb}", {"csrf": token})
    assert status == 200 and "Confirm" in body
    assert secured.metrics().queue("orders.old").depth == 3  # nothing done yet
    with caplog.at_level(logging.INFO, logger="amqp_jms.broker"):
        status, body = c.post(f"/queues/orders.old/{verb}", {"csrf": token, "confirmed": "yes"})
    assert status == 200 and ": done" in body
    audit = [r.getMessage() for r in caplog.records if r.name == "amqp_jms.broker.console"]
    assert any("user 'root'" in line and "orders.old" in line and re.search(r"-> 20[04] ", line)
               for line in audit), audit


def test_the_session_cookie_is_http_only_and_same_site(secured: Any) -> None:
    c = Client(secured.console_url)
    c.login("root")
    req = urllib.request.Request(secured.console_url + "login", method="POST",
                                 data=urllib.parse.urlencode({"user": "root", "password": "r-pw"}).encode())
    opener = urllib.request.build_opener(_NoRedirect())
    try:
        opener.open(req, timeout=10)
        raise AssertionError("sign-in answered without a redirect")
    except urllib.error.HTTPError as e:
        assert e.code == 303
        cookie = e.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_a_broker_without_users_acts_when_the_flag_allows_it(broker_factory: Any) -> None:
    b = broker_factory(console=True, console_allow_anonymous_actions=True, metrics="127.0.0.1:0")
    with ConnectionFactory(b.url).create_connection() as conn:
        s = conn.create_session()
        s.create_producer(Queue("q")).send(s.create_text_message("x"))
    c = Client(b.console_url)
    status, body = c.get("/queues/q")
    assert "Read-only" not in body
    token = re.search(r'name="csrf" value="([^"]+)"', body)
    assert token
    status, body = c.post("/queues/q/purge", {"csrf": token.group(1), "confirmed": "yes"})
    assert status == 200 and "done (1 messages)" in body
    assert b.metrics().queue("q").depth == 0


def test_the_console_is_served_over_tls_when_the_amqp_listener_is(broker_factory: Any,
                                                                  pki: dict[str, Path]) -> None:
    b = broker_factory(users=USERS, authorization=RULES, console=True, metrics="127.0.0.1:0",
                       tls_cert=str(pki["server"]), tls_key=str(pki["server-key"]))
    assert b.console_url.startswith("https://127.0.0.1:")
    plain = urllib.request.Request(b.console_url.replace("https://", "http://") + "login")
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(plain, timeout=10).read()
    ctx = ssl.create_default_context(cafile=str(pki["server"]))
    ctx.check_hostname = False
    c = Client(b.console_url, ctx)
    c.login("root")
    assert any(cookie.secure for cookie in c.jar)  # the session cookie is Secure over HTTPS
    status, body = c.get("/queues")
    assert status == 200 and "<h1>Queues</h1>" in body


def test_the_broker_command_prints_the_console_address_and_serves_it(tmp_path: Path) -> None:
    """What a newcomer does: ``amqp-jms broker --console``, then open the printed address."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqp_jms.cli.main", "broker", "--port", "0", "--console", "--metrics",
         "127.0.0.1:0", "--data-dir", str(tmp_path / "store")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"console on (http://127\.0\.0\.1:\d+/)", line)
        assert m, line + (proc.stderr.read() if proc.poll() is not None else "")
        with urllib.request.urlopen(m.group(1), timeout=10) as r:
            page = r.read().decode()
        assert "<h1>Overview</h1>" in page and "Read-only" in page
        assert "--console-allow-anonymous-actions" in page  # and how to allow changes
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_console_listens_on_loopback_by_default() -> None:
    from amqp_jms.broker import Broker

    assert Broker(port=0, console=True)._async.metrics_address == ("127.0.0.1", 8161)
