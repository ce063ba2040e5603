"""Explicit waits for integration tests (instead of sleeps)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(cond: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Poll ``cond`` every 20 ms until it holds or ``timeout`` seconds pass; its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()
