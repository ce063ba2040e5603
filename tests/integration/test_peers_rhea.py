"""The rhea runner: JSON in/out, errors surfaced, and rhea interoperating with a real broker."""

from __future__ import annotations

import json
import types
import uuid
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqp_jms.testing.rabbitmq import RabbitMQ
from amqp_jms.testing.rhea import RheaError

pytestmark = pytest.mark.rhea

_SEND = """
const rhea = require('rhea');
let input = '';
process.stdin.on('data', d => input += d);
process.stdin.on('end', () => {
  const args = JSON.parse(input);
  const u = new URL(args.url);
  const c = rhea.connect({host: u.hostname, port: Number(u.port)});
  const s = c.open_sender(args.address);
  let sent = 0, acked = 0;
  s.on('sendable', () => {
    while (s.sendable() && sent < args.bodies.length) {
      s.send({body: args.bodies[sent], application_properties: {i: sent}});
      sent++;
    }
  });
  s.on('accepted', () => { if (++acked === args.bodies.length) { c.close(); } });
  c.on('connection_close', () => console.log(JSON.stringify({sent: sent, accepted: acked})));
});
"""


def test_run_code_round_trips_json(rhea: types.ModuleType) -> None:
    code = (
        "let s='';process.stdin.on('data',d=>s+=d);process.stdin.on('end',()=>{"
        "const a=JSON.parse(s);console.log('log line');console.log(JSON.stringify({sum:a.x+a.y}));});"
    )
    assert rhea.run_code(code, {"x": 2, "y": 40}) == {"sum": 42}


def test_failing_script_raises_with_its_stderr(rhea: types.ModuleType) -> None:
    with pytest.raises(RheaError, match="boom"):
        rhea.run_code("throw new Error('boom');")


def test_hanging_script_times_out(rhea: types.ModuleType) -> None:
    with pytest.raises(RheaError, match="timed out"):
        rhea.run_code("setInterval(() => {}, 1000);", timeout=1)


@pytest.mark.rabbitmq
def test_rhea_sends_to_rabbitmq_and_proton_receives(rhea: types.ModuleType, rabbitmq: RabbitMQ) -> None:
    address = f"/queue/rhea-{uuid.uuid4().hex[:8]}"
    bodies = ["a", "b", "ünïcode"]
    out = rhea.run_code(_SEND, {"url": rabbitmq.url, "address": address, "bodies": bodies})
    assert out == {"sent": 3, "accepted": 3}
    conn = BlockingConnection(rabbitmq.url, timeout=10)
    try:
        r = conn.create_receiver(address, credit=10)
        got = []
        for _ in bodies:
            m: Message = r.receive(timeout=10)
            r.accept()
            got.append((m.body, m.properties["i"]))
    finally:
        conn.close()
    assert got == [("a", 0), ("b", 1), ("ünïcode", 2)]


def test_rhea_sends_to_the_embedded_broker_and_the_cli_receives(
    rhea: types.ModuleType, broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from amqp_jms.cli.main import main

    out = rhea.run_code(_SEND, {"url": broker.url, "address": "rhea-in", "bodies": ["x", "y"]})
    assert out == {"sent": 2, "accepted": 2}
    assert main(["receive", "rhea-in", "--url", broker.url, "--count", "2", "--timeout", "5", "--json"]) == 0
    got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [m["body"] for m in got] == ["x", "y"]
    assert [m["properties"]["i"] for m in got] == [0, 1]
