"""Costly selectors (issue 26): limits on length and term count refused at attach naming the
limit, the compile paid at attach within those limits, chains over one property as one set
lookup, and thirty consumers with the largest allowed selectors not stalling anyone else."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from hostile_helpers import BrokerProcess, round_trip
from proton import Message
from proton.utils import BlockingConnection
from test_broker_peer import Selector as SelectorOption

from amqp_jms import ConnectionFactory, Queue, ResourceAllocationException
from amqp_jms.broker.limits import BrokerLimits


def _refused(url: str, selector: str) -> ResourceAllocationException:
    with ConnectionFactory(url).create_connection() as conn:
        session = conn.create_session()
        with pytest.raises(ResourceAllocationException) as err:
            session.create_consumer(Queue("costly"), selector)
        assert err.value.error_code == "amqp:resource-limit-exceeded"
        session.create_consumer(Queue("costly"), "a = 1")  # the connection carries on
        return err.value


def test_a_selector_longer_than_max_selector_length_is_refused_naming_the_limit(broker: Any) -> None:
    selector = "a = '" + "x" * 20_000 + "'"
    err = _refused(broker.url, selector)
    assert "20006 characters long" in str(err) and "max_selector_length = 16384" in str(err)
    assert "x" * 200 not in str(err)  # the selector is not echoed


def test_a_selector_with_more_terms_than_max_selector_terms_is_refused_naming_the_limit(broker: Any) -> None:
    selector = " OR ".join(f"a = {i % 10}" for i in range(1500))  # 13.5 KB: under the length limit
    err = _refused(broker.url, selector)
    assert "combines 1500 conditions" in str(err) and "max_selector_terms = 1000" in str(err)


def test_the_selector_limits_can_be_raised_or_lifted(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(max_selector_length=0, max_selector_terms=0))
    selector = " OR ".join(f"id = 'v-{i}'" for i in range(3000))  # 45 KB, one set lookup
    with ConnectionFactory(b.url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        consumer = session.create_consumer(Queue("lifted"), selector)
        producer = session.create_producer(Queue("lifted"))
        for value in ("nope", "v-2999"):
            m = session.create_text_message(value)
            m.set_string_property("id", value)
            producer.send(m)
        got = consumer.receive(5000)
        assert got is not None and got.get_text() == "v-2999"
        assert consumer.receive_no_wait() is None


def test_thirty_consumers_with_the_largest_allowed_selectors_do_not_stall_the_broker() -> None:
    """The issue's attack within the default limits: 30 consumers on one queue, each with a
    selector of 900 terms over different properties (just under 16 KB), and 100 messages none
    of them matches. The broker (a subprocess) keeps answering an innocent client quickly while
    it works, and its memory stays bounded; the attach of each costly consumer is paid once."""
    proc = BrokerProcess()
    selector = " OR ".join(f"p{i} = 'v{i}'" for i in range(900))
    conn = BlockingConnection(proc.url, timeout=30)
    try:
        base = proc.rss_mb()
        started = time.monotonic()
        for i in range(30):
            options = SelectorOption(selector)
            conn.create_receiver("stalled-work", name=f"costly-{i}", credit=10, options=options)
        attach_s = time.monotonic() - started
        sender = conn.create_sender("stalled-work")
        done = threading.Event()

        def flood() -> None:
            for n in range(100):
                sender.send(Message(body="x", properties={"p0": f"no-{n}"}))
            done.set()

        worst = 0.0
        flooder = threading.Thread(target=flood, daemon=True)
        flooder.start()
        while not done.is_set():
            worst = max(worst, round_trip(proc.url))
        flooder.join(60)
        worst = max(worst, round_trip(proc.url))
        assert worst < 2.5, f"an innocent round trip took {worst:.2f} s"  # 0.3-0.5 s idle here
        assert attach_s < 20, f"30 attaches took {attach_s:.1f} s"
        assert proc.rss_mb() - base < 150
    finally:
        conn.close()
        proc.stop()


def test_a_selector_attach_larger_than_max_frame_size_is_refused_naming_the_limit(broker: Any) -> None:
    """A client that does not check the broker's max-frame-size (the amqp-jms client does, and
    refuses before sending) sends an Attach bigger than it: the broker closes the connection, as
    AMQP requires, but says why instead of "malformed frame"."""
    import socket

    from hostile_helpers import read_until
    from test_broker_peer import AMQP_HEADER, ATTACH, BEGIN, CLOSE, OPEN, frame

    from amqp_jms.types import Described, Symbol, UByte, UInt, ULong

    host, port = broker.url.rsplit("/", 1)[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    try:
        sock.sendall(AMQP_HEADER + frame(OPEN, ["big"]) + frame(BEGIN, [None, UInt(0), UInt(64), UInt(64)]))
        read_until(sock, BEGIN)
        selector = " OR ".join(f"id = 'value-{i}'" for i in range(6000))  # ~110 KB
        filters = {Symbol("jms-selector"): Described(ULong(0x0000468C00000004), selector)}
        source = Described(ULong(0x28), ["q", None, None, None, None, None, None, filters])
        target = Described(ULong(0x29), [])
        sock.sendall(frame(ATTACH, ["big", UInt(0), True, UByte(0), UByte(0), source, target]))
        close = next(f for code, _, f in read_until(sock, CLOSE) if code == CLOSE)
        condition, description = close[0].value[0], close[0].value[1]
        assert condition == Symbol("amqp:connection:framing-error")
        assert "larger than the broker's max-frame-size of 65536" in description
    finally:
        sock.close()
    assert round_trip(broker.url) < 2.0
