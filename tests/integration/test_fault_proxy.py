"""The fault-injecting proxy (amqp_jms.testing.FaultProxy) between the JMS client and the
embedded broker: each fault reaches the client the way the real network fault would.

These pin today's behaviour without failover (issue 17): a lost connection reaches the
ExceptionListener as a JMSException; failover will later turn the same faults into reconnects.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSException, Queue, TextMessage
from amqp_jms.testing import FaultProxy


@pytest.fixture
def proxy(broker: Any) -> Iterator[FaultProxy]:
    with FaultProxy(broker.port) as p:
        yield p


def _listening(url: str) -> tuple[Any, list[JMSException], threading.Event]:
    errors: list[JMSException] = []
    got = threading.Event()
    conn = ConnectionFactory(url).create_connection()
    conn.set_exception_listener(lambda e: (errors.append(e), got.set()))
    conn.start()
    return conn, errors, got


def test_messages_flow_through_the_proxy(proxy: FaultProxy) -> None:
    with ConnectionFactory(proxy.url).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        s.create_producer(Queue("via-proxy")).send(s.create_text_message("hello"))
        m = s.create_consumer(Queue("via-proxy")).receive(5000)
        assert isinstance(m, TextMessage) and m.get_text() == "hello"
        assert proxy.accepted == 1 and proxy.active == 1
    deadline = time.monotonic() + 5
    while proxy.active and time.monotonic() < deadline:  # the client's close reaches the proxy
        time.sleep(0.02)
    assert proxy.active == 0


@pytest.mark.parametrize("reset", [True, False], ids=["rst", "fin"])
def test_a_dropped_connection_reaches_the_exception_listener(proxy: FaultProxy, reset: bool) -> None:
    conn, errors, got = _listening(proxy.url)
    try:
        s = conn.create_session()
        c = s.create_consumer(Queue("dropped"))
        assert proxy.drop(reset=reset) == 1
        assert got.wait(5), "the ExceptionListener was not told the connection was lost"
        assert isinstance(errors[0], JMSException)
        with pytest.raises(JMSException):
            c.receive(1000)  # a dead connection says so, it does not hang
        with pytest.raises(JMSException):
            s.create_producer(Queue("dropped"))
    finally:
        conn.close()


def test_a_black_hole_is_noticed_by_the_idle_timeout(proxy: FaultProxy) -> None:
    # No FIN, no RST, no bytes: only the missing heartbeats can tell the client.
    conn, errors, got = _listening(proxy.url + "?amqp.idleTimeout=1000")
    try:
        conn.create_session()
        assert proxy.blackhole() == 1
        started = time.monotonic()
        assert got.wait(6), "a silent connection was never declared dead"
        assert time.monotonic() - started >= 0.5  # it was the timeout, not a close
        assert isinstance(errors[0], JMSException)
        # (the proxy closes nothing while black-holing; whether it has yet seen the client's own
        # close of the dead socket is a race, so its count of open connections is not asserted)
    finally:
        conn.close()


def test_a_refusing_proxy_fails_connect_with_a_typed_error_and_accepts_again(proxy: FaultProxy) -> None:
    proxy.refuse()
    conn = ConnectionFactory(proxy.url + "?jms.connectTimeout=3000").create_connection()
    with pytest.raises(JMSException, match="could not connect") as info:
        conn.start()  # the client connects lazily, as Qpid JMS does
    conn.close()
    assert isinstance(info.value.linked_exception, ConnectionRefusedError)
    assert proxy.accepted == 0
    proxy.accept()
    with ConnectionFactory(proxy.url).create_connection() as conn:
        conn.create_session()
    assert proxy.accepted == 1


def test_refusing_leaves_open_connections_working(proxy: FaultProxy) -> None:
    with ConnectionFactory(proxy.url).create_connection() as conn:
        conn.start()
        proxy.refuse()
        s = conn.create_session()
        s.create_producer(Queue("still")).send(s.create_text_message("x"))
        assert s.create_consumer(Queue("still")).receive(5000) is not None


def test_delay_slows_every_round_trip_and_keeps_order(proxy: FaultProxy) -> None:
    with ConnectionFactory(proxy.url).create_connection() as conn:
        conn.start()
        s = conn.create_session()
        p = s.create_producer(Queue("slow"))
        c = s.create_consumer(Queue("slow"))
        proxy.delay(0.15)
        started = time.monotonic()
        for i in range(5):
            p.send(s.create_text_message(f"m{i}"))  # persistent: each waits for its outcome
        assert time.monotonic() - started >= 5 * 0.15 * 2 * 0.9  # out and back, per send
        proxy.delay(0)
        got = [c.receive(5000) for _ in range(5)]
        assert [m.get_text() for m in got if isinstance(m, TextMessage)] == [f"m{i}" for i in range(5)]


def test_a_proxy_whose_broker_is_gone_closes_new_connections(broker_factory: Any) -> None:
    # As behind a load balancer whose backend died: TCP connects, then the connection closes.
    b = broker_factory()
    with FaultProxy(b.port) as proxy:
        b.__exit__(None, None, None)
        conn = ConnectionFactory(proxy.url + "?jms.connectTimeout=3000").create_connection()
        started = time.monotonic()
        with pytest.raises(JMSException):
            conn.start()
        assert time.monotonic() - started < 3  # the close is seen at once, not at the timeout
        conn.close()
        assert proxy.accepted == 1 and proxy.active == 0


def test_a_silenced_target_serves_requests_and_its_answers_are_lost(broker: Any, proxy: FaultProxy) -> None:
    """``silence_target``: the send reaches the broker (the message is on the queue) but its
    outcome never comes back, and the proxy keeps what it dropped for a test to wait on."""
    url = f"{proxy.url}?jms.sendTimeout=500&jms.closeTimeout=500"
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("silenced"))
        assert proxy.silence_target() == 1
        with pytest.raises(JMSException):
            p.send(s.create_text_message("served"))  # persistent: waits for an outcome lost
        assert proxy.dropped  # the broker's answer, read and not forwarded
    with ConnectionFactory(broker.url).create_connection() as direct:
        direct.start()
        m = direct.create_session().create_consumer(Queue("silenced")).receive(5000)
        assert isinstance(m, TextMessage) and m.get_text() == "served"
