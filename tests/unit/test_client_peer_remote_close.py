"""The peer closing a producer's link (or an anonymous producer's fallback link) while sends are
under way, frame by frame, as Qpid JMS's ProducerIntegrationTest and
AnonymousFallbackProducerIntegrationTest check it (docs/qpid-jms-parity.md): a send waiting for
its outcome fails with the peer's condition, sends waiting on a completion listener are told,
and nothing waits for an answer that cannot come."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, DeliveryMode, JMSException, Queue
from amqp_jms.client import Connection
from amqp_jms.testing.peer import TestPeer, Transfer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000&jms.sendTimeout=10000"
GONE = ("amqp:resource-deleted", "producer-breadcrumb")


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


def _conn(peer: TestPeer, caps: list[str] | None = None, options: str = "") -> Connection:
    peer.expect_open(offered_capabilities=caps if caps is not None else ["ANONYMOUS-RELAY"])
    peer.expect_begin()
    return ConnectionFactory(peer.url + FAST + options).create_connection()


def _sender_name(peer: TestPeer) -> str:
    return next(t.link_name for t in peer.log if isinstance(t, Transfer))


def _send_in_thread(send: Any) -> tuple[threading.Thread, list[BaseException | None]]:
    result: list[BaseException | None] = []

    def run() -> None:
        try:
            send()
            result.append(None)
        except BaseException as exc:
            result.append(exc)

    t = threading.Thread(target=run)
    t.start()
    return t, result


def test_remote_close_during_a_sync_send_fails_it_with_the_condition(peer: TestPeer) -> None:
    with _conn(peer) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        peer.expect_transfer(outcome=None)  # never answered: the link goes instead
        p = s.create_producer(Queue("q"))
        started = time.monotonic()
        t, result = _send_in_thread(lambda: p.send(s.create_text_message("x")))  # PERSISTENT: waits
        peer.wait()
        peer.detach_link(_sender_name(peer), GONE)
        t.join(10)
        assert isinstance(result[0], JMSException) and "producer-breadcrumb" in str(result[0])
        assert time.monotonic() - started < 5  # not the send timeout
        with pytest.raises(JMSException, match="producer-breadcrumb"):  # the producer is gone
            p.send(s.create_text_message("again"))


def test_remote_close_tells_the_completion_listener_of_every_send_under_way(peer: TestPeer) -> None:
    got: list[tuple[str, BaseException | None]] = []
    both = threading.Event()
    with _conn(peer) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        peer.expect_transfer(outcome=None)
        peer.expect_transfer(outcome=None)
        p = s.create_producer(Queue("q"))

        def listener(message: Any, exc: Exception | None) -> None:
            got.append((message.get_text(), exc))
            if len(got) == 2:
                both.set()

        p.send(s.create_text_message("a"), completion_listener=listener)
        p.send(s.create_text_message("b"), completion_listener=listener)
        peer.wait()
        peer.detach_link(_sender_name(peer), GONE)
        assert both.wait(5)
    assert [text for text, _ in got] == ["a", "b"]  # in the order sent
    assert all(isinstance(exc, JMSException) and "producer-breadcrumb" in str(exc) for _, exc in got)


def test_remote_close_of_a_fallback_link_during_a_sync_send_fails_it_and_the_next_send_attaches_again(
    peer: TestPeer,
) -> None:
    with _conn(peer, [], "&amqp.anonymousFallbackCacheSize=1") as conn:  # no relay: a link per destination
        s = conn.create_session()
        p = s.create_producer(None)
        peer.expect_attach(lambda a: a.target_address == "a", offer=10)
        peer.expect_transfer(outcome=None)
        t, result = _send_in_thread(lambda: p.send(Queue("a"), s.create_text_message("x")))
        peer.wait()
        peer.detach_link(_sender_name(peer), GONE)
        t.join(10)
        assert isinstance(result[0], JMSException) and "producer-breadcrumb" in str(result[0])
        peer.expect_attach(lambda a: a.target_address == "a", offer=10)  # a new link for the next send
        peer.expect_transfer()
        p.send(Queue("a"), s.create_text_message("y"))
        peer.wait()


def test_remote_close_of_a_fallback_link_reports_a_send_that_did_not_wait(peer: TestPeer) -> None:
    failures: list[Exception] = []
    told = threading.Event()
    with _conn(peer, [], "&amqp.anonymousFallbackCacheSize=1") as conn:
        conn.set_exception_listener(lambda e: (failures.append(e), told.set()))
        s = conn.create_session()
        p = s.create_producer(None)
        p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)  # does not wait for its outcome
        peer.expect_attach(lambda a: a.target_address == "a", offer=10)
        peer.expect_transfer(outcome=None)
        p.send(Queue("a"), s.create_text_message("x"))
        peer.wait()
        peer.detach_link(_sender_name(peer), GONE)
        # the fallback link is the producer's own business: the connection lives on, a later
        # send attaches a new link
        peer.expect_attach(lambda a: a.target_address == "a", offer=10)
        peer.expect_transfer()
        assert told.wait(5)  # the message's fate is unknown: the application hears of it
        p.send(Queue("a"), s.create_text_message("y"))
        peer.wait()
    assert len(failures) == 1 and "1 message(s) sent without waiting" in str(failures[0])
    assert "producer-breadcrumb" in str(failures[0])


# -- a consumer's link closed by the peer (Qpid JMS ConsumerIntegrationTest,
#    testRemotelyCloseConsumerWithMessageListenerFiresJMSExceptionListener and its siblings) ----

def _consumer_link(peer: TestPeer) -> str:
    from amqp_jms.testing.peer import Attach

    return next(a.name for a in peer.log if isinstance(a, Attach) and a.source_address == "q")


@pytest.mark.parametrize("condition", [GONE, None], ids=["with-condition", "without-condition"])
def test_a_listeners_consumer_closed_by_the_peer_tells_the_exception_listener(
        peer: TestPeer, condition: tuple[str, str] | None) -> None:
    told: list[JMSException] = []
    heard = threading.Event()

    def on_exception(exc: JMSException) -> None:
        told.append(exc)
        heard.set()

    with _conn(peer) as conn:
        conn.set_exception_listener(on_exception)
        s = conn.create_session()
        peer.expect_attach()
        peer.expect_flow()
        c = s.create_consumer(Queue("q"))
        c.set_message_listener(lambda m: None)
        conn.start()
        peer.wait()
        peer.detach_link(_consumer_link(peer), condition)
        assert heard.wait(5), "the ExceptionListener was not told of the consumer the peer closed"
        assert len(told) == 1
        if condition is not None:
            assert "producer-breadcrumb" in str(told[0])
        # the connection and the session carry on: another consumer works
        peer.expect_attach()
        peer.expect_flow()
        s.create_consumer(Queue("other"))
        peer.wait()
    assert len(told) == 1


def test_a_consumer_closed_by_the_peer_ends_a_blocked_receive_then_refuses_to_receive(
        peer: TestPeer) -> None:
    from amqp_jms import IllegalStateException

    told: list[JMSException] = []
    with _conn(peer) as conn:
        conn.set_exception_listener(told.append)
        s = conn.create_session()
        peer.expect_attach()
        peer.expect_flow()
        c = s.create_consumer(Queue("q"))
        conn.start()
        peer.wait()
        got: list[Any] = []
        t = threading.Thread(target=lambda: got.append(c.receive(5000)))
        t.start()
        time.sleep(0.2)
        peer.detach_link(_consumer_link(peer), GONE)
        t.join(5)
        assert got == [None]  # the blocked receive ends at once (Qpid JMS returns null)
        with pytest.raises(IllegalStateException, match="unrecoverable") as raised:
            c.receive_no_wait()
        assert "producer-breadcrumb" in str(raised.value.linked_exception)
        c.close()  # closing it afterwards is quiet
    time.sleep(0.2)
    assert told == []  # no listener: the receive is how the application hears of it


@pytest.mark.parametrize("persistent", [True, False], ids=["sync", "not-waiting"])
def test_a_producer_closed_by_the_peer_refuses_later_sends_as_closed(
        peer: TestPeer, persistent: bool) -> None:
    """Qpid JMS's testRemotelyCloseProducer / testPassthroughRemotelyCloseProducer: once the peer
    closed the producer's link alone, a send raises IllegalStateException naming the cause,
    whether or not it would have waited (a send that does not wait must not go nowhere)."""
    from amqp_jms import IllegalStateException
    from amqp_jms.testing.peer import Attach

    with _conn(peer) as conn:
        s = conn.create_session()
        peer.expect_attach(offer=10)
        p = s.create_producer(Queue("q"))
        peer.wait()
        name = next(a.name for a in peer.log if isinstance(a, Attach) and a.target_address == "q")
        peer.detach_link(name, GONE)
        deadline = time.monotonic() + 5
        while name not in peer.answered_detaches:  # the client has seen the detach
            assert time.monotonic() < deadline, "the client never answered the detach"
            time.sleep(0.02)
        mode = DeliveryMode.PERSISTENT if persistent else DeliveryMode.NON_PERSISTENT
        for body in ("x", "y"):
            with pytest.raises(IllegalStateException, match="unrecoverable") as raised:
                p.send(s.create_text_message(body), delivery_mode=mode)
            assert "producer-breadcrumb" in str(raised.value.linked_exception)
        # the session carries on
        peer.expect_attach(offer=10)
        s.create_producer(Queue("other"))
        peer.wait()
