"""The broker's metrics read by Prometheus itself (Debian's ``prometheus`` package, installed by
``scripts/install``): ``promtool check metrics`` lints the exposition (syntax and naming
conventions), and a Prometheus server scrapes the broker as a subprocess and answers the
queries ``docs/operations.md`` shows."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqp_jms.testing.broker_process import BrokerProcess

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(
    PROMETHEUS is None or PROMTOOL is None, reason="prometheus/promtool not installed (scripts/install)"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _query(base: str, expr: str) -> list[dict[str, Any]]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        body = json.load(resp)
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def test_prometheus_scrapes_the_broker_and_answers_the_documented_queries(tmp_path: Path) -> None:
    broker = BrokerProcess("--metrics", "127.0.0.1:0")
    prom: subprocess.Popen[bytes] | None = None
    log = tempfile.TemporaryFile()
    try:
        assert broker.metrics_url is not None
        c = BlockingConnection(broker.url, timeout=10)
        s = c.create_sender("orders")
        for i in range(7):
            s.send(Message(body=i))
        r = c.create_receiver("orders", credit=4)
        for _ in range(3):
            r.receive(timeout=5)
            r.accept()
        r.receive(timeout=5)
        r.reject()  # to the dead-letter queue
        r.close()  # nobody consumes orders now: 3 left

        with urllib.request.urlopen(broker.metrics_url, timeout=10) as resp:
            text = resp.read()
        lint = subprocess.run([str(PROMTOOL), "check", "metrics"], input=text, capture_output=True,
                              timeout=30)
        assert lint.returncode == 0, (lint.stdout + lint.stderr).decode()

        target = broker.metrics_url.split("//", 1)[1].split("/", 1)[0]
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n"
            "scrape_configs:\n  - job_name: amqp-jms-broker\n"
            f"    static_configs:\n      - targets: [\"{target}\"]\n"
        )
        port = _free_port()
        prom = subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=log,
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        depth: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                depth = _query(base, 'amqp_jms_broker_queue_depth{address="orders"}')
            except OSError:
                continue  # not listening yet
            if depth:
                break
        log.seek(0)
        assert depth, f"Prometheus never scraped the broker: {log.read()[-2000:]!r}"
        assert depth[0]["metric"]["queue"] == "orders" and depth[0]["value"][1] == "3"
        up = _query(base, 'up{job="amqp-jms-broker"}')
        assert up and up[0]["value"][1] == "1"
        idle = _query(base, "amqp_jms_broker_queue_depth > 0 and amqp_jms_broker_queue_consumers == 0")
        assert sorted(x["metric"]["address"] for x in idle) == ["DLQ", "orders"]
        why = _query(base, "sum by (address, reason) (amqp_jms_broker_queue_dead_lettered_total) > 0")
        assert [(x["metric"]["address"], x["metric"]["reason"]) for x in why] == [("orders", "rejected")]
        consumed = _query(base, 'amqp_jms_broker_queue_dequeued_total{address="orders"}')
        assert consumed[0]["value"][1] == "3"
        c.close()
    finally:
        if prom is not None:
            prom.terminate()
            try:
                prom.wait(10)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        broker.stop()
        log.close()
