"""The main job: ``amqp-jms demo`` (= ``./scripts/demo``) end to end with a small --messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqp_jms.cli.main import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_demo_accounts_for_every_message_and_leaves_parquet_and_chart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyspark")
    pytest.importorskip("matplotlib")
    data = tmp_path / "demo-data"
    rc = main(["demo", "--messages", "400", "--data-dir", str(data), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err[-3000:]
    report = json.loads(captured.out.strip().splitlines()[-1])
    assert report["produced"] == 400
    assert report["lost"] == 0
    assert report["duplicates"] == 0 and report["unexpected"] == 0
    assert report["selector_hits"] == report["selector_expected"] > 0
    assert report["selector_hits"] + report["remaining"] == 400
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["MQ dump → AMQP bridge"]["messages_out"] == 40
    assert stages["JMS producers"]["messages_out"] == 360  # the broker's count (its metrics)
    broker = report["broker"]  # the orders queue at the end, from the broker's metrics endpoint
    assert broker["enqueued"] == 400 and broker["depth"] == 0 and broker["delivering"] == 0
    assert broker["dequeued"] == 400 and broker["expired"] == 0 and broker["dead_lettered"] == 0
    regions = {r["region"] for r in report["by_region"]}
    assert regions <= {"EU", "US"} and regions
    assert sum(r["messages"] for r in report["by_region"]) == report["selector_hits"]
    assert any((data / "out" / "data").glob("*.parquet"))
    assert (data / "out" / "by_region").is_dir()
    png = data / "report.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (data / "mq" / "orders.dmp").is_file()
