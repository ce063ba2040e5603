"""What ``pip install amqp-jms`` gets: ``python -m build`` makes an sdist and a wheel from this
tree; the wheel carries the LICENSE, ``py.typed`` and the metadata (license, classifiers, project
URLs, extras) and no C sources; the sdist has the C sources and the CHANGELOG with this version.

Built once per module in a temporary directory, as the pure-Python wheel (``AMQP_JMS_NO_ACCEL=1``:
``py3-none-any``), which skips compiling and keeps this to about 10 s; the compiled wheel, built
from the same sdist, is the ``slow`` test (40 s on a loaded 2-core machine). A wheel built where
no C compiler works (``CC=/bin/false``) is installed and run: the pure-Python twins do the work.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import amqp_jms

ROOT = Path(__file__).resolve().parents[2]


def _build(out: Path, *args: str, source: Path = ROOT, env: dict[str, str] | None = None) -> None:
    pytest.importorskip("build")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), *args, str(source)],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}, cwd=out.parent,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # the sdist, then the wheel built from it (as pip does from PyPI's sdist)
    _build(out, env={"AMQP_JMS_NO_ACCEL": "1"})
    return out


def _wheel_from_sdist(dist: Path, tmp_path: Path, env: dict[str, str]) -> Path:
    """A wheel built (with ``env``) from the module's sdist unpacked under ``tmp_path``, as pip
    builds one from PyPI's sdist."""
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    (unpacked,) = tmp_path.glob("amqp_jms-*")
    out = tmp_path / "wheel"
    out.mkdir()
    _build(out, "--wheel", source=unpacked, env=env)
    (wheel,) = out.glob("*.whl")
    return wheel


def _wheel(dist: Path) -> zipfile.ZipFile:
    (wheel,) = dist.glob("*.whl")
    return zipfile.ZipFile(wheel)


def test_the_wheel_carries_license_typing_marker_and_metadata(dist: Path) -> None:
    v = amqp_jms.__version__
    with _wheel(dist) as whl:
        names = set(whl.namelist())
        info = f"amqp_jms-{v}.dist-info"
        assert f"{info}/licenses/LICENSE" in names
        assert "Apache License" in whl.read(f"{info}/licenses/LICENSE").decode()
        assert "amqp_jms/py.typed" in names
        assert not [n for n in names if n.endswith((".c", ".h"))]  # sources stay in the sdist
        meta = Parser().parsestr(whl.read(f"{info}/METADATA").decode())
        entry_points = whl.read(f"{info}/entry_points.txt").decode()
    assert (meta["Name"], meta["Version"]) == ("amqp-jms", v)
    assert meta["License-Expression"] == "Apache-2.0" and meta["License-File"] == "LICENSE"
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    urls = {u.split(",")[0]: u.split(",", 1)[1].strip() for u in meta.get_all("Project-URL") or []}
    assert {"Documentation", "Source", "Changelog"} <= set(urls)
    assert set(meta.get_all("Provides-Extra") or []) >= {"spark", "otel", "demo", "dev"}
    requires = meta.get_all("Requires-Dist") or []
    assert any(r.startswith("pyspark") and 'extra == "spark"' in r for r in requires)
    assert any(r.startswith("build") and 'extra == "dev"' in r for r in requires)
    assert "amqp-jms = amqp_jms.cli.main:main" in entry_points
    assert meta.get_payload() and "pip install" in meta.get_payload()  # the README is the description


def test_the_wheel_has_every_file_of_the_package(dist: Path) -> None:
    """A data file added under src/amqp_jms (a stub, a template) reaches pip users too."""
    pkg = ROOT / "src" / "amqp_jms"
    shipped = {
        f"amqp_jms/{p.relative_to(pkg).as_posix()}"
        for p in pkg.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".so", ".c", ".pyc")
    }
    with _wheel(dist) as whl:
        assert shipped - set(whl.namelist()) == set()


def test_the_sdist_has_the_c_sources_license_and_changelog(dist: Path) -> None:
    v = amqp_jms.__version__
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        changelog = tar.extractfile(f"amqp_jms-{v}/CHANGELOG.md")
        assert changelog is not None
        text = changelog.read().decode()
    assert {"LICENSE", "CHANGELOG.md", "setup.py", "pyproject.toml"} <= names
    assert "src/amqp_jms/mapping/codec/_csections.c" in names
    assert not [n for n in names if n.endswith(".so")]  # never a developer's compiled module
    assert f"## [{v}]" in text


def test_no_accel_made_a_pure_python_wheel(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as whl:
        assert not [n for n in whl.namelist() if n.endswith((".so", ".c"))]


QUICKSTART = """
import sys
from amqp_jms import _accel, __file__ as where
assert where.startswith(sys.argv[1]), where  # the installed wheel, not this tree
for name in ("selector._strkernels", "mq._mqxml", "mq._mqout", "mapping.codec._csections",
             "provider.amqp._ctransfer"):
    assert _accel.load_accelerator("amqp_jms." + name) is None, name
exec(sys.stdin.read())
"""


def test_a_wheel_built_without_a_c_compiler_installs_and_runs(dist: Path, tmp_path: Path) -> None:
    """setup.py's accelerators are optional: with no working compiler the build still succeeds,
    the wheel keeps its platform tag (it was built for this interpreter) and, installed, runs
    the quickstart with every accelerator's pure-Python twin."""
    wheel = _wheel_from_sdist(dist, tmp_path, {"AMQP_JMS_NO_ACCEL": "", "CC": "/bin/false"})
    assert "-cp3" in wheel.name  # declared extensions: the tag says which interpreter it is for
    with zipfile.ZipFile(wheel) as whl:
        assert not [n for n in whl.namelist() if n.endswith((".so", ".c"))]
    site = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                          "--target", str(site), str(wheel)], capture_output=True, text=True, timeout=120)
    assert pip.returncode == 0, pip.stderr
    env = {**os.environ, "PYTHONPATH": str(site), "AMQP_JMS_NO_ACCEL": ""}
    version = subprocess.run([str(site / "bin" / "amqp-jms"), "--version"], capture_output=True, text=True,
                             timeout=60, env=env)
    assert version.returncode == 0 and amqp_jms.__version__ in version.stdout, version.stderr
    example = (ROOT / "docs" / "quickstart.md").read_text().split("```python\n", 1)[1].split("```", 1)[0]
    run = subprocess.run([sys.executable, "-c", QUICKSTART, str(site)], input=example, capture_output=True,
                         text=True, timeout=120, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ['{"id": 1} 120.5', '{"id": 2}']


@pytest.mark.slow
def test_the_compiled_wheel_has_the_accelerators_but_not_their_sources(dist: Path, tmp_path: Path) -> None:
    wheel = _wheel_from_sdist(dist, tmp_path, {"AMQP_JMS_NO_ACCEL": ""})
    assert "-cp3" in wheel.name and not wheel.name.endswith("-none-any.whl")
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    assert not [n for n in names if n.endswith((".c", ".h"))]
    # each accelerator compiled (the machine has a C compiler) next to its typing stub
    assert len([n for n in names if n.endswith(".so")]) == 5
    assert "amqp_jms/mapping/codec/_csections.c" not in names
