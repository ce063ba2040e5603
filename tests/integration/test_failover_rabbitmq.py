"""Failover against RabbitMQ 3.10's AMQP 1.0 plugin restarted under a client (issue 17): a
private RabbitMQ on a fixed port, stopped and started again, while a consumer and a producer
hold a `failover:` connection to it."""

from __future__ import annotations

import socket
import time

import pytest

from amqp_jms import ConnectionFactory, JMSException, Queue
from amqp_jms.testing import rabbitmq

pytestmark = pytest.mark.rabbitmq


def test_rabbitmq_restarted_under_a_client() -> None:
    reason = rabbitmq.unavailable_reason()
    if reason is not None:
        pytest.skip(f"RabbitMQ unavailable: {reason}")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rmq = rabbitmq.RabbitMQ(port).start()
    errors: list[JMSException] = []
    try:
        url = (f"failover:(amqp://127.0.0.1:{port})?failover.reconnectDelay=100"
               "&failover.maxReconnectDelay=500&jms.sendTimeout=60000")
        with ConnectionFactory(url).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.start()
            s = conn.create_session()
            q = Queue("/queue/fo-rmq")
            c = s.create_consumer(q)
            p = s.create_producer(q)
            p.send(s.create_text_message("before"))
            assert c.receive(5000).get_text() == "before"
            rmq.stop()
            t0 = time.monotonic()
            rmq.start()  # the same port, an empty broker: the consumer's re-attach declares the queue
            p.send(s.create_text_message("after"))  # waited for the reconnect, then sent
            m = c.receive(10000)
            assert m is not None and m.get_text() == "after", time.monotonic() - t0
        assert errors == []
    finally:
        rmq.stop()
