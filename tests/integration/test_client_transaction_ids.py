"""A transacted session keeps its own transaction id however the sessions around it come and go.

proton hands a declared transaction id over as a memoryview into the declare delivery's memory;
kept as it was, the id changed under the session once that memory was reused (another session
closed, a third one declared), and the next commit discharged an unknown transaction.
"""

from __future__ import annotations

from typing import Any

from amqp_jms import ConnectionFactory


def test_commit_after_other_transacted_sessions_came_and_went(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as conn:
        first, second = conn.create_session(True), conn.create_session(True)
        q = first.create_queue("txn-ids")
        first.create_producer(q).send(first.create_text_message("first"))
        second.close()
        third = conn.create_session(True)
        third.create_producer(q).send(third.create_text_message("third"))
        third.commit()
        first.commit()  # raised TransactionRolledBackException (unknown transaction id)
        conn.start()
        reader = conn.create_session()
        c = reader.create_consumer(q)
        got = sorted(m.get_text() for m in (c.receive(5000), c.receive(5000)))
        assert got == ["first", "third"]
