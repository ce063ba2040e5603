"""A closed transacted session's consumed messages come back at once, on the embedded broker.

The client rolls back on Session.close (JMS 2.0); the broker also rolls back a transaction
whose coordinator link detaches or whose session ends, for clients that do not discharge.
"""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue, Session
from amqp_jms.provider.amqp.session import AmqpSession


def _redelivered_after_close(broker: Any, queue: str) -> Any:
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        s.create_producer(Queue(queue)).send(s.create_text_message("m"))
        tx = c.create_session(Session.SESSION_TRANSACTED)
        got = tx.create_consumer(Queue(queue)).receive(2000)
        assert got is not None and got.get_body(str) == "m"
        tx.close()
        return s.create_consumer(Queue(queue)).receive(3000)


def test_closing_a_transacted_session_redelivers_what_it_consumed(broker: Any) -> None:
    m = _redelivered_after_close(broker, "fix-close-rb")
    assert m is not None and m.get_body(str) == "m"
    assert m.get_jms_redelivered()
    # one failed attempt: the closing consumer's credit was drained before the rollback, so
    # the message was not bounced through it once more
    assert m.get_int_property("JMSXDeliveryCount") == 2


def test_prefetched_messages_of_a_closed_transacted_session_are_available(broker: Any) -> None:
    q = Queue("fix-close-prefetch")
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        prod = s.create_producer(q)
        for i in range(5):
            prod.send(s.create_text_message(f"m{i}"))
        tx = c.create_session(Session.SESSION_TRANSACTED)
        first = tx.create_consumer(q).receive(2000)  # the rest sit prefetched
        assert first is not None and first.get_body(str) == "m0"
        tx.close()
        cons = s.create_consumer(q)
        got = [cons.receive(3000) for _ in range(5)]
        assert sorted(str(m.get_body(str)) for m in got if m is not None) == [f"m{i}" for i in range(5)]


def test_broker_rolls_back_when_the_session_ends_without_discharge(
    broker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_discharge(self: AmqpSession, before: Any) -> None:
        return None  # a client that just ends the session

    monkeypatch.setattr(AmqpSession, "_rollback_on_close", no_discharge)
    m = _redelivered_after_close(broker, "fix-end-rb")
    assert m is not None and m.get_body(str) == "m"


def test_broker_rolls_back_when_the_coordinator_link_detaches(broker: Any) -> None:
    q = Queue("fix-coord-rb")
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        s.create_producer(q).send(s.create_text_message("m"))
        tx = c.create_session(Session.SESSION_TRANSACTED)
        cons = tx.create_consumer(q)
        got = cons.receive(2000)
        assert got is not None
        ps: Any = tx._provider_session
        coordinator = ps.coordinator
        ps.provider.loop_thread.submit(coordinator.detach()).result(5)  # the session and consumer stay open
        # rolled back: the message is available again, and the open consumer gets it anew
        m = cons.receive(3000)
        assert m is not None and m.get_body(str) == "m" and m.get_jms_redelivered()
