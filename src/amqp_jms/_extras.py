"""What each pip extra brings that code checks for before using it, in a leaf module.

A pip user who lacks an extra should read which one to install, not a bare
``ModuleNotFoundError: No module named 'pyarrow'``. The command line (``amqp-jms demo``,
``pipeline``) and ``import amqp_jms.spark`` both ask here, so the extra's module list and the
wording live once.
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "missing_for", "needs_extras"]

#: extra (pyproject's optional-dependencies) -> the importable modules code relies on from it
EXTRAS: dict[str, tuple[str, ...]] = {
    "spark": ("pyspark", "pyarrow", "pandas"),
    "demo": ("matplotlib",),
}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_for(*extras: str) -> list[str]:
    """The modules of ``extras`` that are not installed, in table order."""
    return [m for extra in extras for m in EXTRAS[extra] if not _importable(m)]


def needs_extras(what: str, extras: tuple[str, ...], missing: list[str]) -> str:
    """"<what> needs the spark,demo extras (missing: pyspark): pip install 'amqp-jms[spark,demo]'"."""
    wanted = ",".join(extras)
    return (f"{what} needs the {wanted} extra{'s' if len(extras) > 1 else ''} "
            f"(missing: {', '.join(missing)}): pip install 'amqp-jms[{wanted}]'")
