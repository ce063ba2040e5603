"""The scripted test peer itself: it must fail a script that the client does not follow."""

from __future__ import annotations

import pytest

from amqp_jms import ConnectionFactory, JMSException, Queue
from amqp_jms.testing.peer import TestPeer

FAST = "?jms.closeTimeout=1000&jms.requestTimeout=2000"


def test_unexpected_performative_fails_the_script() -> None:
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_close()  # but the client will begin a session first
        conn = ConnectionFactory(peer.url + FAST).create_connection()
        try:
            with pytest.raises(JMSException, match="timed out"):  # the begin is never answered
                conn.create_session()
        finally:
            conn.close()
        with pytest.raises(AssertionError, match="expected close, got begin"):
            peer.wait(1)


def test_check_returning_false_fails_the_script() -> None:
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_attach(lambda a: a.target_address == "other")
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            conn.create_session().create_producer(Queue("q"))
        with pytest.raises(AssertionError, match="attach did not match"):
            peer.wait(1)


def test_missing_performative_fails_the_script() -> None:
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            conn.start()
        with pytest.raises(AssertionError, match="expected but not received"):
            peer.wait(0.5)
