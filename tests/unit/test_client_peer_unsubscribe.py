"""``unsubscribe`` frame by frame: the lookup Attach Qpid JMS sends (a receiver with a null source
under the subscription's link name) and the two answers a broker gives (AMQP 1.0 2.6.3)."""

from __future__ import annotations

import time

import pytest

from amqp_jms import ConnectionFactory, InvalidDestinationException
from amqp_jms.testing.peer import Attach, TestPeer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000&jms.clientID=app"


@pytest.mark.parametrize("detach", [True, False], ids=["with-detach-not-found", "null-source-only"])
def test_unsubscribe_of_an_unknown_name_raises_invalid_destination(detach: bool) -> None:
    """ActiveMQ answers the lookup with a null source and then Detach ``amqp:not-found`` (what
    Qpid JMS waits for); the embedded broker used to send only the null source. Either way the
    client raises ``InvalidDestinationException`` at once."""
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_begin()
        peer.expect_begin()  # the connection's own session, for the lookup
        seen: list[Attach] = []
        if detach:
            peer.expect_attach(seen.append, refuse=("amqp:not-found", "no subscription named 'nosuch'"))
        else:
            peer.expect_attach(seen.append)  # echoes the null source
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            session = conn.create_session()
            started = time.monotonic()
            with pytest.raises(InvalidDestinationException) as err:
                session.unsubscribe("nosuch")
            assert time.monotonic() - started < 4  # not the request timeout
            assert err.value.error_code == "amqp:not-found"
            peer.wait()
        lookup = seen[0]
        assert lookup.role == "receiver" and lookup.name == "nosuch"
        assert lookup.source_address is None
