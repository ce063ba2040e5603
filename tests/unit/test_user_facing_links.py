"""No text the package shows a user (an error, a help line) sends them to a repository path: a
``pip install`` has no ``docs/`` folder, so such a pointer goes to the documentation site
(``amqp_jms._links.doc_url``). Read from the source: every string literal but docstrings and
other bare string statements."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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


def _anchors(page: Path) -> set[str]:
    """The heading ids the documentation site gives ``page`` (Python-Markdown's toc, as mkdocs)."""
    import markdown

    md = markdown.Markdown(extensions=["toc", "fenced_code", "tables"])
    md.convert(page.read_text(encoding="utf-8"))

    def walk(tokens: list[dict[str, object]]) -> set[str]:
        ids: set[str] = set()
        for t in tokens:
            ids.add(str(t["id"]))
            ids |= walk(t["children"])  # type: ignore[arg-type]
        return ids

    return walk(md.toc_tokens)  # type: ignore[attr-defined]


def test_every_documentation_link_names_a_page_and_heading_that_exist() -> None:
    """A ``doc_url(page, anchor)`` in an error or a help text lands on that page's heading."""
    pytest.importorskip("markdown")
    docs = PKG.parents[1] / "docs"
    calls: list[tuple[str, str, str]] = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "doc_url":
                args = [a.value for a in node.args if isinstance(a, ast.Constant)]
                assert len(args) == len(node.args), f"{path}:{node.lineno}: doc_url with a computed page"
                anchor = str(args[1]) if len(args) > 1 else ""
                calls.append((f"{path.relative_to(PKG)}:{node.lineno}", str(args[0]), anchor))
    assert calls
    for where, page, anchor in calls:
        md = docs / f"{page}.md"
        assert md.is_file(), f"{where}: no page {page}"
        assert not anchor or anchor in _anchors(md), f"{where}: {page}.md has no heading #{anchor}"
