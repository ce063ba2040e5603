"""The RabbitMQ launcher: a real broker that works, and nothing left running after it stops."""

from __future__ import annotations

import os
import socket
import uuid

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqp_jms.testing.rabbitmq import RabbitMQ, RabbitMQError, available

pytestmark = pytest.mark.rabbitmq


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def test_raw_proton_send_and_receive_through_a_queue(rabbitmq: RabbitMQ) -> None:
    address = f"/queue/x-{uuid.uuid4().hex[:8]}"
    conn = BlockingConnection(rabbitmq.url, timeout=10)
    try:
        sender = conn.create_sender(address)
        for i in range(3):
            sender.send(Message(body=f"hello {i}", properties={"n": i}))
        receiver = conn.create_receiver(address, credit=10)
        got = []
        for _ in range(3):
            m = receiver.receive(timeout=10)
            receiver.accept()
            got.append((m.body, m.properties["n"]))
    finally:
        conn.close()
    assert got == [("hello 0", 0), ("hello 1", 1), ("hello 2", 2)]


def test_topic_address_fans_out_to_every_receiver(rabbitmq: RabbitMQ) -> None:
    address = f"/topic/t-{uuid.uuid4().hex[:8]}"
    conn = BlockingConnection(rabbitmq.url, timeout=10)
    try:
        r1 = conn.create_receiver(address, credit=5, name="r1")
        r2 = conn.create_receiver(address, credit=5, name="r2")
        conn.create_sender(address, name="s").send(Message(body="to all"))
        b1 = r1.receive(timeout=10).body
        b2 = r2.receive(timeout=10).body
    finally:
        conn.close()
    assert b1 == b2 == "to all"


def test_stop_leaves_no_process_and_no_files() -> None:
    if not available():
        pytest.skip("RabbitMQ unavailable")
    rmq = RabbitMQ().start()
    beam, epmds, directory = rmq.pid, rmq.epmd_pids, rmq.directory
    assert beam is not None and _alive(beam)
    assert epmds and all(_alive(p) for p in epmds)
    assert directory is not None and directory.is_dir()
    rmq.stop()
    rmq.stop()  # idempotent
    assert not _alive(beam)
    assert not any(_alive(p) for p in epmds)
    assert not directory.exists()
    with pytest.raises(RabbitMQError):
        _ = rmq.url
    # the AMQP port is free again
    with socket.socket() as s:
        s.bind(("127.0.0.1", rmq.port or 0))


def test_failed_start_raises_and_leaves_nothing_behind() -> None:
    if not available():
        pytest.skip("RabbitMQ unavailable")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        rmq = RabbitMQ(port=port, start_timeout=30)
        with pytest.raises(RabbitMQError):
            rmq.start()
    assert rmq.pid is None
    assert rmq.epmd_pids == []
    assert rmq.directory is None or not rmq.directory.exists()
    assert os.geteuid() == 0


def test_cli_round_trip_through_rabbitmq_keeps_typed_properties(
    rabbitmq: RabbitMQ, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from amqp_jms.cli.main import main

    q = f"/queue/cli-{uuid.uuid4().hex[:8]}"
    assert (
        main(
            [
                "send",
                q,
                "--url",
                rabbitmq.url,
                "hello rabbit",
                "--property",
                "total=5.5:double",
                "--property",
                "n=3:int",
                "--jms-type",
                "order.created",
                "--correlation-id",
                "c-1",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["receive", q, "--url", rabbitmq.url, "--count", "1", "--timeout", "5", "--json"]) == 0
    got = json.loads(capsys.readouterr().out.strip())
    assert got["body"] == "hello rabbit" and got["type"] == "TextMessage"
    assert {k: v for k, v in got["properties"].items() if not k.startswith("JMS")} == {"total": 5.5, "n": 3}
    assert (got["jms_type"], got["correlation_id"]) == ("order.created", "c-1")


def test_cli_selector_on_a_rabbitmq_queue_is_a_clear_error_not_a_hang(
    rabbitmq: RabbitMQ, capsys: pytest.CaptureFixture[str]
) -> None:
    from amqp_jms.cli.main import main

    rc = main(
        ["receive", "/queue/cli-sel", "--url", rabbitmq.url, "--selector", "total > 1", "--timeout", "2"]
    )
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("error: ") and "selector" in err and "Traceback" not in err
