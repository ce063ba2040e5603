"""Every import between the packages of ``src/amqp_jms/`` is one that docs/architecture.md's
layer table allows, so the page and the code cannot drift apart: the table is read from the
page, the imports from the source (every form, module level or inside a function)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from import_graph import imports_in

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "src" / "amqp_jms"
DOC = ROOT / "docs" / "architecture.md"
FOUNDATION = {"exceptions", "types", "destination", "_logs", "_version", "_accel", "_identifiers", "_links",
              "_extras", "_reading"}


def allowed_imports(text: str) -> dict[str, set[str] | None]:
    """The layer table of the page: package -> packages it may import (None: everything)."""
    rules: dict[str, set[str] | None] = {}
    for line in text.splitlines():
        m = re.fullmatch(r"\| `(\w+)` \| (.+) \|", line.strip())
        if m is None:
            continue
        package, cell = m.groups()
        rules[package] = None if cell.strip() == "everything" else set(re.findall(r"`(\w+)`", cell))
    return rules


def imports_between_packages(pkg: Path) -> list[tuple[str, str, str]]:
    """``(importing package, imported package, where)`` for every import of another top-level
    package or module of ``amqp_jms``."""
    found = []
    for rel, line, names in imports_in(pkg):
        top = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for name in names:
            parts = name.split(".")
            if parts[0] != "amqp_jms" or len(parts) < 2:
                continue
            other = parts[1]
            if other != top and ((pkg / other).is_dir() or (pkg / f"{other}.py").is_file()):
                found.append((top, other, f"{rel}:{line}"))
    return found


def violations(rules: dict[str, set[str] | None], imports: list[tuple[str, str, str]]) -> list[str]:
    out = []
    for top, other, where in imports:
        if top == "__init__":
            may: set[str] | None = {"client", "message"}
        elif top in FOUNDATION:
            may = set()
        else:
            may = rules.get(top, set())
        if may is None or other in FOUNDATION or other in may:
            continue
        out.append(f"{where}: {top} imports {other}")
    return sorted(set(out))


def test_the_page_names_a_rule_for_every_package() -> None:
    rules = allowed_imports(DOC.read_text(encoding="utf-8"))
    packages = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    packages |= {"management"}
    assert packages <= set(rules), f"docs/architecture.md's layer table lacks {packages - set(rules)}"


def test_every_import_between_packages_is_one_the_page_allows() -> None:
    rules = allowed_imports(DOC.read_text(encoding="utf-8"))
    assert violations(rules, imports_between_packages(PKG)) == []


@pytest.mark.parametrize(("code", "bad"), [
    ("from ..mapping.ids import to_amqp_id", True),   # the message model reaching up
    ("def f():\n    from amqp_jms.mapping import encode", True),  # a late import is one too
    ("from ..exceptions import JMSException", False),
    ("from . import _base", False),
])
def test_the_check_catches_an_import_against_the_flow(tmp_path: Path, code: str, bad: bool) -> None:
    pkg = tmp_path / "amqp_jms"
    for name in ("message", "mapping"):
        (pkg / name).mkdir(parents=True)
        (pkg / name / "__init__.py").write_text("")
    (pkg / "exceptions.py").write_text("")
    (pkg / "message" / "_x.py").write_text(code + "\n")
    rules = allowed_imports("| `message` | (foundation only) |\n| `mapping` | `message` |")
    assert bool(violations(rules, imports_between_packages(pkg))) is bad
