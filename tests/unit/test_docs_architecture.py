"""docs/architecture.md names modules by path so that a newcomer can find a JMS concept by its
name: each path it names must exist, or the page sends the reader nowhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
SRC = ROOT / "src" / "amqp_jms"

#: `package/module.py` or `package/` in backticks (the page's own convention for source paths)
PATH = re.compile(r"`((?:[a-z_]+/)+(?:[a-z_]+\.(?:py|c))?|[a-z_]+\.py)`")


def _named_paths() -> set[str]:
    return {m.group(1) for m in PATH.finditer(PAGE.read_text(encoding="utf-8"))}


def test_the_page_names_source_paths() -> None:
    # the pattern must keep finding the page's paths, or the test below checks nothing
    assert {"client/session.py", "provider/failover/", "broker/protocol/attach.py"} <= _named_paths()


def _exists(path: str) -> bool:
    if "/" in path:
        return (SRC / path).exists() or (ROOT / path).exists()
    # a bare file name (a module beside the one just named, or a test): somewhere in the tree
    return any(True for base in (SRC, ROOT / "tests") for _ in base.rglob(path))


def test_every_source_path_the_page_names_exists() -> None:
    missing = sorted(p for p in _named_paths() if not _exists(p))
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


#: `Name` or `Class.member` in backticks: the classes, functions and methods the broker section names
NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.(?!py`)[A-Za-z_][A-Za-z0-9_]*)?)`")


def _broker_section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## The broker: four rooms")
    return text[start : text.index("\n## ", start + 1)]


def _broker_definitions() -> tuple[set[str], set[str]]:
    """Every top-level name defined in ``broker/`` (classes, functions, constants) and every
    ``Class.member`` (methods, class-level names and what its methods set on ``self``)."""
    import ast

    names: set[str] = set()
    members: set[str] = set()
    for path in (SRC / "broker").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        members.add(f"{node.name}.{item.name}")
                        names.add(item.name)  # a method named alone, its class in the same step
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        members.add(f"{node.name}.{item.target.id}")
                members.update(f"{node.name}.{a.attr}" for a in ast.walk(node)
                               if isinstance(a, ast.Attribute) and isinstance(a.ctx, ast.Store)
                               and isinstance(a.value, ast.Name) and a.value.id == "self")
    return names, members


def test_the_broker_section_names_code_that_exists() -> None:
    """The broker section walks one message through functions by name (``Router.publish``,
    ``OutgoingLink.deliver``, ...): a rename or a move that leaves the page behind fails here."""
    named = {n for n in NAME.findall(_broker_section()) if n != "TYPE_CHECKING"}
    # ``core.management``: an attribute of the BrokerCore the text names; checked as a member
    named = {"BrokerCore.management" if n == "core.management" else n for n in named}
    assert {"Router.publish", "OutgoingLink.deliver", "_accept_stored", "StoreHooks"} <= named
    names, members = _broker_definitions()
    missing = sorted(n for n in named if (n not in members if "." in n else n not in names))
    assert missing == [], f"architecture.md's broker section names what broker/ does not define: {missing}"


def test_every_module_of_a_broker_room_is_named_where_a_newcomer_looks() -> None:
    """A module added to a room of the broker (``operations/``, ``protocol/``, ``routing/``,
    ``storage/``) is named in the room's own docstring and in the page's picture of the rooms,
    so that the folder's guide and the page keep listing everything in it."""
    import ast

    picture = _broker_section().split("### One message")[0]
    unnamed = []
    for room in ("operations", "protocol", "routing", "storage"):
        folder = SRC / "broker" / room
        guide = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
        modules = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
        modules += [p.parent.name for p in folder.glob("*/__init__.py")]
        assert len(modules) >= 4, room
        for name in sorted(modules):
            if f"``{name}``" not in guide:
                unnamed.append(f"broker/{room}/__init__.py docstring: {name}")
            if f"`{name}.py`" not in picture and f"{room}/{name}/`" not in picture:
                unnamed.append(f"architecture.md's rooms: broker/{room}/{name}")
    assert unnamed == [], unnamed
