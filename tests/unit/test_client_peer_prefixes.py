"""Prefix addressing frame by frame (Qpid JMS's behaviour against ActiveMQ and Artemis, whose Open
offers ``queue-prefix``/``topic-prefix`` and which decide a node's type by the address prefix):
every link address and ``to``/``reply-to`` carries the prefix of its kind, arriving addresses
lose it, temporary destinations keep the address the broker gave them, nothing is prefixed twice.
A peer offering no prefixes sees bare names, and the ``jms.queuePrefix``/``jms.topicPrefix``
options win over what the peer offers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from proton import Link, byte
from proton import Message as PMessage

from amqp_jms import ConnectionFactory, Queue, TemporaryQueue, Topic
from amqp_jms.client import Connection
from amqp_jms.testing.peer import Attach, TestPeer, Transfer, _Expect

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
CAPS = ["ANONYMOUS-RELAY", "SHARED-SUBS", "DELAYED_DELIVERY"]
ACTIVEMQ = {"queue-prefix": "queue://", "topic-prefix": "topic://"}


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def _open(peer: TestPeer, properties: dict[str, Any] | None, options: str = "") -> Connection:
    peer.expect_open(offered_capabilities=CAPS, properties=properties)
    peer.expect_begin()
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _expect_dynamic(peer: TestPeer, seen: list[Attach], address: str) -> None:
    def respond(c: Any, link: Link) -> None:
        link.source.copy(link.remote_source)
        link.target.copy(link.remote_target)
        link.target.address = address
        link.open()

    peer._add(_Expect("attach", seen.append, respond, label="dynamic attach"))


def _links_and_sends(peer: TestPeer, conn: Connection) -> tuple[list[Attach], list[Transfer]]:
    """Producers, consumers, a browser and subscriptions on q/t; one message to each."""
    seen: list[Attach] = []
    sent: list[Transfer] = []
    s = conn.create_session()
    peer.expect_attach(seen.append, offer=10)  # producer to q
    peer.expect_transfer(sent.append)
    peer.expect_attach(seen.append, offer=10)  # producer to t
    peer.expect_transfer(sent.append)
    for _ in range(5):  # consumer q, consumer t, durable, shared durable, shared
        peer.expect_attach(seen.append)
        peer.expect_flow()
    pq = s.create_producer(Queue("q"))
    m = s.create_text_message("to q")
    m.set_jms_reply_to(Topic("answers"))
    pq.send(m)
    pt = s.create_producer(Topic("t"))
    m = s.create_text_message("to t")
    m.set_jms_reply_to(Queue("answers"))
    pt.send(m)
    s.create_consumer(Queue("q"))
    s.create_consumer(Topic("t"))
    s.create_durable_subscriber(Topic("t"), "dsub")
    s.create_shared_durable_consumer(Topic("t"), "shd")
    s.create_shared_consumer(Topic("t"), "shv")
    peer.wait()
    return seen, sent


def test_offered_prefixes_go_on_every_link_address_and_to_reply_to(peer: TestPeer) -> None:
    with _open(peer, ACTIVEMQ, "&jms.clientID=cid") as conn:
        seen, sent = _links_and_sends(peer, conn)
    assert [a.target_address for a in seen[:2]] == ["queue://q", "topic://t"]
    assert [a.source_address for a in seen[2:]] == ["queue://q"] + ["topic://t"] * 4
    assert [a.name for a in seen[4:]] == ["dsub", "shd", "shv|volatile1"]
    assert [t.message.address for t in sent] == ["queue://q", "topic://t"]
    assert [t.message.reply_to for t in sent] == ["topic://answers", "queue://answers"]
    # the type annotations still say which kind each one is
    assert [t.message.annotations["x-opt-jms-dest"] for t in sent] == [0, 1]


def test_a_peer_without_prefixes_sees_bare_names(peer: TestPeer) -> None:
    with _open(peer, None, "&jms.clientID=cid") as conn:
        seen, sent = _links_and_sends(peer, conn)
    assert [a.target_address for a in seen[:2]] == ["q", "t"]
    assert [a.source_address for a in seen[2:]] == ["q"] + ["t"] * 4
    assert [t.message.address for t in sent] == ["q", "t"]
    assert [t.message.reply_to for t in sent] == ["answers", "answers"]


def test_url_options_win_over_the_offered_prefixes(peer: TestPeer) -> None:
    seen: list[Attach] = []
    with _open(peer, ACTIVEMQ, "&jms.queuePrefix=&jms.topicPrefix=/topic/") as conn:
        s = conn.create_session()
        peer.expect_attach(seen.append)
        peer.expect_attach(seen.append)
        s.create_producer(Queue("q"))
        s.create_producer(Topic("t"))
        peer.wait()
    assert [a.target_address for a in seen] == ["q", "/topic/t"]


def test_url_options_prefix_a_peer_that_offers_none(peer: TestPeer) -> None:
    seen: list[Attach] = []
    with _open(peer, None, "&jms.queuePrefix=queue://&jms.topicPrefix=topic://") as conn:
        s = conn.create_session()
        peer.expect_attach(seen.append)
        peer.expect_flow()
        s.create_consumer(Topic("t"))
        peer.wait()
    assert seen[0].source_address == "topic://t"


def test_a_name_that_carries_the_prefix_is_not_prefixed_again(peer: TestPeer) -> None:
    seen: list[Attach] = []
    sent: list[Transfer] = []
    with _open(peer, ACTIVEMQ) as conn:
        s = conn.create_session()
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer(sent.append)
        p = s.create_producer(Topic("topic://t"))
        p.send(s.create_message())
        peer.wait()
    assert seen[0].target_address == "topic://t" and sent[0].message.address == "topic://t"


def test_anonymous_producer_prefixes_to_and_reply_to(peer: TestPeer) -> None:
    seen: list[Attach] = []
    sent: list[Transfer] = []
    with _open(peer, ACTIVEMQ) as conn:
        s = conn.create_session()
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer(sent.append)
        peer.expect_transfer(sent.append)
        p = s.create_producer(None)
        m = s.create_text_message("x")
        m.set_jms_reply_to(Queue("r"))
        p.send(Topic("t"), m)
        p.send(Queue("q"), s.create_text_message("y"))
        peer.wait()
    assert seen[0].target_address is None
    assert [t.message.address for t in sent] == ["topic://t", "queue://q"]
    assert sent[0].message.reply_to == "queue://r"


def _arriving(address: str, reply_to: str | None, dest: int | None, reply_type: int | None) -> PMessage:
    ann: dict[str, Any] = {"x-opt-jms-msg-type": byte(5)}
    if dest is not None:
        ann["x-opt-jms-dest"] = byte(dest)
    if reply_type is not None:
        ann["x-opt-jms-reply-to"] = byte(reply_type)
    return PMessage(body="b", address=address, reply_to=reply_to, annotations=ann)


def test_arriving_addresses_lose_the_prefix(peer: TestPeer) -> None:
    with _open(peer, ACTIVEMQ) as conn:
        s = conn.create_session()
        peer.expect_attach()
        peer.expect_flow(send=[
            _arriving("topic://t", "queue://r", 1, 0),
            _arriving("topic://t", "queue://r", None, None),  # no annotations: the prefix says
            _arriving("queue://q", "temp-queue://ID:c-1:1", 0, 2),
        ])
        for _ in range(3):
            peer.expect_disposition()
        c = s.create_consumer(Topic("t"))
        conn.start()
        got = [c.receive(5000) for _ in range(3)]
        peer.wait()
    assert got[0].get_jms_destination() == Topic("t") and got[0].get_jms_reply_to() == Queue("r")
    assert got[1].get_jms_destination() == Topic("t") and got[1].get_jms_reply_to() == Queue("r")
    assert got[2].get_jms_destination() == Queue("q")
    reply = got[2].get_jms_reply_to()
    assert isinstance(reply, TemporaryQueue) and reply.name == "temp-queue://ID:c-1:1"
    assert str(reply) == "temp-queue://ID:c-1:1"


def test_temporary_queue_keeps_the_address_the_broker_gave_it(peer: TestPeer) -> None:
    seen: list[Attach] = []
    sent: list[Transfer] = []
    with _open(peer, ACTIVEMQ) as conn:
        s = conn.create_session()
        peer.expect_begin()
        _expect_dynamic(peer, seen, "temp-queue://ID:broker-1:1:1")
        tq = s.create_temporary_queue()
        peer.wait()
        assert tq.name == "temp-queue://ID:broker-1:1:1" and str(tq) == tq.name
        peer.expect_attach(seen.append)
        peer.expect_flow()
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer(sent.append)
        s.create_consumer(tq)
        p = s.create_producer(Queue("requests"))
        m = s.create_text_message("ask")
        m.set_jms_reply_to(tq)
        p.send(m)
        peer.wait()
    assert seen[1].source_address == "temp-queue://ID:broker-1:1:1"
    assert seen[1].source_capabilities == ("temporary-queue",)
    assert sent[0].message.reply_to == "temp-queue://ID:broker-1:1:1"
    assert sent[0].message.annotations["x-opt-jms-reply-to"] == 2


def test_browser_source_is_prefixed(peer: TestPeer) -> None:
    seen: list[Attach] = []
    with _open(peer, ACTIVEMQ, "&jms.prefetchPolicy.queueBrowserPrefetch=0") as conn:
        s = conn.create_session()
        browser = s.create_browser(Queue("q"))
        peer.expect_attach(seen.append)
        peer.expect_flow(lambda f: f.drain, drained=True)  # nothing there
        peer.expect_detach()
        assert list(browser) == []
        peer.wait()
    assert seen[0].source_address == "queue://q" and seen[0].source_capabilities == ("queue",)
