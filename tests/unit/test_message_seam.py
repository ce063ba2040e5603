"""No code outside ``amqp_jms.message`` touches a message's slots (issue 32).

``Message`` keeps its data in ``__slots__``; the mapping, mq, spark, the client, the provider and
the acknowledgement rules read and change it through the typed seam (``MessageData`` with
``view`` / ``snapshot`` / ``receive`` / ``restore``, and the named functions of
``message/_seam.py``), so mypy checks a message's data end to end. This test reads every module
outside ``message/`` and fails on an ``<expr>._name`` (or ``getattr(<expr>, "_name")``) where
``_name`` is one of the message classes' private members and ``<expr>`` is not ``self``/``cls``
of a class that declares that name itself (``BrokerMessage._props`` is the broker's own).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from amqp_jms.message import BytesMessage, MapMessage, Message, ObjectMessage, StreamMessage, TextMessage

SRC = Path(__file__).resolve().parents[2] / "src" / "amqp_jms"
CLASSES = [Message, TextMessage, BytesMessage, MapMessage, StreamMessage, ObjectMessage]


def message_privates() -> set[str]:
    """Every private (not dunder) slot and method of the six message classes."""
    names: set[str] = set()
    for cls in CLASSES:
        members = [*cls.__dict__.get("__slots__", ()), *(n for n, _ in inspect.getmembers(cls))]
        names.update(n for n in members if n.startswith("_") and not n.startswith("__"))
    return names


def _declared(cls: ast.ClassDef) -> set[str]:
    """The private names a class declares for itself: its ``__slots__`` and ``self._x =``."""
    own: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                for t in node.targets):
            own.update(c.value for c in ast.walk(node.value)
                       if isinstance(c, ast.Constant) and isinstance(c.value, str))
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    own.add(t.attr)
    return own


def reaches(source: str, where: str, private: set[str]) -> list[str]:
    tree = ast.parse(source)
    allowed: dict[int, set[str]] = {}
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        own = _declared(cls)
        for node in ast.walk(cls):
            allowed.setdefault(id(node), set()).update(own)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) > 1:
            arg = node.args[1]
            if isinstance(arg, ast.Constant) and arg.value in private:
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
            continue
        if isinstance(node, ast.Attribute) and node.attr in private:
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr in allowed.get(id(node), ()):
                continue  # a class of its own with a member of that name (BrokerMessage._props)
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_scan_finds_a_reach_into_a_message() -> None:
    code = ("def f(msg, data):\n"
            "    msg._props\n"
            "    data.properties\n"
            "    getattr(msg, '_destination')\n"
            "class Own:\n"
            "    __slots__ = ('_props',)\n"
            "    def copy(self, other):\n"
            "        other._props = self._props\n")
    assert reaches(code, "x", message_privates()) == ["x:2: msg._props", "x:4: getattr(msg, '_destination')"]


def test_no_layer_outside_message_reaches_into_a_message() -> None:
    private = message_privates()
    found: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "message":
            continue
        found += reaches(path.read_text(), str(rel), private)
    assert not found, ("reaches into Message's private members (use MessageData / message._seam):\n"
                       + "\n".join(found))
