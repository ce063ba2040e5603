"""The C proton ``send``/``receive`` examples as a load generator to measure against.

Debian's ``libqpid-proton11-dev-examples`` ships their sources and ``libqpid-proton11-dev`` the
library (``scripts/install`` installs both); they are built here with gcc on first use, into a
cache folder outside the repository. Each run is timed from process start to exit, connection
set-up included (a few milliseconds against 10^4-10^5 messages). ``send`` counts a message once
the broker acknowledged it; ``receive`` settles each as it arrives (its stdout, one line per
message, goes to /dev/null).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

EXAMPLES = Path("/usr/share/proton/examples/c")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "amqp-jms-bench" / "c-proton"

__all__ = ["available", "c_receive", "c_send", "unavailable_reason"]


def unavailable_reason() -> str | None:
    if not (EXAMPLES / "send.c").exists() or not (EXAMPLES / "receive.c").exists():
        return f"no C proton examples in {EXAMPLES} (Debian: libqpid-proton11-dev-examples)"
    if shutil.which("gcc") is None:
        return "no gcc"
    try:
        _build("send")
        _build("receive")
    except (OSError, subprocess.CalledProcessError) as e:
        return f"building the C proton examples failed (libqpid-proton11-dev?): {e}"
    return None


def available() -> bool:
    return unavailable_reason() is None


def _build(name: str) -> Path:
    exe = CACHE / name
    src = EXAMPLES / f"{name}.c"
    if exe.exists() and exe.stat().st_mtime >= src.stat().st_mtime:
        return exe
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(src), "-lqpid-proton"], check=True,
                   capture_output=True)
    return exe


def _run(name: str, url: str, address: str, n: int) -> float:
    u = urlparse(url)
    exe = _build(name)
    t0 = time.perf_counter()
    subprocess.run([str(exe), u.hostname or "127.0.0.1", str(u.port or 5672), address, str(n)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    return n / (time.perf_counter() - t0)


def c_send(url: str, address: str, n: int) -> float:
    """Messages per second the C example sends (each acknowledged by the broker)."""
    return _run("send", url, address, n)


def c_receive(url: str, address: str, n: int) -> float:
    """Messages per second the C example receives (and settles) from ``address``."""
    return _run("receive", url, address, n)
