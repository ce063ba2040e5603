"""Temporary destinations, request/reply, anonymous producers and browsers on the embedded broker."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    InvalidDestinationException,
    InvalidSelectorException,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
)
from amqp_jms.client.requestor import QueueRequestor, TopicRequestor

ROOT = Path(__file__).resolve().parents[2]


def _serve_once(url: str, queue: Queue, ready: threading.Event) -> None:
    with ConnectionFactory(url).create_connection() as c:
        c.start()
        s = c.create_session()
        cons = s.create_consumer(queue)
        anon = s.create_producer(None)
        ready.set()
        req = cons.receive(5000)
        assert req is not None
        reply = s.create_text_message(str(req.get_body(str)).upper())
        reply.set_jms_correlation_id(req.get_jms_message_id())
        anon.send(req.get_jms_reply_to(), reply)


def test_temporary_queue_request_reply(broker: Any) -> None:
    q = Queue("service")
    ready = threading.Event()
    t = threading.Thread(target=_serve_once, args=(broker.url, q, ready))
    t.start()
    ready.wait(5)
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        req = QueueRequestor(s, q)
        assert isinstance(req.reply_to, TemporaryQueue) and req.reply_to.name
        msg = s.create_text_message("hello")
        reply = req.request(msg, 5000)
        assert reply is not None and reply.get_body(str) == "HELLO"
        assert reply.get_jms_correlation_id() == msg.get_jms_message_id()
        assert reply.get_jms_destination() == req.reply_to
        req.close()
    t.join(5)


def test_topic_requestor(broker: Any) -> None:
    topic = Topic("svc-topic")
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        server = s.create_consumer(topic)
        anon = s.create_producer(None)

        def on_request(m: Any) -> None:
            anon.send(m.get_jms_reply_to(), s.create_text_message("pong"))

        s2 = c.create_session()
        server.set_message_listener(on_request)
        with TopicRequestor(s2, topic) as req:
            assert isinstance(req.reply_to, TemporaryTopic)
            reply = req.request(s2.create_text_message("ping"), 5000)
            assert reply is not None and reply.get_body(str) == "pong"


def test_temporary_queue_owner_rules(broker: Any) -> None:
    f = ConnectionFactory(broker.url)
    with f.create_connection() as c1, f.create_connection() as c2:
        s1 = c1.create_session()
        tq = s1.create_temporary_queue()
        s2 = c2.create_session()
        with pytest.raises(InvalidDestinationException, match="only the connection"):
            s2.create_consumer(TemporaryQueue(tq.name))  # e.g. a JMSReplyTo it received
        s2.create_producer(TemporaryQueue(tq.name)).send(s2.create_text_message("to temp"))
        c1.start()
        cons = s1.create_consumer(tq)
        m = cons.receive(2000)
        assert m is not None and m.get_body(str) == "to temp"
        with pytest.raises(IllegalStateException, match="active consumer"):
            tq.delete()
        cons.close()
        tq.delete()
        assert tq.deleted
        with pytest.raises(InvalidDestinationException):
            s1.create_consumer(tq)  # deleted: no longer consumable
        tt = s1.create_temporary_topic()
        assert isinstance(tt, TemporaryTopic) and tt.name != tq.name


def test_temporary_queue_is_deleted_with_its_connection(broker: Any) -> None:
    f = ConnectionFactory(broker.url)
    with f.create_connection() as c1:
        name = c1.create_session().create_temporary_queue().name
    with f.create_connection() as c2:
        s = c2.create_session()
        with pytest.raises(Exception, match=r"not-found|does not exist"):
            s.create_producer(TemporaryQueue(name)).send(s.create_text_message("x"))


def test_anonymous_producer_with_relay(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        p = s.create_producer(None)
        assert p.get_destination() is None
        p.send(Queue("a1"), s.create_text_message("to a1"))
        p.send(Queue("a2"), s.create_text_message("to a2"))
        for name, text in (("a1", "to a1"), ("a2", "to a2")):
            m = s.create_consumer(Queue(name)).receive(2000)
            assert m is not None and m.get_body(str) == text
        with pytest.raises(TypeError):
            p.send(s.create_text_message("no destination"))


def test_browser_sees_messages_without_consuming(broker: Any) -> None:
    q = Queue("browse-me")
    url = broker.url + "?jms.prefetchPolicy.queueBrowserPrefetch=2"
    with ConnectionFactory(url).create_connection() as c:
        s = c.create_session()
        p = s.create_producer(q)
        for i in range(5):
            m = s.create_text_message(f"b{i}")
            m.set_int_property("n", i)
            p.send(m)
        with pytest.raises(InvalidSelectorException):
            s.create_browser(q, "n >")
        with pytest.raises(InvalidDestinationException):
            s.create_browser(Topic("t"))  # type: ignore[arg-type]
        with s.create_browser(q) as browser:
            assert browser.get_queue() == q
            assert [m.get_body(str) for m in browser] == [f"b{i}" for i in range(5)]
            assert [m.get_body(str) for m in browser.get_enumeration()] == [f"b{i}" for i in range(5)]
        odd = s.create_browser(q, "n = 1 OR n = 3")
        assert [m.get_body(str) for m in odd] == ["b1", "b3"]
        assert list(s.create_browser(Queue("empty-q"))) == []
        c.start()
        cons = s.create_consumer(q)
        assert [cons.receive(1000).get_body(str) for _ in range(5)] == [f"b{i}" for i in range(5)]  # type: ignore[union-attr]


def test_request_reply_across_two_processes(broker: Any) -> None:
    """The request/reply example: a server process answers requests on a temporary queue."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "request_reply.py"), "--url", broker.url,
         "serve", "--count", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        client = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "request_reply.py"), "--url", broker.url, "request",
             "alpha", "beta", "gamma"],
            capture_output=True, text=True, timeout=60,
        )
        assert client.returncode == 0, client.stderr
        assert client.stdout.split() == ["ALPHA", "BETA", "GAMMA"]
        _out, err = server.communicate(timeout=30)
        assert server.returncode == 0, err
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
