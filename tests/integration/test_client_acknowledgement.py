"""Acknowledgement as in Qpid JMS, against the embedded broker:

* CLIENT/INDIVIDUAL_ACKNOWLEDGE: a consumer closed before its messages are acknowledged keeps
  its link until they are (or the session ends), so ``message.acknowledge()`` after
  ``consumer.close()`` still settles them. Before, the link was gone, the acknowledgement lost
  and the message delivered again.
* ``JMS_AMQP_ACK_TYPE`` set on the message passed to ``acknowledge()`` applies to every message
  the session acknowledges with it; an invalid value is refused, naming it, and nothing settles.
"""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSException, Queue, Session, TextMessage


def _fill(url: str, name: str, n: int) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        p = conn.create_session().create_producer(Queue(name))
        for i in range(n):
            p.send(TextMessage(f"m{i}"))


def _remaining(url: str, name: str) -> list[tuple[str, int]]:
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        c = conn.create_session().create_consumer(Queue(name))
        while (m := c.receive(1000)) is not None:
            out.append((m.get_text(), m.get_int_property("JMSXDeliveryCount")))
    return out


@pytest.mark.parametrize("mode", [Session.CLIENT_ACKNOWLEDGE, Session.INDIVIDUAL_ACKNOWLEDGE])
def test_acknowledge_after_consumer_close_settles(broker: Any, mode: int) -> None:
    _fill(broker.url, "ack-closed", 4)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, mode)
        consumer = session.create_consumer(Queue("ack-closed"))
        got = [consumer.receive(5000) for _ in range(2)]
        consumer.close()
        for m in got:
            assert m is not None
            m.acknowledge()
        # the unseen ones went back released; the acknowledged ones are gone
        assert _remaining(broker.url, "ack-closed") == [("m2", 1), ("m3", 1)]


def test_closed_consumer_link_goes_with_the_session_and_unacked_come_back(broker: Any) -> None:
    _fill(broker.url, "ack-closed2", 2)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue("ack-closed2"))
        assert consumer.receive(5000) is not None
        consumer.close()
        links = len(conn._provider.links_by_addr)
        assert links == 1  # kept for the acknowledgement
        session.close()
        assert conn._provider.links_by_addr == {}
    assert _remaining(broker.url, "ack-closed2") == [("m0", 2), ("m1", 1)]


def test_recover_after_consumer_close_gives_the_messages_back(broker: Any) -> None:
    _fill(broker.url, "ack-closed3", 1)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue("ack-closed3"))
        assert consumer.receive(5000) is not None
        consumer.close()
        session.recover()
        assert conn._provider.links_by_addr == {}  # nothing left to wait for: the link went
        assert _remaining(broker.url, "ack-closed3") == [("m0", 2)]


@pytest.mark.parametrize(("ack_type", "left"), [
    (1, []),
    (3, [("m0", 1), ("m1", 1), ("m2", 1)]),  # released: back, not counted
    (4, [("m0", 2), ("m1", 2), ("m2", 2)]),  # modified-failed: back, counted
])
def test_ack_type_applies_to_every_message_the_session_acknowledges(broker: Any, ack_type: int,
                                                                     left: list[Any]) -> None:
    _fill(broker.url, "ack-type", 3)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue("ack-type"))
        got = [consumer.receive(5000) for _ in range(3)]
        last = got[-1]
        assert last is not None
        consumer.close()  # (its link stays for the acknowledgement, with no credit: nothing comes back to it)
        last.set_int_property("JMS_AMQP_ACK_TYPE", ack_type)
        last.acknowledge()
    assert _remaining(broker.url, "ack-type") == left


def test_rejected_ack_type_dead_letters_every_message(broker: Any) -> None:
    _fill(broker.url, "ack-rej", 2)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue("ack-rej"))
        got = [consumer.receive(5000) for _ in range(2)]
        got[-1].set_int_property("JMS_AMQP_ACK_TYPE", 2)  # type: ignore[union-attr]
        got[-1].acknowledge()  # type: ignore[union-attr]
    assert _remaining(broker.url, "ack-rej") == []
    assert [t for t, _ in _remaining(broker.url, "DLQ")] == ["m0", "m1"]


def test_invalid_ack_type_is_refused_naming_it_and_settles_nothing(broker: Any) -> None:
    _fill(broker.url, "ack-bad", 2)
    with ConnectionFactory(broker.url).create_connection() as conn:
        conn.start()
        session = conn.create_session(False, Session.CLIENT_ACKNOWLEDGE)
        consumer = session.create_consumer(Queue("ack-bad"))
        got = [consumer.receive(5000) for _ in range(2)]
        last = got[-1]
        assert last is not None
        last.set_int_property("JMS_AMQP_ACK_TYPE", 99)
        with pytest.raises(JMSException, match="99"):
            last.acknowledge()
        last.set_int_property("JMS_AMQP_ACK_TYPE", 1)
        last.acknowledge()  # nothing was settled by the refused call: this accepts both
        consumer.close()
    assert _remaining(broker.url, "ack-bad") == []
