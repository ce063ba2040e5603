"""``amqp-jms send / receive / browse / bench / mq`` end to end against the embedded broker."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from amqp_jms.cli._demo_data import orders, write_mq_dump
from amqp_jms.cli.main import main


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_send_then_receive_keeps_body_headers_and_typed_properties(
    broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url = broker.url
    rc = main(
        [
            "send",
            "queue://cli-orders",
            "--url",
            url,
            "hello",
            "world",
            "--property",
            "region=EU",
            "--property",
            "total=12.5:double",
            "--property",
            "lines=3:int",
            "--jms-type",
            "order.created",
            "--correlation-id",
            "cust-1",
            "--priority",
            "7",
            "--json",
        ]
    )
    assert rc == 0
    sent = _json_lines(capsys.readouterr().out)
    assert sent[-1]["sent"] == 2 and len(sent[-1]["message_ids"]) == 2
    assert main(["receive", "cli-orders", "--url", url, "--count", "2", "--json"]) == 0
    got = _json_lines(capsys.readouterr().out)
    assert [m["body"] for m in got] == ["hello", "world"]
    first = got[0]
    assert first["type"] == "TextMessage"
    props = {k: v for k, v in first["properties"].items() if not k.startswith("JMSX")}
    assert props == {"region": "EU", "total": 12.5, "lines": 3}
    assert first["properties"].get("JMSXDeliveryCount", 1) == 1
    assert (first["jms_type"], first["correlation_id"], first["priority"]) == ("order.created", "cust-1", 7)
    assert first["message_id"] == sent[-1]["message_ids"][0]
    assert first["destination"] == "queue://cli-orders"


def test_send_reads_lines_from_stdin_and_receive_prints_bodies(
    broker: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("one\ntwo\nthree\n"))
    assert main(["send", "lines", "--url", broker.url]) == 0
    capsys.readouterr()
    assert main(["receive", "lines", "--url", broker.url, "--timeout", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["one", "two", "three"]
    assert "received 3 messages" in captured.err


def test_receive_with_a_selector_gets_only_matching_messages(
    broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    for region, total in (("EU", "150"), ("US", "300"), ("EU", "20")):
        assert (
            main(
                [
                    "send",
                    "sel",
                    "--url",
                    broker.url,
                    f"{region}-{total}",
                    "--property",
                    f"region={region}",
                    "--property",
                    f"total={total}:double",
                ]
            )
            == 0
        )
    capsys.readouterr()
    assert (
        main(
            [
                "receive",
                "sel",
                "--url",
                broker.url,
                "--selector",
                "region = 'EU' AND total > 100",
                "--timeout",
                "1",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines() == ["EU-150"]


def test_map_and_bytes_messages_from_the_command_line(
    broker: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\x01binary\xff")
    assert main(["send", "types", "--url", broker.url, "--type", "map", '{"sku": "A1", "qty": 2}']) == 0
    assert main(["send", "types", "--url", broker.url, "--type", "bytes", "--file", str(blob)]) == 0
    capsys.readouterr()
    assert main(["receive", "types", "--url", broker.url, "--count", "2", "--json"]) == 0
    got = _json_lines(capsys.readouterr().out)
    assert got[0]["type"] == "MapMessage" and got[0]["body"] == {"sku": "A1", "qty": 2}
    assert got[1]["type"] == "BytesMessage" and got[1]["body"] == blob.read_bytes().hex()


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "q", "x"],
        ["receive", "q", "--timeout", "1"],
        ["browse", "q"],
        ["bench", "--messages", "10"],
        ["mq", "export", "q", "/tmp/never-written.dmp"],
    ],
    ids=lambda a: a[0] if a[0] != "mq" else "mq-export",
)
def test_bad_url_is_one_line_and_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    rc = main([*argv, "--url", "amqp://127.0.0.1:1"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "127.0.0.1:1" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["receive", "q", "--timeout", "1"],
        ["browse", "q"],
        ["mq", "export", "q", "/tmp/never-written.dmp"],
        ["pipeline", "q", "--output", "/tmp/never-written-pipeline"],
    ],
    ids=lambda a: a[0] if a[0] != "mq" else "mq-export",
)
def test_bad_selector_exits_1_and_shows_the_position(
    argv: list[str], broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main([*argv, "--url", broker.url, "--selector", "region = "])
    err = capsys.readouterr().err
    assert rc == 1
    assert "InvalidSelectorException" in err and "position 9" in err
    assert "Traceback" not in err


def test_debug_shows_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "q", "x", "--url", "amqp://127.0.0.1:1", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_browse_lists_without_consuming(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["send", "br", "--url", broker.url, "a", "b", "c", "--property", "n=1:int"]) == 0
    capsys.readouterr()
    assert main(["browse", "br", "--url", broker.url, "--json"]) == 0
    assert [m["body"] for m in _json_lines(capsys.readouterr().out)] == ["a", "b", "c"]
    assert main(["browse", "br", "--url", broker.url, "--bodies"]) == 0
    table = capsys.readouterr().out
    assert "queue://br: 3 messages" in table and "n=1" in table
    assert main(["receive", "br", "--url", broker.url, "--timeout", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["a", "b", "c"]


def test_durable_subscription_keeps_messages_while_away(
    broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--url", broker.url, "--durable", "sub1", "--client-id", "cli-app"]
    assert main(["receive", "topic://news", *args, "--timeout", "0.5"]) == 0  # subscribe, then leave
    assert main(["send", "topic://news", "--url", broker.url, "while away"]) == 0
    capsys.readouterr()
    assert main(["receive", "topic://news", *args, "--timeout", "1", "--unsubscribe"]) == 0
    assert capsys.readouterr().out.splitlines() == ["while away"]


def test_bench_reports_both_phases(broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--url", broker.url, "--messages", "300", "--size", "64", "--json"]) == 0
    phases = _json_lines(capsys.readouterr().out)
    assert [p["phase"] for p in phases] == ["send", "receive"]
    assert all(p["messages"] == 300 and p["msgs_per_s"] > 0 for p in phases)


def test_mq_import_then_export_round_trips_the_orders(
    broker: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from amqp_jms.mq import from_mq, load_dump

    src = tmp_path / "in.dmp"
    batch = list(orders(12, prefix="mq", kinds=("text", "map", "bytes", "stream")))
    write_mq_dump(src, batch)
    assert main(["mq", "import", str(src), "queue://mq-orders", "--url", broker.url, "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[-1]["imported"] == 12
    dst = tmp_path / "out.dmp"
    assert main(["mq", "export", "queue://mq-orders", str(dst), "--url", broker.url, "--browse"]) == 0
    exported = [from_mq(md, data) for md, data in load_dump(dst)]
    assert [m.get_string_property("order_id") for m in exported] == [o.order_id for o in batch]
    assert [type(m).__name__ for m in exported] == [
        {"text": "TextMessage", "map": "MapMessage", "bytes": "BytesMessage", "stream": "StreamMessage"}[
            o.kind
        ]
        for o in batch
    ]
    assert [m.get_double_property("total") for m in exported] == [o.total for o in batch]
    # browse consumed nothing; a consuming export drains the queue
    assert main(["mq", "export", "mq-orders", str(tmp_path / "again.dmp"), "--url", broker.url]) == 0
    assert len(load_dump(tmp_path / "again.dmp")) == 12
    assert (
        main(
            [
                "mq",
                "export",
                "mq-orders",
                str(tmp_path / "empty.dmp"),
                "--url",
                broker.url,
                "--timeout",
                "0.5",
            ]
        )
        == 0
    )
    assert load_dump(tmp_path / "empty.dmp") == []


def test_mq_import_of_a_missing_file_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mq", "import", "/nonexistent.dmp", "q"]) == 2
    assert "no such file" in capsys.readouterr().err
