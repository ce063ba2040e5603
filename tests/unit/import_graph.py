"""Every ``amqp_jms`` import in a source tree, read from the source (every form: module level,
inside a function, under ``TYPE_CHECKING``), for the tests that hold the layers to their rules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["imports_in"]


def imports_in(pkg: Path) -> Iterator[tuple[Path, int, list[str]]]:
    """``(module path relative to pkg, line, imported names)`` for every import statement under
    ``pkg`` (the ``amqp_jms`` folder); relative imports are spelled out from ``amqp_jms``, and
    ``from a import b`` yields both ``a`` and ``a.b``."""
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg)
        depth = len(rel.parts) - 1  # how many dots reach the top package from this module
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    base = list(rel.parts[:-1])[: max(0, depth - (node.level - 1))]
                    mod = ".".join(["amqp_jms", *base, *([mod] if mod else [])])
                yield rel, node.lineno, [mod] + [f"{mod}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                yield rel, node.lineno, [a.name for a in node.names]
