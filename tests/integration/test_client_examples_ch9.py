"""Every chapter 9 example of the JMS 2.0 specification, run against the embedded broker."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_send_receive(broker: Any) -> None:
    assert _load("ch9_send_receive").main(broker.url) == "IBM 143.25"


def test_async_listener(broker: Any) -> None:
    assert _load("ch9_async_listener").main(broker.url) == ["IBM 143.25", "ACME 12.50", "INIT 1.01"]


def test_selector(broker: Any) -> None:
    assert _load("ch9_selector").main(broker.url) == ["IBM quote", "ORCL quote"]


def test_durable_subscription(broker: Any) -> None:
    assert _load("ch9_durable_subscription").main(broker.url) == ["markets open", "rain expected"]


def test_message_types(broker: Any) -> None:
    out = _load("ch9_message_types").main(broker.url)
    assert out["text"] == "IBM 143.25"
    assert out["bytes"] == b"\x00IBM\x00\x8f"
    assert out["map"] == {"Name": "IBM", "Value": 143.25, "Time": 1_700_000_000_000, "Diff": -0.75,
                          "Info": "closing quote"}
    assert out["stream"] == ["IBM", 143.25, 1_700_000_000_000]
    assert out["object"] == {"name": "IBM", "value": 143.25}


@pytest.mark.slow
def test_runs_as_a_script_with_its_own_broker() -> None:
    r = subprocess.run([sys.executable, str(EXAMPLES / "ch9_send_receive.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "received: IBM 143.25" in r.stdout
