"""Subscriptions, temporary destinations, browsers and async sends against RabbitMQ 3.10 +
rabbitmq_amqp1_0: what it supports works, what it lacks fails at once with a clear JMSException
(and leaves the connection usable)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import (
    Connection,
    ConnectionFactory,
    JMSException,
    Queue,
    QueueRequestor,
    Topic,
)
from amqp_jms.aio import AsyncConnectionFactory
from amqp_jms.testing.rabbitmq import RabbitMQ

pytestmark = pytest.mark.rabbitmq
OPTS = "?jms.requestTimeout=5000&jms.closeTimeout=3000"


def _q() -> Queue:
    return Queue(f"/queue/c2-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def conn(rabbitmq: RabbitMQ) -> Iterator[Connection]:
    with ConnectionFactory(rabbitmq.url + OPTS + "&jms.clientID=c2-" + uuid.uuid4().hex[:6]) \
            .create_connection() as c:
        c.start()
        yield c


def _fast(fn: Any, match: str) -> None:
    t = time.monotonic()
    with pytest.raises(JMSException, match=match):
        fn()
    assert time.monotonic() - t < 2.0, "a refusal must be fast"


def test_anonymous_producer_falls_back_to_per_destination_links(conn: Connection) -> None:
    s = conn.create_session()
    a, b = _q(), _q()
    p = s.create_producer(None)  # no ANONYMOUS-RELAY offered: the link cache is used
    p.send(a, s.create_text_message("to a"))
    p.send(b, s.create_text_message("to b"))
    p.send(a, s.create_text_message("to a again"))
    ca, cb = s.create_consumer(a), s.create_consumer(b)
    assert [m.get_body(str) for m in (ca.receive(5000), ca.receive(5000))] == ["to a", "to a again"]  # type: ignore[union-attr]
    assert cb.receive(5000).get_body(str) == "to b"  # type: ignore[union-attr]


def test_async_send_with_completion_listener(conn: Connection) -> None:
    s = conn.create_session()
    q = _q()
    done: list[Any] = []
    ev = threading.Event()

    def listener(message: Any, exc: Exception | None) -> None:
        done.append(exc)
        if len(done) == 10:
            ev.set()

    p = s.create_producer(q)
    for i in range(10):
        p.send(s.create_text_message(str(i)), completion_listener=listener)
    assert ev.wait(10) and done == [None] * 10
    c = s.create_consumer(q)
    assert [c.receive(5000).get_body(str) for _ in range(10)] == [str(i) for i in range(10)]  # type: ignore[union-attr]


def test_jms_context_and_asyncio_round_trip(rabbitmq: RabbitMQ) -> None:
    q = _q()
    with ConnectionFactory(rabbitmq.url + OPTS).create_context() as ctx:
        ctx.create_producer().set_property("k", "v").send(q, "from context")
        assert ctx.create_consumer(q).receive_body(str, 5000) == "from context"

    async def main() -> str | None:
        async with await AsyncConnectionFactory(rabbitmq.url + OPTS).create_context() as actx:
            await actx.create_producer().send(q, "from asyncio")
            return await (await actx.create_consumer(q)).receive_body(str, 5000)

    assert asyncio.run(main()) == "from asyncio"


def test_topic_fan_out_through_the_context(rabbitmq: RabbitMQ) -> None:
    t = Topic(f"/topic/c2-{uuid.uuid4().hex[:8]}")
    with ConnectionFactory(rabbitmq.url + OPTS).create_context() as ctx:
        c1, c2 = ctx.create_consumer(t), ctx.create_consumer(t)
        ctx.create_producer().send(t, "all")
        assert c1.receive_body(str, 5000) == c2.receive_body(str, 5000) == "all"


def test_unsupported_features_fail_fast_and_clearly(conn: Connection) -> None:
    s = conn.create_session()
    q = _q()
    _fast(lambda: s.create_shared_consumer(Topic("/topic/x"), "sub"), "SHARED-SUBS")
    _fast(lambda: s.create_shared_durable_consumer(Topic("/topic/x"), "sub"), "SHARED-SUBS")
    _fast(lambda: s.create_durable_subscriber(Topic("/topic/x"), "sub"), "durable subscriptions")
    _fast(lambda: s.unsubscribe("sub"), "unsubscribe")
    _fast(lambda: s.create_browser(q), "browsers")
    p = s.create_producer(q)
    p.set_delivery_delay(1000)
    _fast(lambda: p.send(s.create_text_message("x")), "DELAYED_DELIVERY")
    _fast(s.create_temporary_queue, "[Dd]ynamic")
    _fast(lambda: QueueRequestor(s, q), "[Dd]ynamic")
    # the session and the connection are still usable afterwards
    p.set_delivery_delay(0)
    p.send(s.create_text_message("still fine"))
    assert s.create_consumer(q).receive(5000).get_body(str) == "still fine"  # type: ignore[union-attr]
