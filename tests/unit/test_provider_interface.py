"""The JMS layer uses only the provider interface (``provider/base.py``; issue 17).

A failover provider wraps the AMQP provider behind that interface: anything the client reads
past it (an undeclared attribute, a private field, a ``getattr`` probe, the peer's product or
capability symbols, the AMQP provider's class) would read the dead connection's state after a
reconnect, or bypass the failover provider entirely. This test reads the source of
``amqp_jms.client`` and ``amqp_jms.aio`` and fails on each such reach; ``scan`` is written so
that it flags every row of the audit in ``docs/failover-design.md`` §2 (taken on the client as
it was before the interface was completed).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from amqp_jms.client.connection import ConnectionInternal
from amqp_jms.client.local_queue import LocalQueue
from amqp_jms.provider import base

SRC = Path(__file__).resolve().parents[2] / "src" / "amqp_jms"
SCANNED = [SRC / "client", SRC / "aio"]


def _declared(*classes: type) -> frozenset[str]:
    names: set[str] = set()
    for cls in classes:
        for k in cls.__mro__:
            if k in (object, base.ABC) or k.__module__ == "typing":
                continue
            names.update(n for n in vars(k) if not n.startswith("_"))
            names.update(getattr(k, "__annotations__", {}))
    names.add("__len__")
    return frozenset(names)


PROVIDER = _declared(base.Provider)
SESSION = _declared(base.ProviderSession)
PRODUCER = _declared(base.ProviderProducer)
CONSUMER = _declared(base.ProviderConsumer)
INBOUND = _declared(base.Inbound)
#: the provider handle of a session, producer or consumer
HANDLE = SESSION | PRODUCER | CONSUMER

#: local names the client gives provider objects, and the interface each one has
NAMED = {
    "prov": PROVIDER, "provider": PROVIDER, "psession": SESSION, "pprod": PRODUCER,
    "pproducer": PRODUCER, "pcons": CONSUMER, "pconsumer": CONSUMER, "inbound": INBOUND,
}
#: ``<client object>.<attr>`` holding a provider object
HELD = {"_provider": PROVIDER, "_p": HANDLE,
        "_provider_session": SESSION, "_provider_producer": PRODUCER, "_provider_consumer": CONSUMER,
        "provider_session": SESSION, "provider_producer": PRODUCER, "provider_consumer": CONSUMER}
#: peer facts only the provider may look at
PEER_WORDS = {"ANONYMOUS-RELAY", "DELAYED_DELIVERY", "SHARED-SUBS", "RabbitMQ", "product",
              "remote_properties"}
PROVIDER_CLASSES = {"Provider", "ProviderSession", "ProviderProducer", "ProviderConsumer"}


class _Scan(ast.NodeVisitor):
    def __init__(self, where: str, provider: frozenset[str]) -> None:
        self.where = where
        self.provider = provider
        self.found: list[str] = []
        self.bound: list[dict[str, frozenset[str]]] = [{}]

    def flag(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{self.where}:{getattr(node, 'lineno', 0)}: {what}")

    def kind(self, node: ast.AST) -> frozenset[str] | None:
        """The interface of a provider object ``node`` evaluates to; None if it is not one."""
        k: frozenset[str] | None = None
        if isinstance(node, ast.Name):
            k = next((scope[node.id] for scope in reversed(self.bound) if node.id in scope),
                     NAMED.get(node.id))
        elif isinstance(node, ast.Attribute):
            k = HELD.get(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("_prov", "provider"):
            k = PROVIDER
        return self.provider if k is PROVIDER else k

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.bound.append({})
        self.generic_visit(node)
        self.bound.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Assign(self, node: ast.Assign) -> None:
        k = self.kind(node.value)
        if k is not None:
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.bound[-1][t.id] = k
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        k = self.kind(node.value)
        if k is not None:
            if node.attr.startswith("_"):
                self.flag(node, f"private member {node.attr!r} of a provider object")
            elif node.attr not in k:
                self.flag(node, f"{node.attr!r} is not declared in provider/base.py")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("getattr", "setattr", "hasattr", "delattr") and node.args:
            if self.kind(node.args[0]) is not None:
                self.flag(node, f"{f.id}() on a provider object")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value in PEER_WORDS:
            self.flag(node, f"peer fact {node.value!r} (ask Capabilities)")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if "provider.amqp" in mod or "provider.failover" in mod or (
                mod.endswith("provider") and any(a.name.startswith("Amqp") for a in node.names)):
            self.flag(node, f"imports the provider implementation {mod!r} (use create_provider)")
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for b in node.bases:
            name = b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
            if name in PROVIDER_CLASSES:
                self.flag(node, f"class {node.name} implements {name}: provider code belongs in provider/")
        self.generic_visit(node)


def scan(roots: list[Path], provider: frozenset[str] = PROVIDER) -> list[str]:
    """Every reach past the interface in the sources under ``roots``; ``provider``: the members
    ``Provider`` declares (the current ones unless told)."""
    found: list[str] = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            s = _Scan(f"{path.parent.name}/{path.name}", provider)
            s.visit(ast.parse(path.read_text(), str(path)))
            found += s.found
    return found


def test_the_client_reaches_no_provider_object_past_the_interface() -> None:
    assert scan(SCANNED) == []


#: ``Provider`` as declared when the audit was taken (rows 1-4 used members it lacked then)
OLD_PROVIDER = PROVIDER - {"failure", "shutdown", "connection_id", "capabilities", "remote_uri"}


@pytest.mark.parametrize("row, source, expected", [
    (1, "def close(self):\n    prov = self._provider\n    if prov.failure is None: pass\n", "'failure'"),
    (2, "def alive(self):\n    p = self._provider\n    return p.failure is None\n", "'failure'"),
    (3, "def close(self):\n    prov = self._provider\n    prov.shutdown()\n", "'shutdown'"),
    (4, "def cid(self):\n    return str(self._provider.connection_id)\n", "'connection_id'"),
    (5, "def f(conn):\n    return 'ANONYMOUS-RELAY' in conn._remote_caps()\n", "ANONYMOUS-RELAY"),
    (6, "def f(conn):\n    return getattr(conn._provider, 'remote_properties', None)\n", "getattr"),
    (7, "def f(pconsumer):\n    return getattr(pconsumer, 'prefetch', 1)\n", "getattr"),
    (8, "def f(pcons):\n    return getattr(pcons, 'selector_applied_remotely', True)\n", "getattr"),
    (9, "def f(pcons):\n    return getattr(pcons, 'copy_honoured', True)\n", "getattr"),
    (10, "def f(inbound):\n    return getattr(inbound, 'data', None)\n", "getattr"),
    (11, "def f(inbound):\n    inbound._msg = None\n", "private member '_msg'"),
    (12, "def f(conn):\n    refuse_on_rabbitmq(conn, 'x', 'y')\ndef g(p):\n    return p == 'RabbitMQ'\n",
     "RabbitMQ"),
    (13, "from ..provider.base import ProviderProducer\nclass AnonymousFallbackProducer(ProviderProducer):\n"
         "    pass\n", "implements ProviderProducer"),
    (14, "def _amqp_provider(config):\n    from ..provider.amqp import AmqpProvider\n", "provider.amqp"),
    (17, "async def f(c):\n    await c._p.stream_everything()\n", "'stream_everything'"),
])
def test_each_audit_row_would_be_caught(tmp_path: Path, row: int, source: str, expected: str) -> None:
    """The reaches of docs/failover-design.md §2, as the client wrote them then (rows 15 and 16
    are the listener and sink methods, checked below)."""
    (tmp_path / "client").mkdir()
    (tmp_path / "client" / "old.py").write_text(source)
    found = scan([tmp_path / "client"], OLD_PROVIDER if row <= 4 else PROVIDER)
    assert any(expected in f for f in found), (row, found)


def _methods(proto: Any) -> set[str]:
    return {n for n, v in vars(proto).items() if inspect.isfunction(v) and not n.startswith("_")}


def test_the_connection_hears_every_provider_listener_call() -> None:
    """Row 15: interrupted / restored / established / failure (Qpid JMS's ProviderListener), heard by
    the connection's internal side (``Connection.internal``, the listener it hands the provider)."""
    heard = ConnectionInternal
    missing = {n for n in _methods(base.ProviderListener) if not callable(getattr(heard, n, None))}
    assert _methods(base.ProviderListener) >= {"on_connection_interrupted", "on_connection_restored",
                                              "on_connection_established", "on_connection_failure"}
    assert missing == set()


def test_the_consumer_queue_is_a_complete_sink() -> None:
    """Row 16: the sink can drop prefetched messages on interruption."""
    wanted = _methods(base.InboundSink) | {"clear"}
    missing = {n for n in wanted if not callable(getattr(LocalQueue, n, None))}
    assert missing == set()
    q = LocalQueue()
    q.deliver("a")
    q.clear()
    assert len(q) == 0
