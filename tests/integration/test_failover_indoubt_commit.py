"""In-doubt commits told truly (issue 26, item 5): a commit whose Discharge reached the broker
but whose answer was lost with the connection (the fault proxy drops the answer, then the
connection; or the broker is SIGKILLed between the two).

Qpid JMS reports every such commit rolled back, and with the embedded broker that was wrong: a
producer's batch was on the queue in full (an application that retries sends it twice), and
consumed messages were gone though the application was told they would come back. The broker's
coordinator now offers ``amqp-jms:txn-outcomes``, the failover connection asks on the next
connection, and ``commit()`` returns when the broker committed and raises
TransactionRolledBackException only when it did not. A broker that does not offer it (here:
``max_txn_outcomes = 0``) gets today's answer.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, JMSException, Queue, Session, TransactionRolledBackException
from amqp_jms.broker import BrokerLimits
from amqp_jms.testing import FaultProxy
from amqp_jms.testing.broker_process import RestartableBroker

#: a Discharge's body as it goes on the wire: amqp-value(discharge:list[...])
DISCHARGE = b"\x00\x53\x77\x00\x53\x32"
FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=200"
N = 5


def wait_for(cond: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


class Commit:
    """``session.commit()`` on a thread of its own: what it raised, once it returned."""

    def __init__(self, session: Any) -> None:
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(session,), daemon=True)
        self._thread.start()

    def _run(self, session: Any) -> None:
        try:
            session.commit()
        except BaseException as e:  # reported to the test
            self.error = e

    def result(self, timeout: float = 30.0) -> BaseException | None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "commit() did not return"
        return self.error


def _answer_lost(proxy: FaultProxy, session: Any, applied: Callable[[], bool]) -> BaseException | None:
    """Commit with the broker's answers silenced; once ``applied()`` says the broker acted on the
    Discharge, drop the connection (the answer is lost for good); what commit() raised."""
    proxy.silence_target()
    commit = Commit(session)
    wait_for(applied)
    proxy.drop()
    return commit.result()


def _discharge_lost(proxy: FaultProxy, session: Any) -> BaseException | None:
    """Commit into a black hole: the Discharge reaches the proxy, never the broker."""
    proxy.blackhole()
    commit = Commit(session)
    wait_for(lambda: DISCHARGE in proxy.dropped)
    proxy.drop()
    return commit.result()


def _drain(url: str, name: str, wait: float = 0.5) -> list[str]:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        s = conn.create_session(False, Session.AUTO_ACKNOWLEDGE)
        c = s.create_consumer(Queue(name))
        got: list[str] = []
        while (m := c.receive(wait)) is not None:
            got.append(m.get_text())
        return got


def _send(url: str, name: str, n: int = N) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session(False, Session.AUTO_ACKNOWLEDGE)
        p = s.create_producer(Queue(name))
        for i in range(n):
            p.send(s.create_text_message(f"m{i}"))


def _transacted_batch(conn: Any, name: str) -> tuple[Any, Any]:
    """A transacted session and its producer, with N messages sent to ``name`` uncommitted."""
    s = conn.create_session(True, Session.SESSION_TRANSACTED)
    p = s.create_producer(Queue(name))
    for i in range(N):
        p.send(s.create_text_message(f"m{i}"))
    return s, p


def _depth(broker: Any, name: str) -> tuple[int, int]:
    q = broker.metrics().queue(name)
    return (q.depth, q.delivering) if q is not None else (0, 0)


# -- the answer dropped by the proxy (an in-process broker) ----------------------------------
@pytest.fixture
def proxy(broker: Any) -> Iterator[FaultProxy]:
    with FaultProxy(broker.port) as p:
        yield p


def test_a_producer_batch_committed_whose_answer_was_lost_commits_once(
    broker: Any, proxy: FaultProxy
) -> None:
    with ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        s, p = _transacted_batch(conn, "batch")
        error = _answer_lost(proxy, s, lambda: _depth(broker, "batch")[0] == N)
        assert error is None, f"commit() raised {error!r} for a transaction the broker committed"
        p.send(s.create_text_message("after"))  # the session carries on in a new transaction
        s.commit()
    assert _drain(broker.url, "batch") == [*(f"m{i}" for i in range(N)), "after"]


def test_consumed_messages_committed_whose_answer_was_lost_are_not_redelivered(
    broker: Any, proxy: FaultProxy
) -> None:
    _send(broker.url, "acks")
    with ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        conn.start()
        s = conn.create_session(True, Session.SESSION_TRANSACTED)
        c = s.create_consumer(Queue("acks"))
        got = [c.receive(5).get_text() for _ in range(N)]
        assert got == [f"m{i}" for i in range(N)]
        error = _answer_lost(proxy, s, lambda: broker.metrics().queue("acks").dequeued == N)
        assert error is None, f"commit() raised {error!r} for a transaction the broker committed"
        assert c.receive(0.5) is None  # nothing comes back: the broker took them
    assert _drain(broker.url, "acks") == []
    assert broker.metrics().queue("acks").dequeued == N


def test_a_commit_that_never_reached_the_broker_still_raises_rolled_back(
    broker: Any, proxy: FaultProxy
) -> None:
    with ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        s, p = _transacted_batch(conn, "lost")
        error = _discharge_lost(proxy, s)
        assert isinstance(error, TransactionRolledBackException), repr(error)
        assert "the broker says it did not commit" in str(error)
        p.send(s.create_text_message("again"))
        s.commit()
    assert _drain(broker.url, "lost") == ["again"]


def test_a_broker_that_keeps_no_outcomes_gets_the_old_answer(broker_factory: Any) -> None:
    """``max_txn_outcomes = 0``: the coordinator offers nothing, and the client reports what
    Qpid JMS reports (rolled back) although the broker committed: what every other broker gets."""
    b = broker_factory(limits=BrokerLimits(queue_memory_limit=0, max_txn_outcomes=0))
    with FaultProxy(b.port) as proxy, \
            ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        s, _ = _transacted_batch(conn, "old")
        error = _answer_lost(proxy, s, lambda: _depth(b, "old")[0] == N)
        assert isinstance(error, TransactionRolledBackException), repr(error)
    assert len(_drain(b.url, "old")) == N  # it was committed all the same


def test_a_forgotten_outcome_is_reported_unknown_not_guessed(broker_factory: Any) -> None:
    """Kept for a millisecond only (``txn_outcome_seconds``): by the time the client asks, the
    broker cannot tell, and the commit says so instead of guessing either way."""
    b = broker_factory(limits=BrokerLimits(queue_memory_limit=0, txn_outcome_seconds=0.001))
    with FaultProxy(b.port) as proxy, \
            ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        s, _ = _transacted_batch(conn, "forgotten")
        error = _answer_lost(proxy, s, lambda: _depth(b, "forgotten")[0] == N)
        assert type(error) is JMSException and error.error_code == "amqp:transaction:unknown-id", repr(error)
        assert "outcome is unknown" in str(error)
    assert len(_drain(b.url, "forgotten")) == N


# -- kill -9 between the Discharge and its answer (a broker subprocess on a store) -----------
@pytest.fixture
def crashable(tmp_path: Path) -> Iterator[RestartableBroker]:
    b = RestartableBroker(str(tmp_path / "store"))
    try:
        yield b
    finally:
        b.stop()


def _outcomes_stored(b: RestartableBroker) -> int:
    db = sqlite3.connect(f"file:{b.data_dir}/broker.sqlite?mode=ro", uri=True, timeout=5)
    try:
        return int(db.execute("SELECT count(*) FROM txn_outcomes").fetchone()[0])
    finally:
        db.close()


def _killed_after_commit(b: RestartableBroker, proxy: FaultProxy, session: Any) -> BaseException | None:
    """Commit with the answers silenced; once the commit is in the store, SIGKILL the broker
    (its answer never leaves) and start it again on the same store and port."""
    before = _outcomes_stored(b)
    proxy.silence_target()
    commit = Commit(session)
    wait_for(lambda: _outcomes_stored(b) > before)
    b.kill()
    b.start()
    return commit.result()


@pytest.mark.parametrize("side", ["producer", "consumer"])
def test_kill_9_between_the_discharge_and_its_answer(crashable: RestartableBroker, side: str) -> None:
    direct = f"amqp://127.0.0.1:{crashable.port}"
    with FaultProxy(crashable.port) as proxy, \
            ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        conn.start()
        if side == "producer":
            s, _ = _transacted_batch(conn, "crash")
        else:
            s = conn.create_session(True, Session.SESSION_TRANSACTED)
            _send(direct, "crash")
            c = s.create_consumer(Queue("crash"))
            assert [c.receive(5).get_text() for _ in range(N)] == [f"m{i}" for i in range(N)]
        error = _killed_after_commit(crashable, proxy, s)
        assert error is None, f"commit() raised {error!r} for a transaction the broker committed"
    expected = [f"m{i}" for i in range(N)] if side == "producer" else []
    assert _drain(direct, "crash") == expected


def test_kill_9_before_the_discharge_arrived_raises_rolled_back(crashable: RestartableBroker) -> None:
    direct = f"amqp://127.0.0.1:{crashable.port}"
    _send(direct, "crash")
    with FaultProxy(crashable.port) as proxy, \
            ConnectionFactory(f"failover:({proxy.url})?{FAST}").create_connection() as conn:
        conn.start()
        s = conn.create_session(True, Session.SESSION_TRANSACTED)
        c = s.create_consumer(Queue("crash"))
        assert [c.receive(5).get_text() for _ in range(N)] == [f"m{i}" for i in range(N)]
        proxy.blackhole()
        commit = Commit(s)
        wait_for(lambda: DISCHARGE in proxy.dropped)
        crashable.kill()
        crashable.start()
        error = commit.result()
        assert isinstance(error, TransactionRolledBackException), repr(error)
        assert "the broker says it did not commit" in str(error)
    assert _drain(direct, "crash") == [f"m{i}" for i in range(N)]  # they come back
