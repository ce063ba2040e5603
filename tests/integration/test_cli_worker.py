"""``amqp-jms worker`` as a subprocess: SIGTERM with messages in flight finishes them, settles
them and exits 0, with nothing lost and nothing acknowledged that was not handled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from amqp_jms import ConnectionFactory, Queue

SRC = str(Path(__file__).resolve().parents[2] / "src")

HANDLER = """
import os, time
LOG = os.environ["WORKER_LOG"]

def handle(message):
    text = message.get_text()
    with open(LOG, "a") as f:
        f.write(f"start {text}\\n")
    time.sleep(0.15)
    with open(LOG, "a") as f:
        f.write(f"done {text}\\n")
"""

ASYNC_HANDLER = """
import asyncio, os
LOG = os.environ["WORKER_LOG"]

async def handle(message):
    text = message.get_text()
    with open(LOG, "a") as f:
        f.write(f"start {text}\\n")
    await asyncio.sleep(0.15)
    with open(LOG, "a") as f:
        f.write(f"done {text}\\n")
"""


def _send(url: str, n: int) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("orders"))
        for i in range(n):
            p.send(s.create_text_message(f"m{i}"))


def _lines(log: Path, kind: str) -> list[str]:
    if not log.exists():
        return []
    return [ln.split()[1] for ln in log.read_text().splitlines() if ln.startswith(kind + " ")]


@pytest.mark.parametrize("mode", [[], ["--transacted", "--batch-size", "3"], ["async"]],
                         ids=["auto", "transacted-batch", "async-handler"])
def test_sigterm_with_messages_in_flight(broker: Any, tmp_path: Path, mode: list[str]) -> None:
    (tmp_path / "orders_handler.py").write_text(ASYNC_HANDLER if mode == ["async"] else HANDLER)
    mode = [] if mode == ["async"] else mode
    log = tmp_path / "log"
    _send(broker.url, 100)
    env = {**os.environ, "WORKER_LOG": str(log),
           "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqp_jms.cli.main", "worker", "orders_handler:handle", "--url", broker.url,
         "-d", "queue://orders", "--concurrency", "4", "--status-interval", "0.2", *mode],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while len(_lines(log, "start")) < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(set(_lines(log, "start")) - set(_lines(log, "done"))) >= 1  # some in flight
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    started, done = _lines(log, "start"), _lines(log, "done")
    assert sorted(started) == sorted(done) and len(set(done)) == len(done)  # in flight finished, once
    q = broker.metrics().queue("orders")
    assert q.dequeued == len(done) and q.depth == 100 - len(done) and q.delivering == 0
    assert "running" in err and "stopped" in err  # the plain status lines (not a terminal)


def test_a_handler_that_cannot_be_imported_is_a_usage_error(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "amqp_jms.cli.main", "worker", "nosuch.module:fn",
                           "-d", "q"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "cannot import 'nosuch.module'" in done.stderr


def test_worker_reads_the_factory_and_destination_from_jndi_properties(broker: Any, tmp_path: Path) -> None:
    (tmp_path / "h.py").write_text(
        "import os\ndef handle(m):\n    open(os.environ['WORKER_LOG'], 'a').write(m.get_text() + '\\n')\n")
    (tmp_path / "jndi.properties").write_text(
        "connectionfactory.app = ${BROKER_URL}\nqueue.ordersQueue = orders\n")
    _send(broker.url, 5)
    log = tmp_path / "log"
    env = {**os.environ, "WORKER_LOG": str(log), "BROKER_URL": broker.url,
           "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "amqp_jms.cli.main", "worker", "h:handle",
                             "--jndi", "jndi.properties", "-d", "ordersQueue"],
                            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while (not log.exists() or len(log.read_text().split()) < 5) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert sorted(log.read_text().split()) == [f"m{i}" for i in range(5)]
    assert proc.returncode == 0


def test_on_a_terminal_a_live_status_line_and_the_selector_applies(broker: Any, tmp_path: Path) -> None:
    """Under a pseudo-terminal the worker redraws one status line (rate, in flight, failures,
    backlog) instead of printing lines; ``--selector`` leaves non-matching messages queued."""
    import pty
    import select

    (tmp_path / "h.py").write_text(
        "import os\ndef handle(m):\n    open(os.environ['WORKER_LOG'], 'a').write(m.get_text() + '\\n')\n")
    with ConnectionFactory(broker.url).create_connection() as conn:
        s = conn.create_session()
        p = s.create_producer(Queue("orders"))
        for i in range(20):
            m = s.create_text_message(f"m{i}")
            m.set_string_property("region", "eu" if i % 2 else "us")
            p.send(m)
    log = tmp_path / "log"
    env = {**os.environ, "WORKER_LOG": str(log), "TERM": "xterm", "COLUMNS": "200",
           "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("NO_COLOR", None)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqp_jms.cli.main", "worker", "h:handle", "--url", broker.url,
         "-d", "queue://orders", "--selector", "region = 'eu'"],
        cwd=tmp_path, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    screen = b""
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (log.exists() and len(log.read_text().split()) >= 10
                                                   and screen.count(b"done ") >= 3):
            if select.select([master], [], [], 0.1)[0]:
                try:
                    screen += os.read(master, 65536)
                except OSError:
                    break
        proc.send_signal(signal.SIGTERM)
        end = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < end:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    screen += os.read(master, 65536)
                except OSError:
                    break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        os.close(master)
    assert proc.returncode == 0, screen.decode(errors="replace")[-2000:]
    text = screen.decode(errors="replace")
    for field in ("rate", "in flight", "failed", "backlog"):
        assert field in text
    assert "[region = 'eu']" in text  # the selector shown as given (not eaten as markup)
    assert "\x1b[" in text  # redrawn in place (cursor control), not appended lines
    assert sorted(log.read_text().split()) == sorted(f"m{i}" for i in range(1, 20, 2))
    q = broker.metrics().queue("orders")
    assert q.dequeued == 10 and q.depth == 10 and q.delivering == 0
