"""``amqp-jms pipeline`` end to end: embedded broker → Spark streaming (selector) → Parquet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from amqp_jms.cli.main import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_pipeline_streams_the_selected_messages_into_parquet_with_an_aggregate(
    broker: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyspark")
    url = broker.url
    for region, total in (("EU", 150.0), ("US", 20.0), ("EU", 30.5), ("APAC", 500.0), ("EU", 99.5)):
        assert (
            main(
                [
                    "send",
                    "orders",
                    "--url",
                    url,
                    f"{region} {total}",
                    "--property",
                    f"region={region}",
                    "--property",
                    f"total={total}:double",
                ]
            )
            == 0
        )
    capsys.readouterr()
    out = tmp_path / "out"
    rc = main(
        [
            "pipeline",
            "queue://orders",
            "--url",
            url,
            "--output",
            str(out),
            "--selector",
            "total > 25",
            "--aggregate-by",
            "region",
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert rc == 0, captured.err[-3000:]
    result = json.loads(captured.out.strip().splitlines()[-1])
    assert (result["rows"], result["distinct_messages"], result["duplicates"]) == (4, 4, 0)
    assert sorted((r["region"], r["messages"], r["sum_total"]) for r in result["aggregate"]) == [
        ("APAC", 1, 500.0),
        ("EU", 3, 280.0),
    ]
    assert any((out / "data").glob("*.parquet"))
    assert (out / "by_region").is_dir()
    # the one message the selector left is still on the queue
    assert main(["receive", "orders", "--url", url, "--timeout", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["US 20.0"]


def test_pipeline_with_a_bad_selector_fails_with_exit_1(
    broker: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyspark")
    rc = main(
        ["pipeline", "orders", "--url", broker.url, "--output", str(tmp_path / "o"), "--selector", "total >"]
    )
    err = capsys.readouterr().err
    assert rc == 1
    assert "selector" in err.lower() and "Traceback" not in err
