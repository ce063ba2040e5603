"""The metrics' text format, snapshots taken in slices, and the metrics setting in config and CLI."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from amqp_jms.broker.operations.cli import build_parser, config_from_args
from amqp_jms.broker.operations.config import ConfigError, load_config
from amqp_jms.broker.operations.metrics import (
    MetricsSnapshot,
    QueueStats,
    TopicStats,
    parse,
    render,
    snapshot,
    snapshot_sliced,
)
from amqp_jms.broker.operations.metrics_http import parse_listen
from amqp_jms.broker.routing.core import BrokerCore
from amqp_jms.broker.routing.nodes import NodeKind

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def _snap() -> MetricsSnapshot:
    queues = tuple(
        QueueStats(a, a, "queue", 3, 1, 2, 300, 0, 10, 6, 0, 1, 0, 0) for a in ("orders", 'odd "q"\\\n')
    )
    return MetricsSnapshot(0.0, 2, 5, 3, 4, 1, queues, (TopicStats("news", 7, 2),), 4096, 1 << 20)


def test_text_format_help_and_type_before_samples_and_conventions() -> None:
    text = render(_snap())
    assert text.endswith("\n")
    declared: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in declared, f"{name} declared twice"
            declared[name] = ""
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert name in declared and kind in ("counter", "gauge")
            declared[name] = kind
            assert name.startswith("amqp_jms_broker_") and _NAME.match(name)
            assert name.endswith("_total") == (kind == "counter")  # counters and only they
        else:
            name = re.split(r"[{ ]", line, maxsplit=1)[0]
            assert declared.get(name), f"sample {line!r} before its TYPE"
    assert "amqp_jms_broker_store_size_bytes" in declared
    assert "amqp_jms_broker_process_resident_memory_bytes" in declared


def test_parse_reads_back_every_sample_with_escaped_labels() -> None:
    samples = parse(render(_snap()))
    odd = 'odd "q"\\\n'
    key = (("address", odd), ("queue", odd))
    assert samples[("amqp_jms_broker_queue_enqueued_total", key)] == 10
    assert samples[("amqp_jms_broker_queue_depth", (("address", "orders"), ("queue", "orders")))] == 3
    assert samples[("amqp_jms_broker_topic_published_total", (("address", "news"),))] == 7
    assert samples[("amqp_jms_broker_connections", ())] == 2
    dead, orders = "amqp_jms_broker_queue_dead_lettered_total", (("address", "orders"), ("queue", "orders"))
    assert samples[(dead, (*orders, ("reason", "rejected")))] == 1
    assert samples[(dead, (*orders, ("reason", "delivery_limit")))] == 0


def test_unknown_figures_are_left_out() -> None:
    snap = MetricsSnapshot(0.0, 0, 0, 0, 0, 0, (), ())
    text = render(snap)
    assert "store_size_bytes" not in text and "resident_memory" not in text


def test_a_sliced_snapshot_lets_the_loop_run_between_slices() -> None:
    async def main() -> tuple[int, MetricsSnapshot, MetricsSnapshot]:
        core = BrokerCore(asyncio.get_running_loop())
        for i in range(1000):
            core.router.ensure_node(f"q{i}", NodeKind.QUEUE)
        turns = 0
        done = False

        async def ticker() -> None:
            nonlocal turns
            while not done:
                turns += 1
                await asyncio.sleep(0)

        tick = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        start = turns
        sliced = await snapshot_sliced(core, 100)
        ran = turns - start
        done = True
        await tick
        return ran, sliced, snapshot(core)

    ran, sliced, whole = asyncio.run(main())
    assert ran >= 9  # ten slices: the loop ran between each
    assert [q.queue for q in sliced.queues] == [q.queue for q in whole.queues]
    assert len(whole.queues) == 1000


def test_parse_listen() -> None:
    assert parse_listen("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen(":9464") == ("127.0.0.1", 9464)
    for bad in ("9464x", "localhost", "h:70000", "h:"):
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_listen(bad)


def test_metrics_in_the_config_file_and_on_the_command_line(tmp_path: Path) -> None:
    p = tmp_path / "broker.toml"
    p.write_text('[listener]\nport = 5672\nmetrics = "0.0.0.0:9464"\n')
    cfg = load_config(p)
    assert cfg.metrics == "0.0.0.0:9464" and cfg.broker_options()["metrics"] == "0.0.0.0:9464"
    args = build_parser().parse_args(["--config", str(p), "--metrics", "127.0.0.1:0"])
    assert config_from_args(args).broker_options()["metrics"] == "127.0.0.1:0"
    assert "metrics" not in config_from_args(build_parser().parse_args([])).broker_options()
    p.write_text('[listener]\nport = 5672\nmetrics = "9464"\n')
    with pytest.raises(ConfigError, match=r":3: \[listener\] metrics: .*HOST:PORT"):
        load_config(p)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--metrics", "nohost"])
