"""Run rhea (the JavaScript AMQP 1.0 stack, under Node.js) scripts as an independent AMQP peer.

Why: a test that only talks to itself proves little. rhea shares no code with proton, so a message
that goes from rhea through our broker to our client (or the other way) checks the wire format
against a second implementation.

The contract with a script is JSON in, JSON out: the input object is written to the script's
stdin, and the script prints its result as JSON on the **last line** of stdout (earlier lines are
ignored, so scripts may log). Scripts live in ``tests/interop/`` (where ``npm install`` puts
``node_modules/rhea``) and are run with ``NODE_PATH`` pointing at that ``node_modules``::

    from amqp_jms.testing import rhea
    if rhea.available():
        out = rhea.run("send.js", {"url": broker.url, "address": "queue://q", "count": 3})

:func:`run_code` runs JavaScript given as a string the same way (handy for one-off checks), and
:func:`start` runs a script in the background (e.g. rhea listening as a server) until stopped.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "RheaError",
    "RheaProcess",
    "available",
    "interop_dir",
    "run",
    "run_code",
    "start",
    "unavailable_reason",
]


class RheaError(RuntimeError):
    """A rhea script failed, timed out, or printed no JSON (the message carries its stderr)."""


def interop_dir() -> Path:
    """The directory holding the node scripts and ``node_modules``.

    ``AMQP_JMS_INTEROP_DIR`` overrides it; the default is ``tests/interop`` of the source checkout.
    """
    env = os.environ.get("AMQP_JMS_INTEROP_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "tests" / "interop"


def _node() -> str | None:
    return shutil.which("node") or shutil.which("nodejs")


def unavailable_reason() -> str | None:
    """Why rhea scripts cannot run here, or ``None`` when they can."""
    if _node() is None:
        return "node is not installed"
    if not (interop_dir() / "node_modules" / "rhea").is_dir():
        return f"rhea is not installed (run `npm install` in {interop_dir()})"
    return None


def available() -> bool:
    """True when node and the rhea package are installed."""
    return unavailable_reason() is None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["NODE_PATH"] = str(interop_dir() / "node_modules")
    return env


def _script_path(script: str | os.PathLike[str]) -> Path:
    path = Path(script)
    if not path.is_absolute():
        path = interop_dir() / path
    if not path.is_file():
        raise RheaError(f"rhea script not found: {path}")
    return path


def _parse_last_json(stdout: str, what: str, stderr: str) -> Any:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        raise RheaError(f"{what} printed nothing; stderr:\n{stderr[-2000:]}")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RheaError(f"{what} did not end with a JSON line ({e}): {lines[-1][:200]!r}") from e


def _command(script: str | os.PathLike[str]) -> tuple[str, Path]:
    """node and the script's path; RheaError saying why when node or rhea is missing."""
    reason = unavailable_reason()
    if reason is not None:
        raise RheaError(reason)
    node = _node()
    assert node is not None
    return node, _script_path(script)


def run(script: str | os.PathLike[str], input: Any = None, *, timeout: float = 30.0) -> Any:
    """Run ``script`` with ``input`` as JSON on stdin; return the JSON of its last stdout line.

    Raises:
        RheaError: node or rhea missing, the script exits non-zero, times out, or prints no JSON.
    """
    node, path = _command(script)
    try:
        proc = subprocess.run(
            [node, str(path)],
            input=json.dumps(input if input is not None else {}),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_env(),
            cwd=str(interop_dir()),
        )
    except subprocess.TimeoutExpired as e:
        raise RheaError(f"{path.name} timed out after {timeout} s; stderr:\n{_text(e.stderr)}") from e
    if proc.returncode != 0:
        raise RheaError(f"{path.name} exited with {proc.returncode}; stderr:\n{proc.stderr[-2000:]}")
    return _parse_last_json(proc.stdout, path.name, proc.stderr)


def run_code(code: str, input: Any = None, *, timeout: float = 30.0) -> Any:
    """Like :func:`run`, for JavaScript source given as a string."""
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
        f.write(code)
        name = f.name
    try:
        return run(name, input, timeout=timeout)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode(errors="replace")[-2000:]
    return data[-2000:]


class RheaProcess:
    """A rhea script running in the background; a context manager that kills it on exit.

    The script reads its JSON input from stdin, prints one JSON line when ready (read by
    :meth:`ready`, e.g. ``{"port": 1234}`` for a listener), and its final JSON result on the last
    line when it ends (returned by :meth:`result`).
    """

    def __init__(self, proc: subprocess.Popen[str], name: str) -> None:
        self.proc = proc
        self.name = name

    def ready(self, timeout: float = 10.0) -> Any:
        """Wait for and return the first JSON line the script prints."""
        import selectors

        assert self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not sel.select(timeout):
                raise RheaError(f"{self.name} printed nothing within {timeout} s")
        finally:
            sel.close()
        line = self.proc.stdout.readline()
        if not line:
            raise RheaError(f"{self.name} ended before it was ready; stderr:\n{self._stderr()}")
        return json.loads(line)

    def result(self, timeout: float = 30.0) -> Any:
        """Wait for the script to end; the JSON of its last stdout line."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            self.stop()
            raise RheaError(f"{self.name} did not finish within {timeout} s") from e
        if self.proc.returncode != 0:
            raise RheaError(f"{self.name} exited with {self.proc.returncode}; stderr:\n{err[-2000:]}")
        return _parse_last_json(out, self.name, err)

    def _stderr(self) -> str:
        with contextlib.suppress(Exception):
            if self.proc.poll() is not None and self.proc.stderr is not None:
                return self.proc.stderr.read()[-2000:]
        return ""

    def stop(self) -> None:
        """Kill the script if it still runs. Idempotent."""
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.communicate(timeout=5)

    def __enter__(self) -> RheaProcess:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def start(script: str | os.PathLike[str], input: Any = None) -> RheaProcess:
    """Start ``script`` in the background with ``input`` on stdin (stdin is then closed)."""
    node, path = _command(script)
    proc = subprocess.Popen(
        [node, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=str(interop_dir()),
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(input if input is not None else {}))
    proc.stdin.close()
    proc.stdin = None  # closed: communicate() in result() must not flush it
    return RheaProcess(proc, path.name)
