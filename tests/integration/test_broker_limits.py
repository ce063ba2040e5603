"""Each broker limit refused with the AMQP error the JMS client maps to a typed exception."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_broker_robustness import cert  # noqa: F401 (fixture)

from amqp_jms import (
    ConnectionFactory,
    JMSException,
    ResourceAllocationException,
    SendFailedException,
    TransactionRolledBackException,
)
from amqp_jms.broker.limits import AddressFullPolicy, BrokerLimits


def test_message_over_max_message_size_is_refused_typed(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(max_message_size=200_000))
    with ConnectionFactory(b.url).create_connection() as conn:
        s = conn.create_session()
        q = s.create_queue("big")
        p = s.create_producer(q)
        p.send(bytes_msg(s, 100_000))  # under the limit
        with pytest.raises(ResourceAllocationException, match="max-message-size of 200000") as exc:
            p.send(bytes_msg(s, 300_000))
        assert exc.value.error_code == "amqp:link:message-size-exceeded"
        # the connection carries on: a new producer works and the first message is there
        s.create_producer(q).send(s.create_text_message("after"))
        conn.start()
        c = s.create_consumer(q)
        assert len(c.receive(5000).get_body(bytes)) == 100_000
        assert c.receive(5000).get_text() == "after"


def test_links_over_max_links_per_connection_are_refused_typed(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(max_links_per_connection=3))
    with ConnectionFactory(b.url).create_connection() as conn:
        s = conn.create_session()
        consumers = [s.create_consumer(s.create_queue(f"l{i}")) for i in range(3)]
        with pytest.raises(ResourceAllocationException, match="max_links_per_connection"):
            s.create_consumer(s.create_queue("l3"))
        consumers[0].close()
        s.create_consumer(s.create_queue("l3"))  # room again


def test_sessions_over_max_sessions_per_connection_are_refused_typed(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(max_sessions_per_connection=2))
    with ConnectionFactory(b.url).create_connection() as conn:
        conn.create_session()
        conn.create_session()
        with pytest.raises(ResourceAllocationException, match="max_sessions_per_connection"):
            conn.create_session().create_producer(None)  # refused at once, or on first use


def test_connections_over_max_connections_per_user_are_refused_typed(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(max_connections_per_user=2))
    f = ConnectionFactory(b.url)
    first, second = f.create_connection(), f.create_connection()
    first.start()  # a connection without a client id connects on first use
    second.start()
    try:
        third = f.create_connection()
        with pytest.raises(ResourceAllocationException, match="max_connections_per_user"):
            third.start()
        third.close()
        first.close()
        again = f.create_connection()
        again.start()  # room again
        again.close()
    finally:
        first.close()
        second.close()


def bytes_msg(session: Any, n: int) -> Any:
    m = session.create_bytes_message()
    m.write_bytes(b"x" * n)
    return m


class Producer:
    """A JMS producer to one queue: on a named link, through the anonymous relay, or in a
    transaction (committed every ``commit_every`` sends) -- the address-full policy holds for each."""

    def __init__(self, conn: Any, queue: str, via: str, commit_every: int = 1) -> None:
        self.commit_every = commit_every
        self.sent = 0
        self.session = conn.create_session(via == "transaction")
        self.queue = self.session.create_queue(queue)
        self.via = via
        self.p = self.session.create_producer(None if via == "relay" else self.queue)

    def send(self, n: int) -> None:
        m = bytes_msg(self.session, n)
        if self.via == "relay":
            self.p.send(self.queue, m)
        else:
            self.p.send(m)
        self.sent += 1
        if self.via == "transaction" and self.sent % self.commit_every == 0:
            self.session.commit()


VIAS = ["named", "relay", "transaction"]


@pytest.mark.parametrize("via", VIAS)
def test_address_full_policy_fail_rejects_sends_to_a_full_queue_typed(broker_factory: Any, via: str) -> None:
    b = broker_factory(
        limits=BrokerLimits(queue_memory_limit=50_000, address_full_policy=AddressFullPolicy.FAIL)
    )
    with ConnectionFactory(b.url).create_connection() as conn:
        p = Producer(conn, "full-fail", via)
        sent = 0
        # a transacted send does not wait (issue 16, as Qpid JMS): the refusal fails its commit
        refused = TransactionRolledBackException if via == "transaction" else SendFailedException
        with pytest.raises(refused, match="address-full-policy FAIL") as exc:
            for _ in range(100):
                p.send(1000)
                sent += 1
        assert exc.value.error_code == "amqp:resource-limit-exceeded"
        assert 30 <= sent <= 50  # 50 kB of 1 kB bodies plus their headers
        conn.start()
        s = conn.create_session()
        c = s.create_consumer(s.create_queue("full-fail"))
        for _ in range(sent):
            assert c.receive(5000) is not None
        assert c.receive(200) is None  # the refused message is not there
        p.send(1000)  # room again


@pytest.mark.parametrize(
    ("limits", "via"),
    [
        *((BrokerLimits(queue_memory_limit=50_000, address_full_policy=AddressFullPolicy.BLOCK), via)
          for via in VIAS),
        (BrokerLimits(max_memory=50_000), "named"),  # PAGE, but the broker-wide memory limit is reached
    ],
    ids=[*(f"block-policy-{via}" for via in VIAS), "max-memory"],
)
def test_a_full_queue_or_broker_withholds_producer_credit(
    broker_factory: Any, limits: BrokerLimits, via: str
) -> None:
    b = broker_factory(limits=limits)
    sent = []
    total = 3000
    with ConnectionFactory(b.url).create_connection() as conn:
        p = Producer(conn, "full-block", via, commit_every=10)

        def produce() -> None:
            for _ in range(total):
                p.send(1000)
                sent.append(1)

        t = threading.Thread(target=produce, daemon=True)
        t.start()
        # the credit granted before the queue filled is used up first (up to a window, 2,000)
        blocked_at, deadline = -1, time.monotonic() + 60
        while len(sent) != blocked_at and len(sent) < total and time.monotonic() < deadline:
            blocked_at = len(sent)
            time.sleep(1.0)
        assert len(sent) == blocked_at < total, f"the producer was never blocked ({len(sent)} sent)"
        reader = conn.create_session()
        conn.start()
        c = reader.create_consumer(reader.create_queue("full-block"))
        got = 0
        while got < total:
            assert c.receive(10_000) is not None, f"stuck after {got} (sent {len(sent)})"
            got += 1
        t.join(10)
        assert len(sent) == total


@pytest.mark.parametrize(
    "limits",
    [
        BrokerLimits(queue_memory_limit=50_000, address_full_policy=AddressFullPolicy.BLOCK),
        BrokerLimits(max_memory=50_000),
    ],
    ids=["block-policy", "max-memory"],
)
def test_an_uncommitted_transaction_counts_against_the_limits(
    broker_factory: Any, limits: BrokerLimits
) -> None:
    """Sends held for a commit are counted where they go: a transaction that never commits
    cannot grow the broker's memory past the limits."""
    b = broker_factory(limits=limits)
    sent = []
    with ConnectionFactory(b.url).create_connection() as conn:
        p = Producer(conn, "txn-held", "transaction", commit_every=1 << 30)
        # more than the credit granted before the limit (2,000) plus the client's send window
        # (1,024 messages waiting for credit: transacted sends do not wait for their outcome)
        total = 5000

        def produce() -> None:
            try:
                for _ in range(total):
                    p.send(1000)
                    sent.append(1)
            except JMSException:
                pass  # the connection closes under the blocked send at the end of the test

        t = threading.Thread(target=produce, daemon=True)
        t.start()
        blocked_at, deadline = -1, time.monotonic() + 60
        while len(sent) != blocked_at and len(sent) < total and time.monotonic() < deadline:
            blocked_at = len(sent)
            time.sleep(1.0)
        assert len(sent) == blocked_at < total, f"the producer was never blocked ({len(sent)} sent)"


def test_large_messages_stream_through_a_file_and_survive_a_restart(
    broker_factory: Any, tmp_path: Path
) -> None:
    """Over the threshold a message is spooled to a file as it arrives and sent out in chunks:
    durable store (a file each beside the database), selectors, the anonymous relay, redelivery
    and a restart all still see it."""
    data = tmp_path / "data"
    limits = BrokerLimits(large_message_threshold=64 * 1024)
    b = broker_factory(data_dir=data, limits=limits)
    body = bytes(range(256)) * 4096  # 1 MiB
    with ConnectionFactory(b.url).create_connection() as conn:
        s = conn.create_session()
        q = s.create_queue("large-q")
        for i in range(3):
            m = bytes_msg(s, 0)
            m.write_bytes(body)
            m.set_int_property("i", i)
            s.create_producer(None).send(q, m)  # through the anonymous relay
        conn.start()
        c = s.create_consumer(q, "i = 1")
        got = c.receive(5000)
        assert got.get_int_property("i") == 1 and got.get_body(bytes) == body
        c.close()
    b.stop()
    assert len(list((data / "large").iterdir())) == 2  # a file each, the consumed one's deleted
    (data / "large" / "12345").write_bytes(b"left by a crash before its row committed")
    b2 = broker_factory(data_dir=data, limits=limits)
    assert len(list((data / "large").iterdir())) == 2  # the orphan is deleted at start
    with ConnectionFactory(b2.url).create_connection() as conn:
        conn.start()
        s = conn.create_session(False, 2)  # CLIENT_ACKNOWLEDGE: recover redelivers
        c = s.create_consumer(s.create_queue("large-q"))
        first = c.receive(5000)
        assert first.get_int_property("i") == 0 and first.get_body(bytes) == body
        s.recover()
        again = c.receive(5000)
        assert again.get_jms_redelivered() and again.get_body(bytes) == body
        second = c.receive(5000)
        assert second.get_int_property("i") == 2 and second.get_body(bytes) == body
        second.acknowledge()


def test_a_silent_peer_on_the_tls_port_is_cut_off_at_the_handshake_timeout(
    broker_factory: Any, cert: tuple[Path, Path],  # noqa: F811 (the imported fixture)
) -> None:
    crt, key = cert
    b = broker_factory(tls_cert=str(crt), tls_key=str(key), limits=BrokerLimits(handshake_timeout=1.0))
    host, port = b.url.rsplit("/", 1)[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    t0 = time.monotonic()
    try:
        assert sock.recv(1) == b""  # no TLS ClientHello ever: the broker closes
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    assert time.monotonic() - t0 < 3.0


def test_new_addresses_beyond_max_nodes_are_refused_typed(broker_factory: Any) -> None:
    b = broker_factory(limits=BrokerLimits(max_nodes=5))
    with ConnectionFactory(b.url).create_connection() as conn:
        s = conn.create_session()
        made = 0
        with pytest.raises(ResourceAllocationException, match="max_nodes"):
            for i in range(10):
                s.create_producer(s.create_queue(f"node-{i}")).close()
                made += 1
        assert made == 5
        s.create_producer(s.create_queue("node-0")).close()  # existing ones still work


def test_a_drain_held_back_by_write_back_pressure_is_not_reported_empty(broker_factory: Any) -> None:
    from proton import Message
    from proton.utils import BlockingConnection

    b = broker_factory(limits=BrokerLimits(write_buffer_high=3000, write_buffer_low=1000))
    conn = BlockingConnection(b.url, timeout=10)
    try:
        snd = conn.create_sender("pressed")
        for _ in range(30):
            snd.send(Message(body=b"x" * 1000))
        rcv = conn.create_receiver("pressed", credit=0)
        rcv.link.drain(30)  # all 30 are there: a drain must not end before they are sent
        conn.wait(lambda: rcv.link.credit == 0, timeout=10, msg="drain never ended")
        assert len(rcv.fetcher.incoming) == 30  # not drained early with messages still queued
    finally:
        conn.close()


def test_a_refused_send_rolls_its_transaction_back_and_only_that_one(broker_factory: Any) -> None:
    # transacted sends do not wait for their outcome (issue 16), so the refusal of one may arrive
    # after the client wrote the discharge: the broker must then fail that commit (the client
    # heard "committed" for a transaction that had lost a message), and the refusal must not be
    # charged to the next transaction
    b = broker_factory(
        limits=BrokerLimits(queue_memory_limit=5_000, address_full_policy=AddressFullPolicy.FAIL)
    )
    with ConnectionFactory(b.url).create_connection() as conn:
        s = conn.create_session(True)
        p = s.create_producer(s.create_queue("txn-fail"))
        other = s.create_producer(s.create_queue("txn-other"))
        for _ in range(3):
            p.send(bytes_msg(s, 1000))
        s.commit()
        other.send(bytes_msg(s, 10))
        for _ in range(10):  # the queue fills: one of these is refused
            p.send(bytes_msg(s, 1000))
        with pytest.raises(TransactionRolledBackException, match="address-full-policy FAIL"):
            s.commit()
        other.send(bytes_msg(s, 10))  # the next transaction is not charged with the refusal
        s.commit()
        conn.start()
        reader = conn.create_session()
        c = reader.create_consumer(reader.create_queue("txn-other"))
        assert c.receive(5000) is not None  # the second transaction's message only:
        assert c.receive(300) is None  # the first one's was rolled back with the refused send


def test_open_transactions_per_connection_are_limited_typed(broker_factory: Any) -> None:
    # a peer could declare transactions without end (each one held until discharged)
    b = broker_factory(limits=BrokerLimits(max_transactions_per_connection=2))
    with ConnectionFactory(b.url).create_connection() as conn:
        first, second = conn.create_session(True), conn.create_session(True)
        with pytest.raises(ResourceAllocationException, match="max_transactions_per_connection"):
            conn.create_session(True)
        second.close()  # its transaction is discharged (rolled back): room again
        third = conn.create_session(True)
        third.create_producer(third.create_queue("txn-limit")).send(bytes_msg(third, 10))
        third.commit()
        first.commit()
