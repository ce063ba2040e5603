"""Explicit waits for integration tests (instead of sleeps)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest


def wait_for(cond: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Poll ``cond`` every 20 ms until it holds or ``timeout`` seconds pass; its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def threads_calling(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[str]:
    """The names of the threads that call method ``name`` of ``cls``, in order (it still runs)."""
    names: list[str] = []
    original = getattr(cls, name)

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return names
