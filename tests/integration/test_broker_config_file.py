"""``amqp-jms broker --config FILE``: the file's users, hashes and permissions take effect, flags
override it, and a broken file stops the broker with the line and key before it listens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from amqp_jms import ConnectionFactory, JMSSecurityException, Queue
from amqp_jms.broker import Broker
from amqp_jms.broker.operations.config import load_config

CMD = [sys.executable, "-m", "amqp_jms.broker"]


def hash_of(password: str) -> str:
    out = subprocess.run([*CMD, "--hash-password"], input=password + "\n", capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("conf")
    p = d / "broker.toml"
    p.write_text(f"""
[listener]
port = 5999  # overridden by --port 0 below

[users.alice]
password = "{hash_of('alice-pw')}"
roles = ["writers"]

[[permissions]]
match = "inbox.#"
send = ["writers"]
""")
    return p


@pytest.fixture
def served(config_file: Path) -> Iterator[str]:
    proc = subprocess.Popen([*CMD, "--config", str(config_file), "--port", "0", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on amqp://" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
        yield line.split("listening on ", 1)[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_hashed_password_logs_in_and_permissions_apply(served: str, mechanism: str) -> None:
    assert not served.endswith(":5999")  # the flag won over the file
    url = f"{served}?amqp.saslMechanisms={mechanism}"
    with ConnectionFactory(url, username="alice", password="alice-pw").create_connection() as conn:
        conn.start()
        s = conn.create_session()
        s.create_producer(Queue("inbox.a")).send(s.create_text_message("hi"))
        with pytest.raises(JMSSecurityException, match=r"consume from 'inbox\.a'"):
            s.create_consumer(Queue("inbox.a"))
    with pytest.raises(JMSSecurityException):
        ConnectionFactory(url, username="alice", password="wrong").create_connection().start()


def test_a_broken_file_stops_the_broker_naming_line_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[listener]\nport = 0\n\n[users.eve]\npassword = "plaintext"\n')
    proc = subprocess.run([*CMD, "--config", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"{bad}:5: [users.eve] password: plain-text password refused" in proc.stderr
    assert "listening" not in proc.stdout


def test_the_config_object_starts_an_in_process_broker(config_file: Path) -> None:
    from dataclasses import replace

    cfg = replace(load_config(config_file), port=0)
    with Broker(**cfg.broker_options()) as b:
        conn = ConnectionFactory(b.url, username="alice", password="alice-pw").create_connection()
        try:
            conn.start()
            s = conn.create_session()
            with pytest.raises(JMSSecurityException, match="send to 'other'"):
                s.create_producer(Queue("other"))
        finally:
            conn.close()


def test_the_shipped_example_starts_the_broker(tmp_path: Path) -> None:
    import shutil

    example = Path(__file__).resolve().parents[2] / "examples" / "broker.toml"
    shutil.copy(example, tmp_path / "broker.toml")  # its data_dir is relative to the file
    proc = subprocess.Popen([*CMD, "--config", str(tmp_path / "broker.toml"), "--port", "0",
                             "--host", "127.0.0.1", "--metrics", "127.0.0.1:0", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        why = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
        assert "listening on amqp://127.0.0.1:" in line, why
        assert "(metrics on http://127.0.0.1:" in line  # the file's metrics, its port overridden
        url = line.split("listening on ", 1)[1].split()[0]
        with ConnectionFactory(url, username="ops", password="ops-secret").create_connection() as conn:
            conn.start()
        # alice (orders-producer) may create a temporary queue: she may also send to it and read
        # it (issue 26: her send to it was refused), on a named producer and the anonymous one
        alice = ConnectionFactory(url, username="alice", password="alice-secret")
        with alice.create_connection() as conn:
            conn.start()
            session = conn.create_session()
            temp = session.create_temporary_queue()
            session.create_producer(temp).send(session.create_text_message("to myself"))
            session.create_producer(None).send(temp, session.create_text_message("relayed"))
            consumer = session.create_consumer(temp)
            got = [consumer.receive(5000), consumer.receive(5000)]
            assert [m.get_text() for m in got if m is not None] == ["to myself", "relayed"]
            # another connection of hers is not its creator: the rules apply
            with alice.create_connection() as other:
                with pytest.raises(JMSSecurityException):
                    other.create_session().create_producer(temp)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=20)
