"""The ``amqp-jms`` command: argument parsing, dispatch, and the exit-code contract.

Exit codes: **0** success, **1** a JMS error (one line on stderr naming it, no traceback unless
``--debug``), **2** a usage error (argparse's own, or a :class:`UsageError` from a command),
**3** the command worked but found less than ``--expect`` asked for, **130** interrupted. With
``--json`` the error is one JSON object on stderr instead of the line (same exit code):
``{"error": "UsageError", "message": "...", "exit_code": 2}``, plus ``"error_code"`` when the
JMS exception has one. Each subcommand lives in its own module with ``register(subparsers)``; the
module is imported only when its command runs, so ``amqp-jms --help`` stays fast and a command
whose component is missing fails alone.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import traceback
from collections.abc import Sequence

from .. import __version__
from ..exceptions import JMSException, JMSRuntimeException
from ._common import EXIT_UNMET, CommandFailed, ExpectationUnmet, Output, UsageError, add_common

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: dict[str, tuple[str, str]] = {
    "broker": ("broker", "start the embedded AMQP 1.0 broker"),
    "send": ("messaging", "send messages (text from arguments, stdin or files)"),
    "receive": ("messaging", "receive messages, optionally with a selector or durable subscription"),
    "browse": ("messaging", "look at the messages on a queue without consuming them"),
    "worker": ("worker", "run a handler in a listener container (concurrency, transactions, redelivery)"),
    "bench": ("bench", "measure send/receive throughput against any broker URL"),
    "mq": ("mq", "IBM MQ dump files <-> an AMQP destination (import/export)"),
    "pipeline": ("pipeline", "the Spark streaming ingest: a JMS destination into Parquet"),
    "demo": ("demo", "the end-to-end job: broker, MQ bridge, producers, Spark pipeline, report"),
    "queues": ("manage", "list a running broker's queues with depth and consumers"),
    "purge": ("manage", "remove every message waiting on a queue"),
    "move": ("manage", "move messages between queues (e.g. from the DLQ back), with a selector"),
    "delete": ("manage", "delete a queue"),
    "connections": ("manage", "list the connections open to a running broker"),
    "consumers": ("manage", "list who consumes a running broker's queues (user, selector, credit)"),
    "subscriptions": ("manage", "list durable subscriptions, or remove one"),
}
"""Subcommand name -> (module in ``amqp_jms.cli``, one-line help)."""


class _ArgumentError(Exception):
    """argparse's complaint, raised instead of printed so that ``main`` reports it in the one
    format the command line was asked for (text, or JSON under ``--json``)."""

    def __init__(self, prog: str, usage: str, message: str) -> None:
        super().__init__(message)
        self.prog, self.usage = prog, usage


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ArgumentError(self.prog, self.format_usage(), message)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; ``only`` builds just one subcommand (imports only that module)."""
    parser = _Parser(
        prog="amqp-jms",
        description="JMS 2.0 messaging on AMQP 1.0: an embedded broker, clients, MQ bridging and "
        "a Spark pipeline, from the command line.",
        epilog="Exit codes: 0 ok, 1 JMS error, 2 usage error, 3 less than --expect asked for. "
        "Run `amqp-jms <command> --help`.",
    )
    parser.add_argument("--version", action="version", version=f"amqp-jms {__version__}")
    add_common(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="<command>", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text)
            continue
        mod = importlib.import_module(f"{__package__}.{module}")
        mod.register(sub, name, help_text)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    for a in argv:
        if a in COMMANDS:
            return a
        if not a.startswith("-"):
            return None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = _command_of(args_list)
    parser = build_parser(only=command) if command else build_parser(only="")
    # before the parse: an argparse error must come out as JSON too ("--" ends the options)
    json_errors = "--json" in args_list[: args_list.index("--") if "--" in args_list else None]
    try:
        args, extras = parser.parse_known_args(args_list)
        # argparse stops filling a nargs="*" positional at the first option; commands that take a
        # list of words (send's bodies) name it in `intermixed` and get the later ones too
        target = getattr(args, "intermixed", None)
        if extras and target and not any(e.startswith("-") and e != "-" for e in extras):
            setattr(args, target, [*getattr(args, target), *extras])
        elif extras:
            parser.error(f"unrecognized arguments: {' '.join(extras)}")
    except _ArgumentError as e:
        if json_errors:
            _json_error("UsageError", str(e), 2)
        else:
            sys.stderr.write(f"{e.usage}{e.prog}: error: {e}\n")
        return 2
    except SystemExit as e:  # --help, --version
        return int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 2)
    if not getattr(args, "command", None) or not hasattr(args, "func"):
        if json_errors:
            _json_error("UsageError", "no command given (amqp-jms --help lists them)", 2)
        else:
            parser.print_help(sys.stderr)
        return 2
    out = Output(json=bool(args.json))
    try:
        return int(args.func(args, out) or 0)
    except UsageError as e:
        return _report(args, e, 2, f"{parser.prog} {args.command}: error: {e}")
    except ExpectationUnmet as e:
        return _report(args, e, EXIT_UNMET, f"{parser.prog} {args.command}: {e}")
    except CommandFailed as e:
        return _report(args, e, 1, f"{parser.prog} {args.command}: failed: {e}")
    except (JMSException, JMSRuntimeException) as e:
        return _report(args, e, 1, f"error: {_describe(e)}")
    except KeyboardInterrupt as e:
        return _report(args, e, 130, "interrupted")
    except (OSError, ValueError) as e:
        return _report(args, e, 1, f"error: {type(e).__name__}: {e}")
    except Exception as e:
        if type(e).__module__.split(".")[0] in ("pyspark", "py4j"):
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            return _report(args, e, 1, f"error: Spark: {first}", message=first)
        # a bug: still one line unless --debug
        return _report(
            args, e, 1, f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)"
        )


def _describe(e: BaseException) -> str:
    name = type(e).__name__
    text = str(e).strip().replace("\n", " ") or name
    code = getattr(e, "error_code", None)
    if code and str(code) not in text:
        text = f"{text} [{code}]"
    return f"{name}: {text}"


def _report(
    args: argparse.Namespace, e: BaseException, code: int, line: str, message: str | None = None
) -> int:
    """Say why the command failed (the ``line``, or a JSON object under ``--json``); ``code``."""
    if getattr(args, "debug", False):
        traceback.print_exc(file=sys.stderr)
    if getattr(args, "json", False):
        text = message if message is not None else (str(e).strip().replace("\n", " ") or type(e).__name__)
        _json_error(type(e).__name__, text, code, getattr(e, "error_code", None))
    else:
        print(line, file=sys.stderr)
    return code


def _json_error(kind: str, message: str, code: int, error_code: object = None) -> None:
    """The error as one JSON object on one line of stderr (stdout keeps only results)."""
    record: dict[str, object] = {"error": kind, "message": message, "exit_code": code}
    if error_code:
        record["error_code"] = str(error_code)
    print(json.dumps(record, ensure_ascii=False), file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
