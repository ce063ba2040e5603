"""The details of what a failover connection re-creates, frame by frame against the scripted peer
(Qpid JMS's FailoverIntegrationTest and FailoverWithAmqpOpenProvidedServerListIntegrationTest):
each kind of link comes back with the same name, termini, filters, capabilities and credit, in
Qpid JMS's order across sessions; a server list or redirect in the Open is followed and the
connection works there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from proton import Message as PMessage
from proton import Terminus
from test_failover_peer_frames import failover_of, url, wait_for

from amqp_jms import ConnectionFactory, Queue, Topic
from amqp_jms.client import Connection
from amqp_jms.testing.peer import Attach, Flow, TestPeer

SHARED = ["ANONYMOUS-RELAY", "SHARED-SUBS"]


def _script(peer: TestPeer, frames: str, attaches: list[Attach], offered: Sequence[str]) -> None:
    """Expect an Open, then ``frames``: ``B`` a Begin, ``R`` a receiver's attach, ``S`` a sender's
    attach (granted credit); every attach is recorded in ``attaches``."""
    peer.expect_open(offered_capabilities=offered)
    for f in frames.split():
        if f == "B":
            peer.expect_begin()
        else:
            role = {"R": "receiver", "S": "sender"}[f]
            peer.expect_attach(lambda a, role=role: attaches.append(a) or a.role == role,
                               offer=10 if f == "S" else 0)


def _across_a_reconnect(
    frames: str, setup: Callable[[Connection], Any], *, again: str | None = None,
    offered: Sequence[str] = SHARED, options: str = "",
) -> tuple[list[Attach], list[Attach], list[Flow]]:
    """The attaches ``setup`` makes on the first connection, those the replay makes after a drop
    (``again``: the frames expected then, if not the same), and the flows sent after it."""
    first: list[Attach] = []
    second: list[Attach] = []
    with TestPeer() as peer:
        _script(peer, frames, first, offered)
        with ConnectionFactory(url(peer, options=options)).create_connection() as conn:
            conn.start()
            setup(conn)
            peer.wait()
            _script(peer, again or frames, second, offered)
            flows_before = len(peer.flows)
            peer.drop()
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)
            receivers = sum(1 for a in second if a.role == "receiver")
            wait_for(lambda: len(peer.flows) - flows_before >= receivers, timeout=2)
            flows = peer.flows[flows_before:]
    return first, second, flows


def _termini(a: Attach) -> tuple[Any, ...]:
    return (a.name, a.role, a.source_address, a.target_address, a.source_capabilities,
            a.target_capabilities, a.filter, a.durable, a.expiry_policy, a.distribution_mode,
            a.snd_settle_mode, a.rcv_settle_mode)


def test_shared_subscriptions_come_back_with_their_names_and_capabilities() -> None:
    """Shared durable and shared volatile subscriptions (without a client id: the global forms)
    re-attach under the same link names (``sub|global``, ``sub|global-volatile1``) with the
    topic, shared and global capabilities and the same durability."""

    def setup(conn: Connection) -> None:
        s = conn.create_session()
        s.create_shared_durable_consumer(Topic("t"), "sub")
        s.create_shared_consumer(Topic("t"), "sub")

    first, second, _ = _across_a_reconnect("B R R", setup)
    assert [a.name for a in second] == ["sub|global", "sub|global-volatile1"]
    assert all(a.source_capabilities == ("topic", "shared", "global") for a in second)
    assert [a.durable for a in second] == [2, 0]
    assert [_termini(a) for a in second] == [_termini(a) for a in first]


def test_shared_subscription_with_a_client_id_comes_back_without_global() -> None:
    def setup(conn: Connection) -> None:
        conn.create_session().create_shared_durable_consumer(Topic("t"), "sub", "n > 1")

    first, second, _ = _across_a_reconnect("B R", setup, options="&jms.clientID=cid")
    assert second[0].name == "sub" and second[0].source_capabilities == ("topic", "shared")
    assert second[0].filter is not None and "jms-selector" in second[0].filter
    assert _termini(second[0]) == _termini(first[0])


def test_no_local_consumer_comes_back_with_its_no_local_filter() -> None:
    def setup(conn: Connection) -> None:
        conn.create_session().create_consumer(Topic("news"), "color = 'red'", no_local=True)

    first, second, _ = _across_a_reconnect("B R", setup)
    assert second[0].filter is not None
    assert second[0].filter["no-local"][0] == 0x0000468C00000003
    assert "jms-selector" in second[0].filter
    assert _termini(second[0]) == _termini(first[0])


def test_the_consumer_gets_exactly_its_prefetch_as_credit_again() -> None:
    """The credit after the reconnect is the configured prefetch (7), not what was left of the
    old link's credit, and not the default."""

    def setup(conn: Connection) -> None:
        conn.create_session().create_consumer(Queue("q"))

    _, second, flows = _across_a_reconnect("B R", setup, options="&jms.prefetchPolicy.queuePrefetch=7")
    assert [f.credit for f in flows if f.link_name == second[0].name][:1] == [7]


def test_browser_and_anonymous_producer_come_back_as_they_were() -> None:
    """A queue browser's link (distribution mode copy, selector) and an anonymous producer's
    (null target, relayed by the peer) re-attach with the same names and termini."""
    browsers: list[Any] = []

    def setup(conn: Connection) -> None:
        s = conn.create_session()
        s.create_producer(None)
        b = s.create_browser(Queue("q"), "n > 1")
        browsers.append(iter(b.get_enumeration()))

    first, second, _ = _across_a_reconnect("B S R", setup)
    assert second[0].role == "sender" and second[0].target_address is None
    browser = second[1]
    assert browser.source_address == "q" and browser.distribution_mode == Terminus.DIST_MODE_COPY
    assert browser.filter is not None and "jms-selector" in browser.filter
    assert [_termini(a) for a in second] == [_termini(a) for a in first]


def test_two_sessions_come_back_in_creation_order_each_with_its_producers_first() -> None:
    """Qpid JMS's order: each session in creation order; within one, its producers then its
    consumers, whatever order they were created in; the names do not change."""

    def setup(conn: Connection) -> None:
        a = conn.create_session()
        a.create_consumer(Queue("a-in"))
        a.create_producer(Queue("a-out"))
        b = conn.create_session()
        b.create_producer(Queue("b-out"))
        b.create_consumer(Queue("b-in"))

    first, second, _ = _across_a_reconnect("B R S B S R", setup, again="B S R B S R")
    assert [(a.source_address or a.target_address) for a in second] == ["a-out", "a-in", "b-out", "b-in"]
    by_name = {a.name: _termini(a) for a in first}
    assert [_termini(a) for a in second] == [by_name[a.name] for a in second]


def test_server_list_in_open_is_followed_and_the_connection_works_there() -> None:
    """FailoverWithAmqpOpenProvidedServerListIntegrationTest (REPLACE): the URL names only the
    first peer, whose Open names the second in failover-server-list; when the first goes for
    good the client re-creates its session, producer and consumer on the second, sends there
    and receives from it."""
    names: list[Attach] = []
    with TestPeer() as first, TestPeer() as second:
        first.expect_open(properties={"failover-server-list": [
            {"network-host": "127.0.0.1", "port": second.port}]})
        first.expect_begin()
        first.expect_attach(offer=10)
        first.expect_attach()
        second.expect_open()
        second.expect_begin()
        second.expect_attach(lambda a: a.target_address == "out", offer=10)
        second.expect_attach(lambda a: names.append(a) or a.source_address == "in")
        second.expect_flow()
        with ConnectionFactory(url(first)).create_connection() as conn:
            conn.start()
            s = conn.create_session()
            p = s.create_producer(Queue("out"))
            c = s.create_consumer(Queue("in"))
            first.wait()
            first.drop()
            first.close()  # gone for good: only the learnt server is left
            second.wait()
            second.expect_transfer(lambda t: t.message.body == "to the second")
            p.send(s.create_text_message("to the second"))
            second.wait()
            back = PMessage(body="from the second", annotations={"x-opt-jms-msg-type": 5})
            second.send(names[0].name, back)
            m = c.receive(5000)
            assert m is not None and m.get_text() == "from the second"
            assert failover_of(conn).remote_uri == f"amqp://127.0.0.1:{second.port}"


def test_redirect_during_connection_establishment_connects_to_the_named_server() -> None:
    """testFailoverHandlesRemoteCloseWithRedirectDuringConnectionSessionEstablishment: the first
    server answers the Open (with a failover-server-list) and closes at once with
    amqp:connection:redirect: the connection is established on the server the redirect names (the
    application hears of no other), and the list that Open named is kept."""
    established: list[str] = []

    class Listener:
        def on_connection_established(self, uri: str) -> None:
            established.append(uri)

    with TestPeer() as primary, TestPeer() as backup:
        primary.expect_open(refuse=("amqp:connection:redirect", "Server is going away"),
                            refuse_info={"network-host": "127.0.0.1", "port": backup.port},
                            properties={"failover-server-list": [
                                {"network-host": "test-host", "port": 45678}]})
        backup.expect_open()
        backup.expect_begin()
        conn = ConnectionFactory(url(primary)).create_connection()
        try:
            conn.add_connection_listener(Listener())
            conn.create_session()
            primary.wait()
            backup.wait()
            assert wait_for(lambda: established == [f"amqp://127.0.0.1:{backup.port}"]), established
            assert failover_of(conn).remote_uri == f"amqp://127.0.0.1:{backup.port}"
            # the server list in that Open was taken too (REPLACE: the primary and its list)
            assert sorted((s.host, s.port) for s in failover_of(conn).servers) == sorted(
                [("127.0.0.1", primary.port), ("127.0.0.1", backup.port), ("test-host", 45678)])
        finally:
            conn.close()


def test_anonymous_fallback_producer_whose_link_close_was_unanswered_sends_after_a_drop() -> None:
    """testFailoverHandlesAnonymousFallbackWaitingForClose: a peer without ANONYMOUS-RELAY and no
    fallback cache: each send attaches a link to its destination, sends and detaches it. A detach
    unanswered when the connection drops does not stop the producer: after the reconnect (which
    attaches nothing for it) the next send attaches, sends and detaches on the new connection."""
    targets: list[str | None] = []
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: targets.append(a.target_address) or True, offer=10)
        peer.expect_transfer()
        peer.expect_detach(respond=False)
        u = url(peer, options="&failover.nested.amqp.anonymousFallbackCacheSize=0")
        with ConnectionFactory(u).create_connection() as conn:
            s = conn.create_session()
            p = s.create_producer(None)
            p.send(Queue("myQueue"), s.create_text_message("first"))
            peer.wait()
            peer.expect_open()
            peer.expect_begin()
            peer.drop()
            peer.wait()
            assert wait_for(lambda: conn.metrics().reconnects == 1)
            peer.expect_attach(lambda a: targets.append(a.target_address) or True, offer=10)
            peer.expect_transfer(lambda t: t.message.body == "second")
            peer.expect_detach()
            p.send(Queue("myQueue"), s.create_text_message("second"))
            peer.wait()
    assert targets == ["myQueue", "myQueue"]
