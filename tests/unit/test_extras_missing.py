"""A pip user without an extra reads which one to install, not a bare "No module named ...":
``import amqp_jms.spark`` without the ``spark`` extra's modules (the CLI's commands are checked in
tests/integration/test_cli_scripting.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

HIDE_PYARROW = """
import sys

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pyarrow":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Missing())
try:
    import amqp_jms.spark
except ModuleNotFoundError as e:
    print(e.name, "|", e)
"""


def test_importing_the_spark_package_without_its_extra_names_the_pip_install() -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", HIDE_PYARROW], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("pyarrow | amqp_jms.spark needs the spark extra (missing: pyarrow): "
                                   "pip install 'amqp-jms[spark]'")
