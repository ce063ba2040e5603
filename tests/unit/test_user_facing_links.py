"""No text the package shows a user (an error, a help line) sends them to a repository path: a
``pip install`` has no ``docs/`` folder, so such a pointer goes to the documentation site
(``amqp_jms._links.doc_url``). Read from the source: every string literal but docstrings and
other bare string statements."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "src" / "amqp_jms"
REPO_PATH = re.compile(r"\b(?:docs|examples|scripts|tests)/[\w./-]+")


def _repository_paths(path: Path, root: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bare = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings and the like
    return [
        f"{path.relative_to(root)}:{node.lineno}: {node.value[:80]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare
        and REPO_PATH.search(node.value)
    ]


def test_no_user_facing_text_points_at_a_repository_path() -> None:
    found = [hit for p in sorted(PKG.rglob("*.py")) for hit in _repository_paths(p, PKG)]
    assert found == []


def test_the_check_sees_a_message_but_not_a_docstring(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('def f(n):\n    """see docs/x.md"""\n'
                      '    raise ValueError(f"bad {n}; see docs/client.md")\n')
    (hit,) = _repository_paths(sample, tmp_path)
    assert hit.startswith("sample.py:3:") and "docs/client.md" in hit
