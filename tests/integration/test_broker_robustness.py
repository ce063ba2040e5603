"""The broker against hostile or unusual peers: bad frames, silence, TLS, the command line."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from proton import Message, SSLDomain
from proton.utils import BlockingConnection
from test_broker_peer import raw_socket

from amqp_jms.broker import Broker
from amqp_jms.engine import Engine


def read_until_closed(sock: Any, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while chunk := sock.recv(65536):  # a timeout (socket left open) fails the test
        data += chunk
    return data


def still_serves(broker: Broker) -> None:
    c = BlockingConnection(broker.url, timeout=10)
    c.create_sender("alive").send(Message(body="ok"))
    r = c.create_receiver("alive")
    assert r.receive(timeout=5).body == "ok"
    r.accept()
    c.close()


def client_open_bytes() -> bytes:
    e = Engine(server=False)
    e.connection.container = "raw"
    e.connection.open()
    list(e.events())
    return e.data_to_send()


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\x00\x00\x0c\x02\x00\x00\x00\x00\x53\x99\x45",  # unknown performative
        b"\x00\x10\x00\x00\x02\x00\x00\x00" + b"\x00" * 64,  # frame larger than max-frame-size
        b"\x00\x00\x00\x04\x02\x00\x00\x00",  # frame size below the header size
        b"HTTP/1.1 200 OK\r\n\r\n",  # not AMQP at all
    ],
)
def test_bad_frames_close_only_that_connection(broker: Broker, garbage: bytes) -> None:
    sock = raw_socket(broker.url)
    sock.sendall(client_open_bytes() + garbage)
    read_until_closed(sock)
    sock.close()
    still_serves(broker)


def test_idle_connection_is_closed_when_idle_timeout_set(broker_factory: Any) -> None:
    b = broker_factory(idle_timeout_s=0.5)
    sock = raw_socket(b.url)
    sock.sendall(client_open_bytes())
    t0 = time.monotonic()
    data = read_until_closed(sock, timeout=10)
    sock.close()
    assert time.monotonic() - t0 < 5
    assert b"amqp:resource-limit-exceeded" in data


def test_heartbeats_keep_a_quiet_client_alive(broker_factory: Any) -> None:
    b = broker_factory(idle_timeout_s=1.0)
    c = BlockingConnection(b.url, timeout=10, heartbeat=1)
    c.create_sender("hb").send(Message(body="1"))
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline:  # the client does I/O only inside its calls
        time.sleep(0.1)
        c.container.process()
    c.create_sender("hb", name="second").send(Message(body="2"))
    c.close()


@pytest.fixture
def cert(tmp_path: Path) -> tuple[Path, Path]:
    key, crt = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(crt),
         "-days", "1", "-subj", "/CN=127.0.0.1"],
        check=True, capture_output=True,
    )
    return crt, key


def test_tls_listener(broker_factory: Any, cert: tuple[Path, Path]) -> None:
    crt, key = cert
    b = broker_factory(tls_cert=str(crt), tls_key=str(key))
    assert b.url.startswith("amqps://")
    domain = SSLDomain(SSLDomain.MODE_CLIENT)
    domain.set_trusted_ca_db(str(crt))
    domain.set_peer_authentication(SSLDomain.VERIFY_PEER)
    c = BlockingConnection(b.url, timeout=10, ssl_domain=domain)
    c.create_sender("secure").send(Message(body="tls"))
    r = c.create_receiver("secure")
    assert r.receive(timeout=5).body == "tls"
    r.accept()
    c.close()


def test_command_line_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqp_jms.broker", "--port", "0", "--data-dir", str(tmp_path / "d")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        m = re.search(r"(amqp://\S+)", proc.stdout.readline())
        assert m, "no listening line"
        c = BlockingConnection(m.group(1), timeout=10)
        c.create_sender("cli").send(Message(body="x", durable=True))
        c.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert proc.stderr is not None
        logged = proc.stderr.read()
        assert "broker stopped" in logged
        assert "connection" not in logged  # a clean open and close is DEBUG: nothing noisy at INFO
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_routine_connections_log_at_debug_and_failed_logins_at_info(
    broker_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from amqp_jms import ConnectionFactory, JMSSecurityException

    b = broker_factory(users={"app": "secret"})
    caplog.set_level(logging.DEBUG, logger="amqp_jms.broker")
    with ConnectionFactory(b.url, username="app", password="secret").create_connection() as conn:
        conn.start()
    with pytest.raises(JMSSecurityException):
        ConnectionFactory(b.url, username="app", password="wrong").create_connection().start()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and sum("closed" in r.getMessage() for r in caplog.records) < 2:
        time.sleep(0.02)
    routine = [r for r in caplog.records if re.search(r"connection \d+ (open from|closed)", r.getMessage())]
    assert len(routine) == 3 and {r.levelno for r in routine} == {logging.DEBUG}  # 2 closes, 1 open
    failed = [r for r in caplog.records if "SASL authentication failed" in r.getMessage()]
    assert len(failed) == 1 and failed[0].levelno == logging.INFO and "127.0.0.1" in failed[0].getMessage()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(min_size=1, max_size=300))
def test_random_bytes_after_open_never_take_the_broker_down(broker: Broker, junk: bytes) -> None:
    sock = raw_socket(broker.url)
    try:
        sock.sendall(client_open_bytes() + junk)
        sock.settimeout(0.3)
        try:
            while sock.recv(65536):
                pass
        except OSError:
            pass  # still open (the junk may be an incomplete frame): fine, we just leave
    finally:
        sock.close()
    c = BlockingConnection(broker.url, timeout=10)
    c.close()


def test_delivery_time_annotation_schedules_absolute(broker: Broker) -> None:
    c = BlockingConnection(broker.url, timeout=10)
    s = c.create_sender("at-time")
    due = int((time.time() + 0.5) * 1000)
    s.send(Message(body="scheduled", annotations={"x-opt-delivery-time": due}))
    r = c.create_receiver("at-time")
    with pytest.raises(Exception):  # noqa: B017 - proton raises its Timeout
        r.receive(timeout=0.2)
    m = r.receive(timeout=5)
    assert m.body == "scheduled" and time.time() * 1000 >= due
    r.accept()
    c.close()
