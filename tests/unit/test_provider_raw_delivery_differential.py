"""The provider reads deliveries two ways: straight from proton-c (``on_delivery_raw``, the fast
path every consumer and producer link takes) and through proton's ``Delivery`` wrapper
(``on_delivery``, what remains when a link declines the raw path). The benchmarks justify the
pair; this test pins it: the same generated session (sends, synchronous and asynchronous;
receives, acknowledgements, recovers, commits and rollbacks in the three acknowledgement modes)
against the embedded broker gives the same trace both ways.

The wrapped path is selected by giving the consumer and producer links the base ``AmqpLink``
hook back (it declines, so every delivery comes again through ``on_delivery``, counted to show it ran);
no provider code changes for the test.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqp_jms import ConnectionFactory, Queue, Session
from amqp_jms.provider.amqp.consumer import AmqpConsumer
from amqp_jms.provider.amqp.link import AmqpLink
from amqp_jms.provider.amqp.producer import AmqpProducer

MODES = [Session.AUTO_ACKNOWLEDGE, Session.CLIENT_ACKNOWLEDGE, Session.SESSION_TRANSACTED]
_names = itertools.count()


@pytest.fixture(scope="module")
def broker_url() -> Iterator[str]:
    from amqp_jms.broker import Broker

    with Broker(port=0) as b:
        yield b.url


@contextmanager
def deliveries(wrapped: bool) -> Iterator[list[int]]:
    """Deliveries through proton's wrapper (``on_delivery``) when ``wrapped``, else the raw path;
    yields the count of wrapped consumer deliveries, to show which path ran."""
    saved = AmqpConsumer.on_delivery_raw, AmqpProducer.on_delivery_raw, AmqpConsumer.on_delivery
    calls = [0]

    def counted(self: AmqpConsumer, delivery: Any) -> None:
        calls[0] += 1
        saved[2](self, delivery)

    AmqpConsumer.on_delivery = counted  # type: ignore[method-assign]
    if wrapped:
        AmqpConsumer.on_delivery_raw = AmqpLink.on_delivery_raw  # type: ignore[method-assign]
        AmqpProducer.on_delivery_raw = AmqpLink.on_delivery_raw  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        AmqpConsumer.on_delivery_raw, AmqpProducer.on_delivery_raw, AmqpConsumer.on_delivery = saved  # type: ignore[method-assign]


def run_session(url: str, queue: str, mode: int, sends: list[bool], actions: list[str]) -> list[Any]:
    """Send, then play ``actions`` on one consumer; the trace of what the client saw.

    A receive is only asked for when a message must be there (counted from the actions), so
    the trace never depends on a timeout; at the end a fresh consumer drains what is left."""
    trace: list[Any] = []
    q = Queue(queue)
    with ConnectionFactory(url + "?jms.requestTimeout=10000").create_connection() as conn:
        s = conn.create_session(mode == Session.SESSION_TRANSACTED, mode)
        p = s.create_producer(q)
        done = threading.Event()
        outcomes: list[Any] = []

        def listener(message: Any, exc: Exception | None) -> None:
            outcomes.append((message.get_text(), exc))
            if len(outcomes) == sum(sends):
                done.set()

        for i, use_listener in enumerate(sends):
            m = s.create_text_message(f"m{i}")
            m.set_int_property("n", i)
            if use_listener:
                p.send(m, completion_listener=listener)
            else:
                p.send(m)
        if any(sends):
            assert done.wait(10)
        if mode == Session.SESSION_TRANSACTED:
            s.commit()
        trace.append(("sent", sorted(outcomes, key=str)))
        c = s.create_consumer(q)
        conn.start()
        left, outstanding = len(sends), 0  # in the queue (counting ours), delivered but not settled
        for action in actions:
            if action == "receive":
                if left - outstanding == 0:
                    continue
                got: Any = c.receive(10_000)
                assert got is not None
                trace.append((got.get_text(), got.get_int_property("n"), got.get_jms_redelivered()))
                if mode == Session.AUTO_ACKNOWLEDGE:
                    left -= 1
                else:
                    outstanding += 1
            elif action == "settle" and mode != Session.AUTO_ACKNOWLEDGE:
                if mode == Session.SESSION_TRANSACTED:
                    s.commit()
                else:
                    s.acknowledge()
                left, outstanding = left - outstanding, 0
                trace.append("settled")
            elif action == "undo" and mode != Session.AUTO_ACKNOWLEDGE:
                if mode == Session.SESSION_TRANSACTED:
                    s.rollback()
                else:
                    s.recover()
                outstanding = 0
                trace.append("undone")
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session(False, Session.AUTO_ACKNOWLEDGE)
        c = s.create_consumer(q)
        conn.start()
        rest: list[str] = []
        for _ in range(left):
            got = c.receive(10_000)
            assert got is not None
            rest.append(got.get_text())
        assert c.receive(100) is None
        trace.append(("left", sorted(rest)))
    return trace


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(MODES),
    st.lists(st.booleans(), min_size=1, max_size=4),
    st.lists(st.sampled_from(["receive", "receive", "settle", "undo"]), max_size=8),
)
def test_raw_and_wrapped_delivery_handling_give_the_same_trace(
    broker_url: str, mode: int, sends: list[bool], actions: list[str]
) -> None:
    with deliveries(wrapped=False) as calls:
        raw = run_session(broker_url, f"raw-vs-wrapped-{next(_names)}", mode, sends, actions)
    assert calls == [0]
    with deliveries(wrapped=True) as calls:
        wrapped = run_session(broker_url, f"raw-vs-wrapped-{next(_names)}", mode, sends, actions)
    assert calls[0] >= len(sends)  # at least the final drain went through the wrapper
    assert wrapped == raw
