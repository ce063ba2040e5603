"""Asynchronous send with completion listeners (JMS 4.6.2) and delivery delay (JMS 4.12)."""

from __future__ import annotations

import threading
import time
from typing import Any

from amqp_jms import ConnectionFactory, IllegalStateException, Queue


class Recorder:
    def __init__(self) -> None:
        self.done: list[str] = []
        self.errors: list[tuple[str, Exception]] = []
        self.threads: set[str] = set()
        self.event = threading.Event()
        self.expect = 0

    def on_completion(self, message: Any) -> None:
        self.threads.add(threading.current_thread().name)
        self.done.append(str(message.get_body(str)))
        self._check()

    def on_exception(self, message: Any, exception: Exception) -> None:
        self.threads.add(threading.current_thread().name)
        self.errors.append((str(message.get_body(str)), exception))
        self._check()

    def _check(self) -> None:
        if len(self.done) + len(self.errors) >= self.expect:
            self.event.set()


def test_completion_listeners_run_in_send_order_on_a_session_thread(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as c:
        s = c.create_session()
        p = s.create_producer(Queue("async-q"))
        rec = Recorder()
        rec.expect = 50
        for i in range(50):
            p.send(s.create_text_message(f"m{i}"), completion_listener=rec)
        assert rec.event.wait(10)
        assert rec.done == [f"m{i}" for i in range(50)] and not rec.errors
        assert threading.current_thread().name not in rec.threads
        assert all(t.startswith("amqp-jms-completion") for t in rec.threads)
        c.start()
        cons = s.create_consumer(Queue("async-q"))
        assert [cons.receive(1000).get_body(str) for _ in range(50)] == [  # type: ignore[union-attr]
            f"m{i}" for i in range(50)
        ]


def test_callable_listener_and_positional_form(broker: Any) -> None:
    got: list[tuple[Any, Any]] = []
    ev = threading.Event()

    def listener(message: Any, exc: Exception | None) -> None:
        got.append((message.get_body(str), exc))
        ev.set()

    with ConnectionFactory(broker.url).create_connection() as c:
        s = c.create_session()
        p = s.create_producer(Queue("async-q2"))
        p.send(s.create_text_message("x"), listener)
        assert ev.wait(5)
    assert got == [("x", None)]


def test_session_close_waits_for_completions(broker: Any) -> None:
    rec = Recorder()
    rec.expect = 20
    with ConnectionFactory(broker.url).create_connection() as c:
        s = c.create_session()
        p = s.create_producer(Queue("async-close"))
        for i in range(20):
            p.send(s.create_text_message(f"c{i}"), completion_listener=rec)
        s.close()  # must block until every callback returned
        assert len(rec.done) == 20


def test_listener_may_not_close_its_own_session_or_commit(broker: Any) -> None:
    outcome: list[Exception] = []
    ev = threading.Event()
    with ConnectionFactory(broker.url).create_connection() as c:
        s = c.create_session(True)
        p = s.create_producer(Queue("async-tx"))

        class Closer:
            def on_completion(self, message: Any) -> None:
                for call in (s.close, s.commit, p.close, c.close):
                    try:
                        call()
                    except IllegalStateException as e:
                        outcome.append(e)
                ev.set()

            def on_exception(self, message: Any, exception: Exception) -> None:
                ev.set()

        p.send(s.create_text_message("tx"), completion_listener=Closer())
        assert ev.wait(5)
        assert len(outcome) == 4
        s.commit()


def test_delivery_delay_holds_the_message(broker: Any) -> None:
    with ConnectionFactory(broker.url).create_connection() as c:
        c.start()
        s = c.create_session()
        p = s.create_producer(Queue("delayed"))
        p.set_delivery_delay(700)
        assert p.get_delivery_delay() == 700
        before = int(time.time() * 1000)
        msg = s.create_text_message("later")
        p.send(msg)
        assert msg.get_jms_delivery_time() >= before + 700
        p.set_delivery_delay(0)
        p.send(s.create_text_message("now"))
        cons = s.create_consumer(Queue("delayed"))
        first = cons.receive(500)
        assert first is not None and first.get_body(str) == "now"
        assert cons.receive(200) is None  # not due yet
        late = cons.receive(3000)
        assert late is not None and late.get_body(str) == "later"
        assert int(time.time() * 1000) >= before + 700


def test_completion_thread_ends_with_the_connection(broker: Any) -> None:
    ev = threading.Event()
    with ConnectionFactory(broker.url).create_connection() as c:
        s = c.create_session()
        s.create_producer(Queue("async-leak")).send(s.create_text_message("x"),
                                                    completion_listener=lambda m, e: ev.set())
        assert ev.wait(5)
        names = [t.name for t in threading.enumerate() if t.name.startswith("amqp-jms-completion")]
        assert names
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(
        t.name in names and t.is_alive() for t in threading.enumerate()
    ):
        time.sleep(0.05)
    assert not [t for t in threading.enumerate() if t.name in names and t.is_alive()]
