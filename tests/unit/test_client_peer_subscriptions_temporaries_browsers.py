"""The session's JMS 2.0 features frame by frame against the scripted test peer: subscriptions,
unsubscribe, temporary destinations, anonymous producers, async send outcomes, delivery delay,
browsers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from proton import Link, Terminus

from amqp_jms import (
    ConnectionFactory,
    InvalidDestinationException,
    JMSException,
    Queue,
    SendFailedException,
    TemporaryQueue,
    Topic,
)
from amqp_jms.client import Connection
from amqp_jms.testing.peer import Attach, TestPeer, Transfer, _Expect

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"
ALL_CAPS = ["ANONYMOUS-RELAY", "SHARED-SUBS", "DELAYED_DELIVERY"]


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def _open(peer: TestPeer, caps: list[str], options: str = "") -> Connection:
    peer.expect_open(offered_capabilities=caps)
    peer.expect_begin()
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _expect_consumer(peer: TestPeer, seen: list[Attach]) -> None:
    peer.expect_attach(seen.append)
    peer.expect_flow()


def _expect_dynamic(peer: TestPeer, seen: list[Attach], address: str,
                    node_properties: list[Any] | None = None) -> None:
    """Answer a dynamic-target attach with the node address the peer 'created'."""
    peer.expect_dynamic_attach(address, seen.append, node_properties)


def _expect_lookup(peer: TestPeer, seen: list[Attach], found: bool) -> None:
    """Answer an unsubscribe's null-source attach: the stored source, or null if unknown."""

    def respond(c: Any, link: Link) -> None:
        if found:
            link.source.type = Terminus.SOURCE
            link.source.address = "t"
        else:
            link.source.type = Terminus.UNSPECIFIED
        link.target.copy(link.remote_target)
        link.open()

    peer._add(_Expect("attach", seen.append, respond, label="lookup attach"))


def test_durable_subscriber_link_and_detach_without_close(peer: TestPeer) -> None:
    seen: list[Attach] = []
    closing: list[Any] = []
    with _open(peer, ALL_CAPS, "&jms.clientID=cid") as conn:
        s = conn.create_session()
        _expect_consumer(peer, seen)
        peer.expect_detach(closing.append)
        sub = s.create_durable_subscriber(Topic("t"), "mysub", "a = 1")
        sub.close()
        peer.wait()
    a = seen[0]
    assert a.name == "mysub" and a.source_address == "t" and a.source_capabilities == ("topic",)
    assert a.durable == Terminus.DELIVERIES and a.expiry_policy == Terminus.EXPIRE_NEVER
    assert a.distribution_mode == Terminus.DIST_MODE_COPY
    assert a.filter is not None and a.filter["jms-selector"][1] == "a = 1"
    assert closing[0].closed is False  # the subscription survives its consumer


@pytest.mark.parametrize("client_id", [True, False])
def test_shared_subscription_link_names_and_capabilities(peer: TestPeer, client_id: bool) -> None:
    seen: list[Attach] = []
    with _open(peer, ALL_CAPS, "&jms.clientID=cid" if client_id else "") as conn:
        s = conn.create_session()
        for _ in range(4):
            _expect_consumer(peer, seen)
        d1 = s.create_shared_durable_consumer(Topic("t"), "sub")
        d2 = s.create_shared_durable_consumer(Topic("t"), "sub")
        s.create_shared_consumer(Topic("t"), "sub")
        s.create_shared_consumer(Topic("t"), "sub")
        peer.wait()
        peer.expect_detach()
        peer.expect_detach()
        d1.close()
        d2.close()
        _expect_consumer(peer, seen)
        s.create_shared_durable_consumer(Topic("t"), "sub")  # counter restarted
        peer.wait()
    names = [a.name for a in seen]
    if client_id:
        assert names == ["sub", "sub|2", "sub|volatile1", "sub|volatile2", "sub"]
        assert all(a.source_capabilities == ("topic", "shared") for a in seen)
    else:
        assert names == ["sub|global", "sub|global2", "sub|global-volatile1", "sub|global-volatile2",
                         "sub|global"]
        assert all(a.source_capabilities == ("topic", "shared", "global") for a in seen)
    assert [a.durable for a in seen] == [2, 2, 0, 0, 2]


def test_shared_subscription_needs_peer_support(peer: TestPeer) -> None:
    with _open(peer, ["ANONYMOUS-RELAY"]) as conn:
        s = conn.create_session()
        with pytest.raises(JMSException, match="SHARED-SUBS"):
            s.create_shared_consumer(Topic("t"), "sub")
        with pytest.raises(JMSException, match=r"'\|'"):
            s.create_shared_durable_consumer(Topic("t"), "a|b")
        peer.wait()  # nothing was attached


@pytest.mark.parametrize("found", [True, False])
def test_unsubscribe_attaches_null_source_and_closes(peer: TestPeer, found: bool) -> None:
    seen: list[Attach] = []
    closing: list[Any] = []
    with _open(peer, ALL_CAPS, "&jms.clientID=cid") as conn:
        s = conn.create_session()
        peer.expect_begin()  # the connection's private session
        _expect_lookup(peer, seen, found)
        peer.expect_detach(closing.append)
        if found:
            s.unsubscribe("gone")
        else:
            with pytest.raises(InvalidDestinationException, match="gone"):
                s.unsubscribe("gone")
        peer.wait()
    assert seen[0].name == "gone" and seen[0].role == "receiver" and seen[0].source_address is None
    assert closing[0].closed is True


def test_temporary_queue_dynamic_target_and_delete(peer: TestPeer) -> None:
    seen: list[Attach] = []
    closing: list[Any] = []
    with _open(peer, ALL_CAPS) as conn:
        s = conn.create_session()
        peer.expect_begin()
        node: list[Any] = []
        _expect_dynamic(peer, seen, "TempQueue-1", node)
        tq = s.create_temporary_queue()
        peer.wait()
        assert isinstance(tq, TemporaryQueue) and tq.name == "TempQueue-1"
        peer.expect_detach(closing.append)
        tq.delete()
        peer.wait()
    a = seen[0]
    assert a.role == "sender" and a.dynamic and a.target_address is None
    assert a.target_capabilities == ("temporary-queue",)
    assert a.name.startswith("qpid-jms:temp-queue-creator:")
    policy = {str(k): v for k, v in node[0].items()}["lifetime-policy"]
    assert int(policy.descriptor) == 0x2B  # delete-on-close
    assert closing[0].closed is True


def test_anonymous_producer_uses_a_null_target_with_relay(peer: TestPeer) -> None:
    seen: list[Attach] = []
    sent: list[Transfer] = []
    with _open(peer, ALL_CAPS) as conn:
        s = conn.create_session()
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer(sent.append)
        p = s.create_producer(None)
        p.send(Queue("dest-a"), s.create_text_message("x"))
        peer.wait()
    assert seen[0].target_address is None and seen[0].role == "sender"
    assert sent[0].message.address == "dest-a"


def test_anonymous_fallback_caches_per_destination_links(peer: TestPeer) -> None:
    seen: list[Attach] = []
    closing: list[Any] = []
    with _open(peer, [], "&amqp.anonymousFallbackCacheSize=1") as conn:
        s = conn.create_session()
        p = s.create_producer(None)  # no attach yet: links are made per destination
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer()
        peer.expect_transfer()
        p.send(Queue("a"), s.create_text_message("1"))
        p.send(Queue("a"), s.create_text_message("2"))  # cached link reused
        peer.wait()
        peer.expect_attach(seen.append, offer=10)
        peer.expect_detach(closing.append)  # "a" evicted (cache size 1)
        peer.expect_transfer()
        p.send(Queue("b"), s.create_text_message("3"))
        peer.wait()
    assert [a.target_address for a in seen] == ["a", "b"]
    assert closing and closing[0].name == seen[0].name


def test_async_send_reports_a_rejection_to_the_listener(peer: TestPeer) -> None:
    got: list[tuple[Any, Any]] = []
    ev = threading.Event()
    with _open(peer, ALL_CAPS) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        peer.expect_transfer(outcome="rejected", condition=("amqp:resource-limit-exceeded", "full"))
        peer.expect_transfer()
        p = s.create_producer(Queue("q"))

        def listener(message: Any, exc: Exception | None) -> None:
            got.append((message.get_body(str), exc))
            if len(got) == 2:
                ev.set()

        p.send(s.create_text_message("bad"), completion_listener=listener)
        p.send(s.create_text_message("good"), completion_listener=listener)
        assert ev.wait(5)
        peer.wait()
    assert got[0][0] == "bad" and isinstance(got[0][1], SendFailedException)
    assert "full" in str(got[0][1])
    assert got[1] == ("good", None)


def test_delivery_delay_annotation_only_for_a_delay(peer: TestPeer) -> None:
    sent: list[Transfer] = []
    with _open(peer, ALL_CAPS) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        peer.expect_transfer(sent.append)
        peer.expect_transfer(sent.append)
        p = s.create_producer(Queue("q"))
        p.send(s.create_text_message("plain"))
        p.set_delivery_delay(5000)
        m = s.create_text_message("delayed")
        p.send(m)
        peer.wait()
    assert "x-opt-delivery-time" not in (sent[0].message.annotations or {})
    ann: Any = sent[1].message.annotations
    t = ann["x-opt-delivery-time"]
    assert int(t) == m.get_jms_delivery_time() and int(t) >= m.get_jms_timestamp() + 5000


def test_delivery_delay_needs_peer_support(peer: TestPeer) -> None:
    with _open(peer, ["ANONYMOUS-RELAY"]) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        p = s.create_producer(Queue("q"))
        p.set_delivery_delay(100)
        with pytest.raises(JMSException, match="DELAYED_DELIVERY"):
            p.send(s.create_text_message("x"))
        peer.wait()


def test_browser_link_copies_and_ends_when_drained(peer: TestPeer) -> None:
    seen: list[Attach] = []
    with _open(peer, ALL_CAPS, "&jms.prefetchPolicy.queueBrowserPrefetch=0") as conn:
        s = conn.create_session()
        browser = s.create_browser(Queue("q"), "n > 1")
        peer.expect_attach(seen.append)
        peer.expect_flow(lambda f: f.drain and f.credit == 1, drained=True)  # nothing there
        peer.expect_detach()
        assert list(browser) == []
        peer.wait()
    a = seen[0]
    assert a.distribution_mode == Terminus.DIST_MODE_COPY and a.source_address == "q"
    assert a.filter is not None and a.filter["jms-selector"][1] == "n > 1"


def test_context_failed_commit_is_transaction_rolled_back_runtime(peer: TestPeer) -> None:
    from amqp_jms import JMSContext, TransactionRolledBackRuntimeException

    peer.expect_open(offered_capabilities=ALL_CAPS)
    peer.expect_begin()
    peer.expect_attach(offer=10)  # coordinator
    peer.expect_declare(b"txn-1")
    peer.expect_discharge(fail=False, reject=("amqp:transaction:rollback", "conflict"))
    peer.expect_declare(b"txn-2")
    ctx = ConnectionFactory(peer.url + FAST).create_context(JMSContext.SESSION_TRANSACTED)
    with ctx:
        with pytest.raises(TransactionRolledBackRuntimeException, match="conflict"):
            ctx.commit()
        peer.wait()


def test_anonymous_fallback_links_expire_when_idle(peer: TestPeer) -> None:
    import time

    seen: list[Attach] = []
    closing: list[Any] = []
    opts = "&amqp.anonymousFallbackCacheSize=5&amqp.anonymousFallbackCacheTimeout=200"
    with _open(peer, [], opts) as conn:
        s = conn.create_session()
        p = s.create_producer(None)
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer()
        p.send(Queue("a"), s.create_text_message("1"))
        peer.wait()
        time.sleep(0.4)  # "a" idles past the timeout
        peer.expect_detach(closing.append)
        peer.expect_attach(seen.append, offer=10)
        peer.expect_transfer()
        p.send(Queue("b"), s.create_text_message("2"))
        peer.wait()
        peer.expect_detach()  # closing the producer closes the cached links
        p.close()
        peer.wait()
    assert [a.target_address for a in seen] == ["a", "b"]
    assert closing[0].name == seen[0].name
