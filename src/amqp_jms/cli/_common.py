"""What every ``amqp-jms`` subcommand shares: output (rich or JSON lines), option parsing, errors.

Why one place: the exit-code contract (0 ok, 1 JMS error, 2 usage) and the ``--json`` output only
hold if every command reports through the same few functions.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from .._extras import missing_for, needs_extras
from ..destination import Destination, parse_destination
from ..types import Byte, Char, Double, Float, Int, Long, Short

__all__ = [
    "DEFAULT_URL",
    "EXIT_UNMET",
    "CommandFailed",
    "ExpectationUnmet",
    "Output",
    "UsageError",
    "add_common",
    "parse_destination_arg",
    "parse_property",
    "require_extras",
    "to_jsonable",
]

DEFAULT_URL = os.environ.get("AMQP_JMS_URL", "amqp://127.0.0.1:5672")
"""The broker URL when ``--url`` is not given: ``$AMQP_JMS_URL`` or the local default port."""


class UsageError(Exception):
    """A command line that parses but makes no sense (exit code 2)."""


EXIT_UNMET = 3
"""The exit code of a command that ran without error but found less than it was told to expect."""


class CommandFailed(Exception):
    """The command ran to its end and its result is a failure (exit code 1): the demo lost
    messages, the benchmark received fewer than it sent. Reported like an error, so ``--json``
    makes it the one JSON object on stderr."""


class ExpectationUnmet(Exception):
    """The command worked, but what ``--expect`` asked for did not happen (exit code 3): a
    script tells "the queue was empty" from "the broker was unreachable" (exit 1)."""


def require_extras(what: str, *extras: str, java: bool = False) -> None:
    """Check, before any work starts, that the ``extras`` (and Java, for Spark) are installed;
    else a UsageError naming the ``pip install`` that brings them (exit 2)."""
    missing = missing_for(*extras)
    if missing:
        raise UsageError(needs_extras(what, extras, missing))
    home = os.environ.get("JAVA_HOME")
    java_home = bool(home) and os.access(os.path.join(home or "", "bin", "java"), os.X_OK)
    if java and not shutil.which("java") and not java_home:
        raise UsageError(f"{what} runs Spark, which needs Java 17 or later: install a JDK and put "
                         "java on the PATH or set JAVA_HOME")


def add_common(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """Add ``--json`` and ``--debug``; they work before or after the subcommand name."""
    default: Any = False if top else argparse.SUPPRESS
    parser.add_argument(
        "--json", action="store_true", default=default, help="print machine-readable JSON lines on stdout"
    )
    parser.add_argument(
        "--debug", action="store_true", default=default, help="show tracebacks and debug details on errors"
    )


def add_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        default=DEFAULT_URL,
        help="broker URL with options, e.g. amqp://user:pass@host:5672?jms.clientID=x, or "
        "failover:(amqp://a:5672,amqp://b:5672) to reconnect "
        f"(default: $AMQP_JMS_URL or {DEFAULT_URL})",
    )


_PROPERTY_TYPES: dict[str, Any] = {
    "string": str,
    "str": str,
    "boolean": None,  # handled specially
    "bool": None,
    "byte": Byte,
    "short": Short,
    "int": Int,
    "integer": Int,
    "long": Long,
    "float": Float,
    "double": Double,
    "char": Char,
}


_TYPE_NAMES = ("string", "boolean", "byte", "short", "int", "long", "float", "double", "char")


def parse_property(spec: str) -> tuple[str, Any]:
    """Parse ``name=value[:type]`` into a typed JMS property value.

    The type is one of string (default), boolean, byte, short, int, long, float, double, char.
    A value containing ``:`` keeps it when what follows the last ``:`` is not a word
    (``url=http://x``, ``at=12:30``); a word there that is no type is a usage error, so a
    mistyped type is never sent as part of the value (``greeting=a:b:string`` sends ``a:b``).
    """
    name, sep, rest = spec.partition("=")
    if not sep or not name:
        raise UsageError(f"--property {spec!r}: expected name=value[:type]")
    value, type_name = rest, "string"
    head, colon, tail = rest.rpartition(":")
    if colon and tail.lower() in _PROPERTY_TYPES:
        value, type_name = head, tail.lower()
    elif colon and tail.isalpha():  # n=5:foo: a typo'd type would otherwise send the string "5:foo"
        raise UsageError(
            f"--property {spec!r}: unknown type {tail!r} (one of {', '.join(_TYPE_NAMES)}); "
            f"for a string ending in ':{tail}', add ':string'"
        )
    kind = _PROPERTY_TYPES[type_name]
    try:
        if kind is None:
            if value.lower() not in ("true", "false"):
                raise ValueError(f"{value!r} is not true or false")
            return name, value.lower() == "true"
        if kind in (Float, Double):
            return name, kind(float(value))
        if kind is str or kind is Char:
            return name, kind(value)
        return name, kind(int(value, 0))
    except ValueError as e:
        raise UsageError(f"--property {spec!r}: not a valid {type_name}: {e}") from None


def parse_destination_arg(text: str) -> Destination:
    """``queue://x``, ``topic://x`` or a plain name (a queue)."""
    if not text:
        raise UsageError("destination must not be empty")
    return parse_destination(text)


def to_jsonable(value: Any) -> Any:
    """Typed JMS values as JSON: numbers and strings as themselves, bytes as hex, others as str."""
    if value is None or isinstance(value, bool | str):
        return value if not isinstance(value, str) else str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        f = float(value)
        return f if math.isfinite(f) else str(f)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return str(value)


@dataclass
class Output:
    """Where a command reports: rich on the terminal, or JSON lines when ``--json`` is set.

    Human output (tables, progress) goes to stderr when ``--json`` is on, so stdout stays parseable.
    """

    json: bool = False
    quiet: bool = False
    stdout: TextIO | None = None

    def __post_init__(self) -> None:
        out = self.stdout or sys.stdout
        # piped or captured output gets wide tables instead of ellipses at 80 columns
        self.console = Console(file=out, highlight=False, soft_wrap=True, width=None if _tty(out) else 200)
        err_width = None if _tty(sys.stderr) else 200
        self.err = Console(file=sys.stderr, highlight=False, soft_wrap=True, width=err_width)
        self._out = out

    @property
    def human(self) -> Console:
        """The console for human-readable output (stderr under ``--json``)."""
        return self.err if self.json else self.console

    def emit(self, record: Mapping[str, Any]) -> None:
        """One JSON line on stdout (only under ``--json``)."""
        if self.json:
            self.json_line(record)

    def json_line(self, record: Mapping[str, Any]) -> None:
        """One JSON line on stdout, whatever the mode (``receive --format json``)."""
        self._out.write(json.dumps(to_jsonable(record), ensure_ascii=False) + "\n")
        self._out.flush()

    def line(self, text: str) -> None:
        """A raw line of data on stdout (message bodies: no markup, no wrapping)."""
        self._out.write(text + "\n")
        self._out.flush()

    def info(self, text: str) -> None:
        if not self.quiet:
            self.human.print(text)

    def table(self, title: str, columns: list[str], rows: list[list[Any]]) -> None:
        t = Table(title=title)
        for c in columns:
            t.add_column(c, justify="right" if c[:1].isdigit() or c in _NUMERIC else "left")
        for r in rows:
            t.add_row(*(str(x) for x in r))
        if not self.quiet:
            self.human.print(t)

    @contextmanager
    def progress(self, description: str, total: int | None) -> Iterator[Any]:
        """A progress bar on stderr (hidden when quiet, when ``--json`` or not on a terminal)."""
        disable = self.quiet or self.json or not self.err.is_terminal
        prog = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=self.err,
            disable=disable,
            transient=False,
        )
        with prog:
            task = prog.add_task(description, total=total)

            class _Bar:
                def advance(self, n: int = 1) -> None:
                    prog.advance(task, n)

                def update(self, **kw: Any) -> None:
                    prog.update(task, **kw)

            yield _Bar()


def _tty(f: Any) -> bool:
    try:
        return bool(f.isatty())
    except (AttributeError, ValueError):
        return False


_NUMERIC = {"messages", "msgs/s", "seconds", "count", "bytes", "MiB/s", "lost", "duplicates", "in", "out"}
