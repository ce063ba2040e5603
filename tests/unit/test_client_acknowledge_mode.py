"""Session modes are an ``IntEnum`` (``AcknowledgeMode``) and the plain ints keep working."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from amqp_jms import (
    AcknowledgeMode,
    ConnectionFactory,
    JMSContext,
    JMSException,
    JMSRuntimeException,
    Session,
)
from amqp_jms.testing.peer import TestPeer

FAST = "?jms.closeTimeout=1000&jms.requestTimeout=5000"


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        p.expect_open()
        yield p


def test_the_constants_are_the_jms_ints() -> None:
    assert Session.SESSION_TRANSACTED == 0 and Session.AUTO_ACKNOWLEDGE == 1
    assert Session.CLIENT_ACKNOWLEDGE == 2 and Session.DUPS_OK_ACKNOWLEDGE == 3
    assert Session.NO_ACKNOWLEDGE == 100 and Session.INDIVIDUAL_ACKNOWLEDGE == 101
    assert JMSContext.CLIENT_ACKNOWLEDGE is AcknowledgeMode.CLIENT_ACKNOWLEDGE is Session.CLIENT_ACKNOWLEDGE
    assert isinstance(Session.AUTO_ACKNOWLEDGE, int)


@pytest.mark.parametrize("given", [2, AcknowledgeMode.CLIENT_ACKNOWLEDGE])
def test_an_int_or_a_member_makes_the_session_and_reads_back_as_it(peer: TestPeer, given: int) -> None:
    peer.expect_begin()
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        mode = conn.create_session(given).get_acknowledge_mode()
    assert mode is AcknowledgeMode.CLIENT_ACKNOWLEDGE and mode == 2
    assert repr(mode) == "<AcknowledgeMode.CLIENT_ACKNOWLEDGE: 2>"


def test_the_classic_form_takes_an_int_too(peer: TestPeer) -> None:
    peer.expect_begin()
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        assert conn.create_session(False, 3).acknowledge_mode is AcknowledgeMode.DUPS_OK_ACKNOWLEDGE


def test_an_unknown_mode_is_refused_naming_it(peer: TestPeer) -> None:
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        with pytest.raises(JMSException, match="invalid session mode 7"):
            conn.create_session(7)


def test_the_context_takes_an_int_and_refuses_an_unknown_one(peer: TestPeer) -> None:
    f = ConnectionFactory(peer.url + FAST)
    with f.create_context(2) as ctx:
        assert ctx.get_session_mode() is AcknowledgeMode.CLIENT_ACKNOWLEDGE
        with pytest.raises(JMSRuntimeException, match="invalid session mode 42"):
            ctx.create_context(42)
