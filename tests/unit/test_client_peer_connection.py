"""Connection behaviour, frame by frame against the scripted test peer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from amqp_jms import (
    ConnectionFactory,
    IllegalStateException,
    InvalidClientIDException,
    JMSException,
    JMSSecurityException,
)
from amqp_jms.testing.peer import Open, TestPeer


@pytest.fixture
def peer() -> Iterator[TestPeer]:
    with TestPeer() as p:
        yield p


FAST = "?jms.closeTimeout=2000&jms.requestTimeout=5000"


_PREEXISTING: set[threading.Thread] = set()


@pytest.fixture(autouse=True)
def _snapshot_threads() -> None:
    """Threads left by earlier tests in the same process are not this test's leak."""
    _PREEXISTING.clear()
    _PREEXISTING.update(threading.enumerate())


def _io_threads() -> list[threading.Thread]:
    """amqp-jms threads this test started that are still alive."""
    return [
        t for t in threading.enumerate() if t.name.startswith("amqp-jms") and t not in _PREEXISTING
    ]


def test_open_without_client_id_uses_generated_container_and_no_sole_connection(peer: TestPeer) -> None:
    seen: list[Open] = []
    peer.expect_open(seen.append)
    peer.expect_begin()
    peer.expect_end()
    peer.expect_close()
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        conn.create_session()
    peer.wait()
    o = seen[0]
    assert o.container_id.startswith("ID:")
    assert set(o.desired_capabilities) == {"DELAYED_DELIVERY", "ANONYMOUS-RELAY", "SHARED-SUBS"}
    assert o.properties["product"] == "amqp-jms"
    assert o.hostname == "127.0.0.1"


def test_open_with_client_id_asks_for_sole_connection(peer: TestPeer) -> None:
    seen: list[Open] = []
    peer.expect_open(seen.append)
    peer.expect_close()
    with ConnectionFactory(peer.url + FAST, client_id="app-1").create_connection() as conn:
        assert conn.get_client_id() == "app-1"
    peer.wait()
    assert seen[0].container_id == "app-1"
    assert "sole-connection-for-container" in seen[0].desired_capabilities


def test_set_client_id_before_first_use_names_the_container(peer: TestPeer) -> None:
    seen: list[Open] = []
    peer.expect_open(seen.append)
    peer.expect_close()
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        conn.set_client_id("late")
        with pytest.raises(IllegalStateException):
            conn.set_client_id("again")
    peer.wait()
    assert seen[0].container_id == "late"


def test_set_client_id_after_use_is_illegal(peer: TestPeer) -> None:
    peer.expect_open()
    peer.expect_begin()
    peer.expect_end()
    peer.expect_close()
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        conn.create_session()
        with pytest.raises(IllegalStateException):
            conn.set_client_id("too-late")
    peer.wait()


def test_refused_container_id_is_invalid_client_id(peer: TestPeer) -> None:
    peer.expect_open(refuse=("amqp:invalid-field", "container-id already in use"))
    with pytest.raises(InvalidClientIDException, match="container-id already in use"):
        ConnectionFactory(peer.url + FAST, client_id="dup").create_connection()
    peer.wait()
    time.sleep(0.05)
    assert not _io_threads()


def test_offered_capabilities_and_prefixes_are_read(peer: TestPeer) -> None:
    peer.expect_open(offered_capabilities=["ANONYMOUS-RELAY", "DELAYED_DELIVERY"],
                     properties={"queue-prefix": "queue://", "topic-prefix": "topic://"})
    peer.expect_begin()
    peer.expect_attach(lambda a: a.target_address == "queue://orders", offer=5)  # as Qpid JMS
    peer.expect_transfer(lambda t: t.message.address == "queue://orders")
    peer.expect_detach()
    peer.expect_end()
    peer.expect_close()
    from amqp_jms import Queue

    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        s = conn.create_session()
        s.create_producer(Queue("orders")).send(s.create_text_message("x"))
        assert conn._provider.remote_capabilities == {"ANONYMOUS-RELAY", "DELAYED_DELIVERY"}
    peer.wait()


def test_sasl_failure_is_security_exception() -> None:
    with TestPeer(sasl_mechanisms="EXTERNAL") as peer:
        f = ConnectionFactory(peer.url + "?amqp.saslMechanisms=PLAIN", username="u", password="p")
        conn = f.create_connection()
        with pytest.raises(JMSSecurityException):
            conn.create_session()
        conn.close()
    assert not _io_threads()


def test_connect_failure_is_jms_exception_and_leaks_no_thread() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    conn = ConnectionFactory(f"amqp://127.0.0.1:{port}").create_connection()
    with pytest.raises(JMSException, match="could not connect"):
        conn.start()
    conn.close()
    assert not _io_threads()


def test_connection_loss_calls_exception_listener_and_wakes_receivers(peer: TestPeer) -> None:
    from amqp_jms import Queue

    peer.expect_open()
    peer.expect_begin()
    peer.expect_attach()
    peer.expect_flow()
    errors: list[JMSException] = []
    got = threading.Event()
    conn = ConnectionFactory(peer.url + FAST).create_connection()
    conn.set_exception_listener(lambda e: (errors.append(e), got.set()))
    s = conn.create_session()
    c = s.create_consumer(Queue("q"))
    conn.start()
    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(c.receive()))
    t.start()
    peer.wait()
    peer.drop()
    assert got.wait(5)
    t.join(5)
    assert result == [None]
    assert isinstance(errors[0], JMSException)
    # a later receive raises, naming why (Qpid JMS: the consumer closed by an unrecoverable error)
    from amqp_jms import IllegalStateException

    with pytest.raises(IllegalStateException, match="unrecoverable") as raised:
        c.receive_no_wait()
    assert raised.value.linked_exception is not None
    conn.close()
    assert not _io_threads()


def test_peer_closing_connection_with_error_reaches_listener(peer: TestPeer) -> None:
    peer.expect_open()
    peer.expect_begin()
    errors: list[JMSException] = []
    got = threading.Event()
    conn = ConnectionFactory(peer.url + FAST).create_connection()
    conn.set_exception_listener(lambda e: (errors.append(e), got.set()))
    conn.create_session()
    peer.wait()
    peer.close_connection(("amqp:connection:forced", "broker shutting down"))
    assert got.wait(5)
    assert errors[0].error_code == "amqp:connection:forced"
    assert "broker shutting down" in str(errors[0])
    conn.close()


def test_close_is_idempotent_and_stops_the_io_thread(peer: TestPeer) -> None:
    peer.expect_open()
    peer.expect_begin()
    peer.expect_end()
    peer.expect_close()
    conn = ConnectionFactory(peer.url + FAST).create_connection()
    conn.create_session()
    assert _io_threads()
    conn.close()
    conn.close()
    peer.wait()
    assert not _io_threads()
    with pytest.raises(IllegalStateException):
        conn.create_session()


def test_blocking_call_on_the_io_thread_is_refused(peer: TestPeer) -> None:
    peer.expect_open()
    peer.expect_close()
    with ConnectionFactory(peer.url + FAST).create_connection() as conn:
        conn.start()
        lt = conn._provider.loop_thread
        out: list[BaseException] = []

        async def probe() -> None:
            async def noop() -> None:
                return None

            try:
                lt.run(noop(), 1.0)
            except BaseException as e:
                out.append(e)

        lt.run(probe(), 5.0)
        assert isinstance(out[0], IllegalStateException)
    peer.wait()


def test_metadata() -> None:
    with TestPeer() as peer:
        peer.expect_open()
        peer.expect_close()
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            md = conn.get_meta_data()
        assert md.get_jms_version() == "2.0" and md.get_jms_major_version() == 2
        assert md.get_jms_provider_name() == "amqp-jms"
        assert "JMSXDeliveryCount" in md.get_jmsx_property_names()


def test_heartbeats_keep_an_idle_connection_alive() -> None:
    # the peer gives up after 1 s of silence and the client beats every 0.25 s (a quarter of it,
    # as proton does): a loaded machine may wake the I/O thread up to 0.75 s late (with 0.4 s,
    # only 0.3 s)
    with TestPeer(idle_timeout_s=1.0) as peer:
        peer.expect_open()
        peer.expect_begin()
        errors: list[JMSException] = []
        with ConnectionFactory(peer.url + FAST).create_connection() as conn:
            conn.set_exception_listener(errors.append)
            conn.start()
            time.sleep(2.5)  # more than two of the peer's idle timeouts
            conn.create_session()
            peer.wait()
        assert errors == []


def test_vhost_is_the_open_hostname(peer: TestPeer) -> None:
    seen: list[Open] = []
    peer.expect_open(seen.append)
    peer.expect_close()
    with ConnectionFactory(peer.url + FAST + "&amqp.vhost=tenant-a").create_connection() as conn:
        conn.start()
    peer.wait()
    assert seen[0].hostname == "tenant-a"
