"""The client's objects talk to each other through declared members only (issue 19).

A connection, its sessions, their consumers and producers, the simplified API and the asyncio
face each declare what the others may use on one internal object, off the JMS API
(``Connection.internal.wait_provider``, ``Session.internal.connection``,
``MessageConsumer.internal.deliver``, ...: the ``*Internal`` classes, ``SEAMS`` below). A reach into
another object's private member (``conn._provider_wait``, ``consumer._queue``) is a join that
the owner cannot see or change safely; this test reads ``amqp_jms.client`` and ``amqp_jms.aio``
and fails on each one. (What the client may use of the *provider* is held by
``test_provider_interface.py``.)
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "amqp_jms"
SCANNED = [SRC / "client", SRC / "aio"]

#: The declared seams: each is its owner's internal side (``owner.internal``), written in the
#: owner's module, and may use the owner's private members through ``self._owner``; nothing else
#: may.
SEAMS = frozenset({"ConnectionInternal", "SessionInternal", "ConsumerInternal", "ProducerInternal",
                   "ContextInternal"})


def reach_ins(source: str, where: str) -> list[str]:
    """Every ``<expr>._name`` (or ``getattr(<expr>, "_name")``) in ``source`` where ``<expr>``
    is not ``self``/``cls`` (nor, in a declared seam, ``self._owner``) and the name is private
    (not dunder). A message is read and changed through its typed seam
    (``MessageData``, ``amqp_jms.message._data`` / ``_seam``), never its slots."""
    found = []
    tree = ast.parse(source)
    friends = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name in SEAMS
               for n in ast.walk(c) if isinstance(n, ast.Attribute) and _owner_of_seam(n.value)}
    for node in ast.walk(tree):
        if id(node) in friends:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1:
            target, name_arg = node.args[0], node.args[1]
            if isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str) \
                    and _private(name_arg.value) and not _own(target):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
            continue
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not _private(name) or _own(node.value):
            continue
        found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _owner_of_seam(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "_owner" and _own(node.value)


def _own(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def test_the_scan_finds_a_reach_in() -> None:
    code = ("def f(self, conn, consumer):\n"
            "    self._own()\n"
            "    conn._provider_wait(1)\n"
            "    consumer._queue.get()\n"
            "    self._session._connection\n"
            "    consumer.local_queue.get()\n"
            "    msg._props\n"
            "    getattr(session, '_completions', None)\n"
            "    getattr(self, '_own', None)\n"
            "class ConnectionInternal:\n"
            "    def f(self):\n"
            "        return self._owner._provider\n"
            "class Elsewhere:\n"
            "    def f(self):\n"
            "        return self._owner._provider\n")
    assert sorted(reach_ins(code, "x")) == [
        "x:15: self._owner._provider", "x:3: conn._provider_wait", "x:4: consumer._queue",
        "x:5: self._session._connection", "x:7: msg._props", "x:8: getattr(session, '_completions', None)"]


def test_the_client_reaches_no_private_member_of_another_object() -> None:
    found: list[str] = []
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            found += reach_ins(path.read_text(), str(path.relative_to(SRC)))
    assert not found, "reach-ins into another object's private members:\n" + "\n".join(found)
