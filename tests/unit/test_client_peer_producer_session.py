"""Producer and session conventions frame by frame, as Qpid JMS's ProducerIntegrationTest and
SessionIntegrationTest check them (docs/qpid-jms-parity.md): the header a send writes for each
persistence/priority/time-to-live choice, the terminus capability for every destination kind in
both directions, and per-destination fallback links carrying it when the peer has no relay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Link

from amqp_jms import ConnectionFactory, DeliveryMode, InvalidDestinationException, JMSException, Queue, Topic
from amqp_jms.client import Connection
from amqp_jms.mapping.codec import decode_sections
from amqp_jms.testing.peer import Attach, TestPeer, Transfer, _Expect
from amqp_jms.types import UByte, UInt

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def _conn(peer: TestPeer, caps: list[str], options: str = "") -> Connection:
    peer.expect_open(offered_capabilities=caps)
    peer.expect_begin()
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def test_header_follows_persistence_priority_and_ttl(peer: TestPeer) -> None:
    got: list[Transfer] = []
    with _conn(peer, ["ANONYMOUS-RELAY"]) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        for _ in range(5):
            peer.expect_transfer(got.append)
        p = s.create_producer(Queue("q"))
        p.send(s.create_message())  # defaults: PERSISTENT, priority 4, no ttl
        p.send(s.create_message(), DeliveryMode.NON_PERSISTENT, 4, 0)
        p.send(s.create_message(), DeliveryMode.NON_PERSISTENT, 7, 0)
        p.set_time_to_live(60000)
        m = s.create_message()
        m.set_long_property("JMS_AMQP_TTL", 5000)  # overrides the header ttl only
        p.send(m)
        zero = s.create_message()
        zero.set_long_property("JMS_AMQP_TTL", 0)  # no header ttl at all
        p.send(zero)
        peer.wait()
    headers = [decode_sections(t.payload).header for t in got]
    assert headers[0] is not None and headers[0].durable is True and headers[0].priority == 4
    assert headers[1] is None  # non-persistent at the default priority: no header section
    assert headers[2] is not None and headers[2].durable is False
    assert type(headers[2].priority) is UByte and headers[2].priority == 7
    assert headers[3] is not None and type(headers[3].ttl) is UInt and headers[3].ttl == 5000
    assert headers[4] is not None and headers[4].ttl is None
    props = [decode_sections(t.payload).properties for t in got]
    assert props[3] is not None and props[3].absolute_expiry_time == m.get_jms_expiration()  # producer ttl
    assert props[0] is not None and props[0].absolute_expiry_time is None


def _answer_dynamic(peer: TestPeer, address: str) -> None:
    def respond(c: Any, link: Link) -> None:
        link.source.copy(link.remote_source)
        link.target.copy(link.remote_target)
        link.target.address = address
        link.open()

    peer._add(_Expect("attach", None, respond, label="dynamic attach"))


def test_every_destination_kind_carries_its_capability_both_ways(peer: TestPeer) -> None:
    seen: list[Attach] = []
    with _conn(peer, ["ANONYMOUS-RELAY"]) as conn:
        s = conn.create_session()
        peer.expect_begin()
        _answer_dynamic(peer, "tq-1")
        _answer_dynamic(peer, "tt-1")
        tq, tt = s.create_temporary_queue(), s.create_temporary_topic()
        peer.wait()
        for _ in range(4):
            peer.expect_attach(seen.append)
        for _ in range(4):
            peer.expect_attach(seen.append)
            peer.expect_flow()
        for d in (Queue("q"), Topic("t"), tq, tt):
            s.create_producer(d)
        for d in (Queue("q"), Topic("t"), tq, tt):
            s.create_consumer(d)
        peer.wait()
    kinds = [("queue",), ("topic",), ("temporary-queue",), ("temporary-topic",)]
    assert [a.target_capabilities for a in seen[:4]] == kinds
    assert [a.source_capabilities for a in seen[4:]] == kinds
    assert [a.target_address for a in seen[:4]] == ["q", "t", "tq-1", "tt-1"]


def test_fallback_links_without_relay_carry_the_destination_capability(peer: TestPeer) -> None:
    seen: list[Attach] = []
    with _conn(peer, [], "&amqp.anonymousFallbackCacheSize=0") as conn:
        s = conn.create_session()
        p = s.create_producer(None)
        for _ in range(2):
            peer.expect_attach(seen.append, offer=10)
            peer.expect_transfer()
            peer.expect_detach()  # no cache: each fallback link closes after its send
        p.send(Queue("a"), s.create_message())
        p.send(Topic("b"), s.create_message())
        peer.wait()
    assert [(a.target_address, a.target_capabilities) for a in seen] == [("a", ("queue",)), ("b", ("topic",))]


@pytest.mark.parametrize(("options", "expected"), [("", 1048576), ("&amqp.maxFrameSize=512", 512)])
def test_max_frame_size_option_goes_in_the_open(peer: TestPeer, options: str, expected: int) -> None:
    seen: list[Any] = []
    peer.expect_open(seen.append)
    peer.expect_begin()
    with ConnectionFactory(peer.url + FAST + options).create_connection() as conn:
        conn.create_session()
        peer.wait()
    assert seen[0].max_frame_size == expected


def test_unanswered_temporary_delete_and_session_close_time_out(peer: TestPeer) -> None:
    """A peer that never answers the detach of a temporary destination, or the end of a session,
    costs ``jms.closeTimeout`` and a JMSException naming the wait, never a hang."""
    with _conn(peer, ["ANONYMOUS-RELAY"], "&jms.closeTimeout=500") as conn:
        s = conn.create_session()
        peer.expect_begin()
        _answer_dynamic(peer, "tq-1")
        tq = s.create_temporary_queue()
        peer.wait()
        peer.expect_detach(respond=False)
        start = time.monotonic()
        with pytest.raises(JMSException, match="timed out"):
            tq.delete()
        peer.expect_end(respond=False)
        with pytest.raises(JMSException, match="timed out"):
            s.close()
        assert time.monotonic() - start < 4


def test_unanswered_end_fails_the_providers_close_whoever_waits_longer(peer: TestPeer) -> None:
    """The provider reports an end the peer never answered, whatever the caller's own wait: it
    used to swallow it, so ``Session.close`` raised only when the caller's wait (also
    ``jms.closeTimeout``) happened to wake before the I/O thread's, and otherwise returned quietly
    after the whole wait (1-2 closes in 20 on the project's machine, whether or not
    tests/integration/test_cli_demo.py had run before in the same process)."""
    with _conn(peer, ["ANONYMOUS-RELAY"], "&jms.closeTimeout=300") as conn:
        s = conn.create_session()
        peer.wait()
        peer.expect_end(respond=False)
        closing = s.internal.provider_session.close()
        with pytest.raises(JMSException, match=r"after 0\.3 s waiting for the peer to end the session"):
            closing.result(10)  # far longer than the provider's own wait: only it can decide


def test_a_close_the_caller_stopped_waiting_for_still_ends_the_session(peer: TestPeer) -> None:
    """``Session.close`` waits ``jms.closeTimeout`` in all; the provider's steps each have their
    own. When the peer sits on a link's detach, the caller's wait ends first and raises, and the
    provider still carries on to the End (it used to be cancelled mid-close, so the session
    stayed open at the peer for the connection's life)."""
    with _conn(peer, ["ANONYMOUS-RELAY"], "&jms.closeTimeout=300") as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        s.create_producer(Queue("q"))
        peer.wait()
        peer.expect_detach(respond=False)
        peer.expect_end()
        with pytest.raises(JMSException, match="timed out"):
            s.close()
        peer.wait()  # the End arrives once the detach's own wait is over


def test_refused_fallback_link_fails_that_send_and_the_next_send_tries_again(peer: TestPeer) -> None:
    seen: list[Attach] = []
    with _conn(peer, [], "&amqp.anonymousFallbackCacheSize=1") as conn:
        s = conn.create_session()
        p = s.create_producer(None)
        peer.expect_attach(seen.append, refuse=("amqp:not-found", "no such queue"))
        with pytest.raises(InvalidDestinationException, match="no such queue"):
            p.send(Queue("a"), s.create_message())
        peer.wait()
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer()
        p.send(Queue("a"), s.create_message())
        peer.wait()
    assert [a.target_address for a in seen] == ["a", "a"]
