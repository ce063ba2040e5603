"""rhea (JavaScript, shares no code with proton or us) against the embedded broker.

The rhea side is tests/interop/broker_rhea.js; python-qpid-proton is the other peer, so every
message crosses two independent AMQP implementations through the broker.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqp_jms.broker import Broker

pytestmark = pytest.mark.rhea


def rhea_run(rhea: types.ModuleType, broker: Broker, **cfg: Any) -> Any:
    out = rhea.run("broker_rhea.js", {"url": broker.url, **cfg}, timeout=30)
    assert "error" not in out, out
    return out


def test_rhea_sends_proton_receives_in_priority_order(rhea: types.ModuleType, broker: Broker) -> None:
    msgs = [{"body": f"m{i}", "priority": p} for i, p in enumerate([1, 7, 4])]
    out = rhea_run(rhea, broker, mode="send", address="rq", capabilities=["queue"], messages=msgs)
    assert out["outcomes"] == ["accepted"] * 3
    c = BlockingConnection(broker.url, timeout=10)
    r = c.create_receiver("rq")
    got = []
    for _ in range(3):
        got.append(r.receive(timeout=5).body)
        r.accept()
    c.close()
    assert got == ["m1", "m2", "m0"]


def test_proton_sends_rhea_receives_with_selector(rhea: types.ModuleType, broker: Broker) -> None:
    c = BlockingConnection(broker.url, timeout=10)
    s = c.create_sender("rsel")
    for i in range(6):
        s.send(Message(body=f"b{i}", properties={"n": i}))
    c.close()
    out = rhea_run(rhea, broker, mode="receive", address="rsel", selector="n >= 4", count=2)
    assert out["bodies"] == ["b4", "b5"]


def test_rhea_durable_subscription_keeps_messages_while_detached(
    rhea: types.ModuleType, broker: Broker
) -> None:
    sub = {"mode": "receive", "address": "rtopic", "capabilities": ["topic"], "durable": True,
           "name": "rhea-sub", "container_id": "rhea-client"}
    rhea_run(rhea, broker, count=0, detach=True, **sub)
    c = BlockingConnection(broker.url, timeout=10)
    s = c.create_sender("rtopic")
    s.send(Message(body="while-away"))
    c.close()
    out = rhea_run(rhea, broker, count=1, **sub)
    assert out["bodies"] == ["while-away"]


def test_rhea_anonymous_relay_reject_is_settled(rhea: types.ModuleType, broker: Broker) -> None:
    c = BlockingConnection(broker.url, timeout=10)
    c.create_receiver("relayed")
    msgs = [{"body": "ok", "to": "relayed"}, {"body": "lost", "to": "nowhere"}]
    out = rhea_run(rhea, broker, mode="send", address=None, messages=msgs)
    c.close()
    assert sorted(out["outcomes"]) == ["accepted", "rejected"]
