"""The issue-32 reproduction through a real crash: a broker (a subprocess on a store) is killed
with SIGKILL, the application sends a NON_PERSISTENT TextMessage "A" while failover waits to
reconnect, changes the same object to "B" and sends it again; the broker comes back, and a
consumer receives "A" then "B" (before the fix both arrived as "B": the queued send held the
application's live object and encoded it after the reconnect)."""

from __future__ import annotations

import threading
from pathlib import Path

from amqp_jms import ConnectionFactory, DeliveryMode, Queue
from amqp_jms.testing.broker_process import RestartableBroker

SLOW = "failover.initialReconnectDelay=1000&failover.reconnectDelay=300&failover.maxReconnectDelay=300"


class Interrupted:
    def __init__(self) -> None:
        self.interrupted = threading.Event()
        self.restored = threading.Event()

    def on_connection_interrupted(self, uri: str) -> None:
        self.interrupted.set()

    def on_connection_restored(self, uri: str) -> None:
        self.restored.set()


def test_a_message_changed_after_a_send_made_during_a_broker_crash_arrives_as_sent(tmp_path: Path) -> None:
    broker = RestartableBroker(str(tmp_path / "store"))
    try:
        events = Interrupted()
        url = f"failover:(amqp://127.0.0.1:{broker.port})?{SLOW}"
        with ConnectionFactory(url).create_connection() as conn:
            conn.add_connection_listener(events)
            s = conn.create_session()
            p = s.create_producer(Queue("snapshot"))
            p.set_delivery_mode(DeliveryMode.NON_PERSISTENT)
            broker.kill()
            assert events.interrupted.wait(10), "failover did not notice the crash"
            m = s.create_text_message("A")
            m.set_int_property("n", 1)
            p.send(m)
            m.set_text("B")
            m.set_int_property("n", 2)
            p.send(m)
            broker.start()
            assert events.restored.wait(20), "failover did not reconnect"
            conn.start()
            c = s.create_consumer(Queue("snapshot"))
            got = []
            for _ in range(2):
                r = c.receive(10)
                assert r is not None, f"only {got} arrived"
                got.append((r.get_text(), r.get_int_property("n")))
            assert c.receive_no_wait() is None
        assert got == [("A", 1), ("B", 2)]
    finally:
        broker.proc.stop()
