"""An Attach the peer's max-frame-size cannot hold is refused by the client, before sending:
sent, it would make the peer close the whole connection with a framing error."""

from __future__ import annotations

import pytest

from amqp_jms import ConnectionFactory, JMSException, Queue
from amqp_jms.testing.peer import Attach, TestPeer

FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"


def test_a_selector_too_large_for_the_peers_frames_is_refused_before_sending() -> None:
    with TestPeer(max_frame_size=4096) as peer:
        peer.expect_open()
        peer.expect_begin()
        seen: list[Attach] = []
        peer.expect_attach(seen.append)  # only the small consumer's attach arrives
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            session = conn.create_session()
            huge = " OR ".join(f"id = 'value-{i}'" for i in range(400))  # ~8 KB
            with pytest.raises(JMSException) as err:
                session.create_consumer(Queue("orders"), huge)
            assert err.value.error_code == "amqp:frame-size-too-small"
            assert "max-frame-size of 4096 bytes" in str(err.value)
            assert "nothing was sent" in str(err.value)
            # the connection and session are intact: a fitting selector still attaches
            session.create_consumer(Queue("orders"), "id = 'value-1'")
            peer.wait()
        assert len(seen) == 1 and seen[0].source_address == "orders"


def test_an_attach_that_fits_goes_out_even_near_the_limit() -> None:
    with TestPeer(max_frame_size=4096) as peer:
        peer.expect_open()
        peer.expect_begin()
        seen: list[Attach] = []
        peer.expect_attach(seen.append)
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            selector = "a = '" + "x" * 3500 + "'"
            conn.create_session().create_consumer(Queue("orders"), selector)
            peer.wait()
        assert len(seen) == 1
