"""Connection listeners (issue 17): what happens to a connection, told to the application off
the I/O thread, in order, on the sync and asyncio faces; the ExceptionListener only when the
provider gives up. Against the embedded broker, with real faults from the FaultProxy."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, ConnectionListener, JMSException, Queue
from amqp_jms.aio import AsyncConnectionFactory
from amqp_jms.testing import FaultProxy


class Recorder(ConnectionListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any, str]] = []
        self.changed = threading.Condition()

    def _add(self, name: str, arg: Any) -> None:
        with self.changed:
            self.events.append((name, arg, threading.current_thread().name))
            self.changed.notify_all()

    def on_connection_established(self, uri: str) -> None:
        self._add("established", uri)

    def on_connection_interrupted(self, uri: str) -> None:
        self._add("interrupted", uri)

    def on_connection_restored(self, uri: str) -> None:
        self._add("restored", uri)

    def on_connection_failure(self, exc: Exception) -> None:
        self._add("failure", exc)

    def wait_for(self, n: int, timeout: float = 5) -> list[str]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.events) >= n, timeout)
            return [e[0] for e in self.events]


def test_established_is_told_off_the_io_thread_and_the_listener_may_use_the_connection(broker: Any) -> None:
    rec = Recorder()
    made: list[Any] = []

    class UsesConnection:
        def on_connection_established(self, uri: str) -> None:
            made.append(conn.create_session())  # no lock held, not the I/O thread: no deadlock

    conn = ConnectionFactory(f"amqp://127.0.0.1:{broker.port}").create_connection()
    with conn:
        conn.add_connection_listener(rec)
        conn.add_connection_listener(UsesConnection())
        conn.create_session()  # opens the connection
        assert rec.wait_for(1) == ["established"]
        _, uri, thread = rec.events[0]
        assert uri == f"amqp://127.0.0.1:{broker.port}"
        assert thread == "amqp-jms-connection-events"
        deadline = time.monotonic() + 5
        while not made and time.monotonic() < deadline:
            time.sleep(0.01)
        assert made, "the listener's create_session did not return"


def test_a_lost_connection_reaches_both_listeners_once(broker: Any) -> None:
    rec = Recorder()
    errors: list[JMSException] = []
    got = threading.Event()
    with FaultProxy(broker.port) as proxy:
        conn = ConnectionFactory(proxy.url).create_connection()
        conn.add_connection_listener(rec)
        conn.set_exception_listener(lambda e: (errors.append(e), got.set()))
        conn.start()
        assert rec.wait_for(1) == ["established"]
        proxy.drop()
        assert got.wait(5)
        assert rec.wait_for(2) == ["established", "failure"]
        assert isinstance(rec.events[1][1], JMSException) and rec.events[1][1] is errors[0]
        time.sleep(0.2)
        assert len(errors) == 1 and len(rec.events) == 2
        conn.close()


def test_interruption_drops_prefetched_messages_and_is_told(broker: Any) -> None:
    """What a failover provider reports when the connection drops: the consumers' prefetched
    messages are void (the broker redelivers them), the listeners hear it in order."""
    rec = Recorder()
    q = Queue("listener-interrupt")
    with ConnectionFactory(f"amqp://127.0.0.1:{broker.port}").create_connection() as conn:
        conn.add_connection_listener(rec)
        s = conn.create_session()
        producer = s.create_producer(q)
        for i in range(5):
            producer.send(s.create_text_message(str(i)))
        consumer = s.create_consumer(q)
        conn.start()
        deadline = time.monotonic() + 5
        while len(consumer._queue) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(consumer._queue) == 5
        uri = f"amqp://127.0.0.1:{broker.port}"
        conn.internal.on_connection_interrupted(uri)  # the provider's call (ProviderListener)
        assert len(consumer._queue) == 0
        conn.internal.on_connection_restored(uri)
        assert rec.wait_for(3) == ["established", "interrupted", "restored"]
        assert [e[1] for e in rec.events[1:]] == [uri, uri]


def test_a_failing_listener_does_not_silence_the_others_and_removal_works(broker: Any) -> None:
    class Broken:
        def on_connection_established(self, uri: str) -> None:
            raise RuntimeError("application bug")

    rec, removed = Recorder(), Recorder()
    with ConnectionFactory(f"amqp://127.0.0.1:{broker.port}").create_connection() as conn:
        conn.add_connection_listener(Broken())
        conn.add_connection_listener(rec)
        conn.add_connection_listener(removed)
        conn.remove_connection_listener(removed)
        with pytest.raises(TypeError, match="on_connection_established"):
            conn.add_connection_listener(object())  # would hear nothing: refused at once
        conn.create_session()
        assert rec.wait_for(1) == ["established"]
        assert removed.events == []


def test_the_asyncio_face_runs_listeners_on_the_event_loop(broker: Any) -> None:
    async def main() -> list[tuple[str, bool]]:
        seen: list[tuple[str, bool]] = []
        done = asyncio.Event()
        loop_thread = threading.current_thread()

        class AsyncListener:
            async def on_connection_established(self, uri: str) -> None:
                seen.append((uri, threading.current_thread() is loop_thread))
                done.set()

        conn = await AsyncConnectionFactory(f"amqp://127.0.0.1:{broker.port}").create_connection()
        async with conn:
            conn.add_connection_listener(AsyncListener())
            await conn.create_session()
            await asyncio.wait_for(done.wait(), 5)
        return seen

    assert asyncio.run(main()) == [(f"amqp://127.0.0.1:{broker.port}", True)]
