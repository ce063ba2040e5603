"""Closing a transacted session rolls back its transaction (JMS 2.0 Session.close), frame by frame.

Like Qpid JMS: consumer credit is drained, prefetched never-delivered messages are released, then
discharge(fail=true) goes out before the links detach and the session ends; no new transaction
is declared.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from proton import Message as PMessage

from amqp_jms import ConnectionFactory, Queue, Session
from amqp_jms.testing.peer import Disposition, TestPeer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open()
        p.expect_begin()
        yield p


def _text(body: str) -> PMessage:
    return PMessage(body=body, annotations={"x-opt-jms-msg-type": 5})


def test_close_discharges_with_fail_true_before_detaching_links_and_ending(peer: TestPeer) -> None:
    disp: list[Disposition] = []
    peer.expect_attach(offer=10)  # coordinator
    peer.expect_declare(b"txn-1")
    peer.expect_attach()  # consumer
    peer.expect_flow(send=[_text("a"), _text("b")])
    peer.expect_disposition(disp.append)  # 'a' accepted inside txn-1
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        s = conn.create_session(Session.SESSION_TRANSACTED)
        c = s.create_consumer(Queue("q"))
        conn.start()
        m = c.receive(2000)
        assert m is not None and m.get_body(str) == "a"
        peer.wait()
        # credit is drained first, so the peer cannot hand rolled-back messages to the
        # consumer that is about to detach
        peer.expect_flow(lambda f: f.drain, drained=True)
        peer.expect_disposition(disp.append)  # 'b' prefetched, never delivered: released
        peer.expect_discharge(fail=True)  # the rollback, and no declare after it
        peer.expect_detach()  # consumer (the order of the two detaches is the client's)
        peer.expect_detach()  # coordinator
        peer.expect_end()
        s.close()
        peer.wait()
    assert disp[0].state == 0x34  # transactional state
    assert disp[1].state == 0x26  # released


def test_close_of_non_transacted_session_sends_no_discharge(peer: TestPeer) -> None:
    peer.expect_attach()  # consumer
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        s = conn.create_session(Session.AUTO_ACKNOWLEDGE)
        s.create_consumer(Queue("q"))
        peer.wait()
        peer.expect_detach()
        peer.expect_end()
        s.close()
        peer.wait()


def test_close_after_commit_rolls_back_only_the_new_transaction(peer: TestPeer) -> None:
    peer.expect_attach(offer=10)
    peer.expect_declare(b"txn-1")
    peer.expect_discharge(fail=False)
    peer.expect_declare(b"txn-2")
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        s = conn.create_session(True)
        s.commit()
        peer.wait()
        peer.expect_discharge(fail=True)
        peer.expect_detach()
        peer.expect_end()
        s.close()
        peer.wait()
        s.close()  # idempotent: nothing more on the wire
        peer.wait()
