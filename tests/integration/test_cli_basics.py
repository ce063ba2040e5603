"""The ``amqp-jms`` command's contract: --help everywhere, exit codes 0/1/2, one-line errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqp_jms.cli._common import UsageError, parse_property
from amqp_jms.cli.main import COMMANDS, main
from amqp_jms.types import Byte, Double, Int, Short

AMQP_JMS = [sys.executable, "-m", "amqp_jms.cli.main"]


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [command, "--help"] if command else ["--help"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "usage: amqp-jms" in text
    if command:
        assert f"amqp-jms {command}" in text


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for name in COMMANDS:
        assert name in text


def test_no_command_and_unknown_command_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_bad_option_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "q", "x", "--priority", "12"]) == 2
    assert main(["send", "q", "x", "--property", "novalue"]) == 2
    err = capsys.readouterr().err
    assert "--property 'novalue'" in err
    assert "Traceback" not in err


def test_typed_properties_parse_to_jms_types() -> None:
    assert parse_property("region=EU") == ("region", "EU")
    assert parse_property("url=http://x") == ("url", "http://x")
    name, v = parse_property("total=12.5:double")
    assert (name, v) == ("total", 12.5) and type(v) is Double
    assert type(parse_property("n=7:int")[1]) is Int
    assert type(parse_property("n=0x10:short")[1]) is Short and parse_property("n=0x10:short")[1] == 16
    assert type(parse_property("b=-3:byte")[1]) is Byte
    assert parse_property("flag=TRUE:boolean") == ("flag", True)
    with pytest.raises(UsageError, match="not a valid byte"):
        parse_property("b=300:byte")
    with pytest.raises(UsageError, match="not a valid boolean"):
        parse_property("f=yes:boolean")


def test_the_console_script_is_installed_and_runs() -> None:
    exe = Path(sys.executable).with_name("amqp-jms")
    assert exe.exists()
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.startswith("amqp-jms ")


def test_broker_command_serves_amqp_and_stops_on_sigterm(tmp_path: Path) -> None:
    pytest.importorskip("amqp_jms.broker.operations.cli")
    proc = subprocess.Popen(
        [*AMQP_JMS, "broker", "--port", "0", "--data-dir", str(tmp_path / "store")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on amqp://" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
        url = line.split("listening on ", 1)[1].split()[0]
        conn = BlockingConnection(url, timeout=10)
        try:
            conn.create_sender("cli-q").send(Message(body="via cli broker"))
            r = conn.create_receiver("cli-q", credit=1)
            assert r.receive(timeout=10).body == "via cli broker"
            r.accept()
        finally:
            conn.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()
