"""Broker features through raw proton: sole-connection, SASL, transactions, durability, limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from proton import ConnectionException, Message
from proton.handlers import MessagingHandler, TransactionHandler
from proton.reactor import Container
from proton.utils import BlockingConnection, ConnectionClosed

from amqp_jms.broker import Broker


def bodies(receiver: Any, timeout: float = 0.5, count: int = 0) -> list[Any]:
    """What arrives until ``timeout`` passes without a message. With ``count``, first that many,
    each waited for up to 10 s (a loaded machine paging from disk can pause longer than
    ``timeout``), then whatever else arrives within ``timeout``."""
    out: list[Any] = []
    for _ in range(count):
        m = receiver.receive(timeout=10)
        out.append(m.body)
        receiver.accept()
    while True:
        try:
            m = receiver.receive(timeout=timeout)
        except Exception:
            return out
        out.append(m.body)
        receiver.accept()


class _SoleOpen(MessagingHandler):
    """Opens a connection desiring sole-connection-for-container; records what came back."""

    def __init__(self, url: str, container_id: str, hold: bool) -> None:
        super().__init__()
        self.url, self.cid, self.hold = url, container_id, hold
        self.offered: set[str] = set()
        self.props: dict[Any, Any] = {}
        self.error: Any = None

    def on_start(self, event: Any) -> None:
        event.container.container_id = self.cid
        self.conn = event.container.connect(
            self.url, desired_capabilities=["sole-connection-for-container"], reconnect=False
        )

    def on_connection_opened(self, event: Any) -> None:
        c = event.connection
        self.offered = {str(x) for x in (c.remote_offered_capabilities or [])}
        self.props = dict(c.remote_properties or {})
        if not self.hold:
            c.close()

    def on_connection_error(self, event: Any) -> None:
        self.error = event.connection.remote_condition
        event.connection.close()

    def on_transport_error(self, event: Any) -> None:
        self.error = self.error or event.transport.condition


def test_sole_connection_for_container_is_offered_and_enforced(broker: Broker) -> None:
    first = Container()
    first.container_id = "sole-client"
    holder = BlockingConnection(
        broker.url, timeout=10, container=first, desired_capabilities=["sole-connection-for-container"]
    )
    try:
        assert holder.conn is not None
        assert "sole-connection-for-container" in {str(c) for c in holder.conn.remote_offered_capabilities}
        h = _SoleOpen(broker.url, "sole-client", hold=False)
        Container(h).run()
        assert h.error is not None and h.error.name == "amqp:invalid-field"
        assert str(h.error.info.get("invalid-field")) == "container-id"
        assert h.props.get("amqp:connection-establishment-failed") is True
    finally:
        holder.close()
    h = _SoleOpen(broker.url, "sole-client", hold=False)  # free again once the first closed
    Container(h).run()
    assert h.error is None and "sole-connection-for-container" in h.offered


def test_sasl_plain_with_users_file(broker_factory: Any, tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text("# test users\nalice:secret\n")
    b = broker_factory(users=str(users))
    port = b.port
    ok = BlockingConnection(f"amqp://alice:secret@127.0.0.1:{port}", timeout=10, allowed_mechs="PLAIN")
    ok.create_sender("authed").send(Message(body="in"))
    ok.close()
    with pytest.raises((ConnectionException, ConnectionClosed)) as err:
        BlockingConnection(f"amqp://alice:wrong@127.0.0.1:{port}", timeout=10, allowed_mechs="PLAIN")
    assert "auth" in str(err.value).lower()
    with pytest.raises((ConnectionException, ConnectionClosed)):
        BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=10, allowed_mechs="ANONYMOUS")


class _Tx(MessagingHandler, TransactionHandler):
    """Send ``sends`` and/or receive ``receive`` messages in one transaction, then commit/abort."""

    def __init__(self, url: str, address: str, sends: list[Any], receive: int, commit: bool) -> None:
        super().__init__(auto_accept=False, prefetch=0)
        self.url, self.address, self.sends, self.receive, self.commit = url, address, sends, receive, commit
        self.got: list[Any] = []
        self.outcome: str | None = None
        self.txn: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url)
        self.sender = event.container.create_sender(self.conn, self.address)
        if self.receive:
            self.receiver = event.container.create_receiver(self.conn, self.address)
        event.container.declare_transaction(self.conn, handler=self)

    def on_transaction_declared(self, event: Any) -> None:
        self.txn = event.transaction
        for body in self.sends:
            self.txn.send(self.sender, Message(body=body))
        if self.receive:
            self.receiver.flow(self.receive)
        else:
            self._finish()

    def on_message(self, event: Any) -> None:
        self.got.append(event.message.body)
        self.txn.accept(event.delivery)
        if len(self.got) == self.receive:
            self._finish()

    def _finish(self) -> None:
        if self.commit:
            self.txn.commit()
        else:
            self.txn.abort()

    def on_transaction_committed(self, event: Any) -> None:
        self.outcome = "committed"
        self.conn.close()

    def on_transaction_aborted(self, event: Any) -> None:
        self.outcome = "aborted"
        self.conn.close()

    def on_transaction_declare_failed(self, event: Any) -> None:
        self.outcome = "declare-failed"
        self.conn.close()


def run_tx(url: str, address: str, *, sends: list[Any] = (), receive: int = 0, commit: bool) -> _Tx:  # type: ignore[assignment]
    h = _Tx(url, address, list(sends), receive, commit)
    Container(h).run()
    return h


def test_transactional_send_is_visible_only_after_commit(broker: Broker) -> None:
    h = run_tx(broker.url, "txq", sends=["a", "b"], commit=False)
    assert h.outcome == "aborted"
    c = BlockingConnection(broker.url, timeout=10)
    r = c.create_receiver("txq")
    assert bodies(r) == []
    h = run_tx(broker.url, "txq", sends=["c", "d"], commit=True)
    assert h.outcome == "committed"
    assert bodies(r) == ["c", "d"]
    c.close()


def test_transactional_receive_rollback_returns_messages_with_count(broker: Broker) -> None:
    c = BlockingConnection(broker.url, timeout=10)
    s = c.create_sender("txr")
    s.send(Message(body="m1"))
    s.send(Message(body="m2"))
    h = run_tx(broker.url, "txr", receive=2, commit=False)
    assert h.outcome == "aborted" and h.got == ["m1", "m2"]
    r = c.create_receiver("txr")
    m = r.receive(timeout=5)
    assert m.body == "m1" and m.delivery_count == 1
    r.release(delivered=False)
    r.close()  # its prefetched messages go back for the next consumer
    h = run_tx(broker.url, "txr", receive=2, commit=True)
    assert h.outcome == "committed" and sorted(h.got) == ["m1", "m2"]
    r = c.create_receiver("txr", name="again")
    assert bodies(r) == []
    c.close()


def stored_broker(broker_factory: Any, data: Path, address: str, n: int) -> tuple[Any, Any, Any]:
    """A broker with a store in ``data``, ``n`` durable messages ``d0``… sent to ``address``,
    and the open connection and sender that sent them."""
    b = broker_factory(data_dir=str(data))
    c = BlockingConnection(b.url, timeout=10)
    s = c.create_sender(address)
    for i in range(n):
        s.send(Message(body=f"d{i}", durable=True))
    return b, c, s


def test_durable_messages_and_subscriptions_survive_restart(broker_factory: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    b, c, s = stored_broker(broker_factory, data, "persist", 5)
    s.send(Message(body="transient", durable=False))
    r = c.create_receiver("persist")
    assert r.receive(timeout=5).body == "d0"
    r.accept()
    c.close()
    b.stop()
    b2 = broker_factory(data_dir=str(data))
    c = BlockingConnection(b2.url, timeout=10)
    r = c.create_receiver("persist")
    assert bodies(r) == ["d1", "d2", "d3", "d4"]
    c.close()


def test_a_committed_transactional_receive_leaves_the_store(broker_factory: Any, tmp_path: Path) -> None:
    """The accepts of a committed transaction leave the store (in bulk, per queue): after a
    restart only the messages the transaction did not take come back."""
    data = tmp_path / "data"
    b, c, _ = stored_broker(broker_factory, data, "txstore", 6)
    c.close()
    h = run_tx(b.url, "txstore", receive=4, commit=True)
    assert h.outcome == "committed" and sorted(h.got) == ["d0", "d1", "d2", "d3"]
    b.stop()
    b2 = broker_factory(data_dir=str(data))
    c = BlockingConnection(b2.url, timeout=10)
    assert bodies(c.create_receiver("txstore")) == ["d4", "d5"]
    c.close()


def fail_deliveries(r: Any, times: int) -> None:
    """Receive on ``r`` and give the message back as a failed delivery attempt, ``times`` times
    (modified with delivery-failed)."""
    for _ in range(times):
        r.receive(timeout=5)
        r.fetcher.unsettled[0].local.failed = True
        r.release(delivered=True)


def test_max_delivery_attempts_moves_to_dlq(broker_factory: Any) -> None:
    b = broker_factory(max_delivery_attempts=2)
    c = BlockingConnection(b.url, timeout=10)
    c.create_sender("fragile").send(Message(body="boom"))
    r = c.create_receiver("fragile")
    fail_deliveries(r, 2)
    assert bodies(r) == []
    assert bodies(c.create_receiver("DLQ")) == ["boom"]
    c.close()


def test_deep_queue_pages_to_disk_and_keeps_order(broker_factory: Any) -> None:
    b = broker_factory(memory_limit=20_000)
    c = BlockingConnection(b.url, timeout=10)
    s = c.create_sender("deep")
    payload = "x" * 256
    for i in range(300):
        s.send(Message(body=f"{i:04d}{payload}", priority=4))
    q = b.run_soon(lambda: b.core.router.queues["deep"])
    assert b.run_soon(lambda: q.paged) > 0
    assert b.run_soon(lambda: q.byte_size) <= 20_000
    r = c.create_receiver("deep", credit=50)
    got = [body[:4] for body in bodies(r, count=300)]
    assert got == [f"{i:04d}" for i in range(300)]
    c.close()


def test_durable_subscription_backlog_survives_restart(broker_factory: Any, tmp_path: Path) -> None:
    from proton.reactor import Container as _C
    from test_broker_peer import Caps, Durable

    data = tmp_path / "subs"
    b = broker_factory(data_dir=str(data))
    cont = _C()
    cont.container_id = "restart-client"
    c = BlockingConnection(b.url, timeout=10, container=cont)
    r = c.create_receiver("rt", name="keep", options=[Caps("topic"), Durable()])
    r.detach()
    s = c.create_sender("rt", options=Caps("topic"))
    s.send(Message(body="p1", durable=True))
    s.send(Message(body="np", durable=False))
    c.close()
    b.stop()
    b2 = broker_factory(data_dir=str(data))
    cont = _C()
    cont.container_id = "restart-client"
    c = BlockingConnection(b2.url, timeout=10, container=cont)
    r = c.create_receiver("rt", name="keep", options=[Caps("topic"), Durable()])
    assert bodies(r) == ["p1"]
    c.close()


def test_drain_with_nothing_to_send_consumes_credit(broker: Broker) -> None:
    c = BlockingConnection(broker.url, timeout=10)
    r = c.create_receiver("empty-q", credit=0)
    r.link.drain(7)
    c.wait(lambda: r.link.credit == 0 and not r.link.draining(), timeout=5, msg="drain")
    c.create_sender("empty-q").send(Message(body="later"))
    r.link.flow(1)
    assert r.receive(timeout=5).body == "later"
    c.close()
