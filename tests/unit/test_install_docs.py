"""The install steps a pip user reads (README, quickstart) cannot drift from pyproject.toml: each
extra the package declares is in their extras table, the table names no extra that does not
exist, the core row names every dependency, and each page shows ``pip install`` for the extras
the issue of pip users names (spark, spark-connect, otel, demo)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _extras_table(text: str) -> dict[str, str]:
    """The ``| extra | brings | for |`` table: each extra named in a row's first cell (``(none)``
    for the core) to the row."""
    rows: dict[str, str] = {}
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"\|\s*extra\s*\|\s*brings\s*\|", line))
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        first = line.split("|")[1]
        for name in re.findall(r"`([\w-]+)`", first) or [first.strip()]:
            rows[name] = line
    return rows


@pytest.mark.parametrize("doc", ["README.md", "docs/quickstart.md"])
def test_the_extras_table_is_the_extras_pyproject_declares(doc: str) -> None:
    rows = _extras_table((ROOT / doc).read_text())
    assert set(rows) - {"(none)"} == set(PROJECT["optional-dependencies"])
    core = rows["(none)"]
    for requirement in PROJECT["dependencies"]:
        name = re.match(r"[\w.-]+", requirement)
        assert name is not None and name.group(0) in core, f"{doc}: {requirement} not in the core row"


@pytest.mark.parametrize("doc", ["README.md", "docs/quickstart.md"])
def test_pip_install_is_shown_for_each_user_extra(doc: str) -> None:
    text = (ROOT / doc).read_text()
    assert re.search(r"^pip install amqp-jms\b", text, re.M)
    for extra in ("spark", "spark-connect", "otel", "spark,demo"):
        assert f"pip install 'amqp-jms[{extra}]'" in text, f"{doc}: no pip install for [{extra}]"


def test_the_readme_links_pages_on_the_site_not_in_the_repository() -> None:
    """The README is the package's description on PyPI, where ``docs/x.md`` leads nowhere; each
    site link it gives is a page the site has."""
    text = (ROOT / "README.md").read_text()
    assert re.findall(r"\bdocs/[\w-]+\.md", text) == []
    site = PROJECT["urls"]["Documentation"]
    for page in re.findall(re.escape(site) + r"([\w-]+)/", text):
        assert (ROOT / "docs" / f"{page}.md").is_file(), page
