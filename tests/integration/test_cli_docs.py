"""The CLI reference in docs/cli.md cannot drift from the parser: every command and option is there;
and the README's and quickstart's Python examples run and pass ``mypy --strict`` as printed."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from amqp_jms.cli.main import COMMANDS, build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_and_option_is_documented(command: str) -> None:
    text = DOC.read_text()
    assert f"## `{command}" in text
    parsers = _subparsers(build_parser(only=command))
    todo = [parsers[command]]
    todo += list(_subparsers(parsers[command]).values())
    for p in todo:
        for action in p._actions:
            for opt in action.option_strings:
                if opt.startswith("--") and opt not in ("--help", "--json", "--debug"):
                    assert opt in text, f"{command}: {opt} is not in docs/cli.md"


def _python_blocks(path: Path) -> list[str]:
    blocks, current, inside = [], [], False
    for line in path.read_text().splitlines():
        if line.strip() == "```python":
            inside, current = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(current))
        elif inside:
            current.append(line)
    return blocks


@pytest.mark.parametrize("doc", ["README.md", "docs/quickstart.md"])
def test_quickstart_python_examples_run(doc: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every self-contained Python example runs (Spark and RabbitMQ ones need their peers)."""
    blocks = [b for b in _python_blocks(DOC.parents[1] / doc) if "pyspark" not in b and "RabbitMQ" not in b]
    assert blocks
    for code in blocks:
        exec(compile(code, f"{doc} example", "exec"), {"__name__": "__example__"})
    assert capsys.readouterr().out


def test_the_printed_examples_pass_mypy_strict(tmp_path: Path) -> None:
    """A user's ``mypy --strict`` passes on the README's and the quickstart's examples as printed:
    ``receive()`` is ``Message | None``, so they narrow it or use ``receive_body``. mypy sees
    amqp_jms as it sees an installed typed package: imported, not checked
    (``--follow-imports=silent``); only the examples' own errors count."""
    pytest.importorskip("mypy")
    files: list[str] = []
    for doc in ("README.md", "docs/quickstart.md"):
        for i, block in enumerate(_python_blocks(DOC.parents[1] / doc)):
            if "pyspark" in block:  # pyspark's own typing is not ours to check
                continue
            f = tmp_path / f"{Path(doc).stem}_{i}.py"
            f.write_text(block + "\n")
            files.append(str(f))
    assert any("receive_body(str" in Path(f).read_text() for f in files)
    env = dict(os.environ, MYPYPATH=str(DOC.parents[1] / "src"))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), *files],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
