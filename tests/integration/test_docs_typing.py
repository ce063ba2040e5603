"""The Python a user copies from the README and the quickstart passes ``mypy --strict`` as
printed: ``receive()`` is ``Message | None``, so the examples narrow it or use ``receive_body``.

mypy sees amqp_jms as a user's mypy sees an installed typed package: imported, not checked
(``--follow-imports=silent``); only the examples' own errors count.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _python_blocks(path: Path) -> list[str]:
    blocks, current, inside = [], [], False
    for line in path.read_text().splitlines():
        if line.strip() == "```python":
            inside, current = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(current) + "\n")
        elif inside:
            current.append(line)
    return blocks


def test_the_printed_examples_pass_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    files: list[str] = []
    for doc in ("README.md", "docs/quickstart.md"):
        for i, block in enumerate(_python_blocks(ROOT / doc)):
            if "pyspark" in block:  # pyspark's own typing is not ours to check
                continue
            f = tmp_path / f"{Path(doc).stem}_{i}.py"
            f.write_text(block)
            files.append(str(f))
    assert any("receive_body(str" in Path(f).read_text() for f in files)
    env = dict(os.environ, MYPYPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), *files],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
