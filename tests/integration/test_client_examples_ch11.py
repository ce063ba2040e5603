"""Every chapter 11 example (JMS 2.0 section 11.4) runs against the embedded broker."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from amqp_jms import DeliveryMode

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


def test_11_4_1_send_message(broker: Any) -> None:
    got = _load("ch11_4_1_send_message").demo(broker.url)
    assert got == ["standard", "simplified", "injected"]


def test_11_4_3_send_with_properties(broker: Any) -> None:
    got = _load("ch11_4_3_send_with_properties").demo(broker.url)
    assert got == [("standard", "bar", DeliveryMode.NON_PERSISTENT, 0),
                   ("simplified", "bar", DeliveryMode.NON_PERSISTENT, 0)]


def test_11_4_4_receive_sync(broker: Any) -> None:
    assert _load("ch11_4_4_receive_sync").demo(broker.url) == ["one", "two", "three"]


def test_11_4_6_receive_durable(broker: Any) -> None:
    assert _load("ch11_4_6_receive_durable").demo(broker.url) == ["first", "second"]


def test_11_4_7_receive_async(broker: Any) -> None:
    assert _load("ch11_4_7_receive_async").demo(broker.url) == [["a", "b"], ["c", "d"]]


def test_11_4_8_receive_async_durable(broker: Any) -> None:
    assert _load("ch11_4_8_receive_async_durable").demo(broker.url) == [["for old"], ["for new"]]


def test_11_4_9_multiple_threads(broker: Any) -> None:
    mod = _load("ch11_4_9_multiple_threads")
    assert mod.demo(broker.url) == [mod.N, mod.N]


def test_11_4_10_transaction(broker: Any) -> None:
    assert _load("ch11_4_10_transaction").demo(broker.url) == (2, 2, ["1", "2", "3", "4"])


def test_11_4_11_request_reply(broker: Any) -> None:
    got = _load("ch11_4_11_request_reply").demo(broker.url)
    assert got == ["Reply to: request_reply_old", "Reply to: request_reply_new"]


@pytest.mark.parametrize("script", ["ch11_4_1_send_message.py", "request_reply.py"])
def test_examples_run_as_scripts_with_their_own_broker(script: str) -> None:
    r = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()
