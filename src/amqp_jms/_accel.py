"""Loading the optional C accelerators (``setup.py`` builds them when a C compiler is there).

Each accelerated path has a pure-Python twin giving the same results; this is the one place that
decides which runs: the compiled module when it was built, unless ``AMQP_JMS_NO_ACCEL`` is set to
anything but ``0`` (tests and benchmarks use it to run the twins).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["load_accelerator"]


def load_accelerator(name: str) -> ModuleType | None:
    """The compiled module ``name`` (e.g. ``amqp_jms.mq._mqxml``), or None: not built, or
    ``AMQP_JMS_NO_ACCEL`` asks for the Python paths."""
    if os.environ.get("AMQP_JMS_NO_ACCEL", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
