"""A receiver process (``numReceivers`` > 1) logs through the reader's process: its records reach
the ``amqp_jms.*`` logger of the same name there (where the source's own lines go, and where
they are configured), prefixed with its pid, and nothing goes to stderr."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")


def test_a_receiver_process_warning_reaches_the_readers_logger_not_stderr(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    from amqp_jms.broker import Broker
    from amqp_jms.spark.options import parse_options
    from amqp_jms.spark.receiver_process import ReceiverProcess

    caplog.set_level(logging.WARNING, logger="amqp_jms")
    broker = Broker(port=0)
    broker.start()
    options = parse_options(
        {"url": broker.url, "destination": "logged", "walPath": str(tmp_path), "reconnectTimeoutMs": "60000"}
    )
    receiver = ReceiverProcess(options, str(tmp_path / "receiver-0"), False, None)
    try:
        receiver.result()  # started
        assert receiver.call("latest", 0, None, 0.5) == 0  # connected: nothing there yet
        broker.stop()  # the receiver's connection is lost: it warns, and retries
        deadline = time.monotonic() + 30
        while not any("connection to the broker lost" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
            time.sleep(0.1)
    finally:
        receiver.stop()
    record = next(r for r in caplog.records if "connection to the broker lost" in r.getMessage())
    assert record.name == "amqp_jms.spark" and record.levelno == logging.WARNING
    assert record.getMessage().startswith(f"receiver process {receiver.proc.pid}: jms receiver:")
    assert "connection to the broker lost" not in capfd.readouterr().err
