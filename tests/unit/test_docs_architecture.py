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
