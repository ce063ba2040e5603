"""``amqp-jms broker``: the embedded broker's own command line, mounted under ``amqp-jms``.

The broker package owns its options and serving loop (``amqp_jms.broker.operations.cli``); this module only
borrows its parser (so the two never drift apart) and runs it with the parsed arguments.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import Output, UsageError, add_common

__all__ = ["register", "run"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``broker`` subparser, with the broker package's own options."""
    from ..broker.operations.cli import build_parser

    p = sub.add_parser(
        name,
        help=help_text,
        parents=[build_parser()],
        add_help=False,
        description="Start the embedded AMQP 1.0 broker (queues, topics, selectors, durable and shared "
        "subscriptions, transactions, a durable store). Logs one line per connection; SIGTERM or "
        "Ctrl-C stops it cleanly.",
        epilog="example:\n  amqp-jms broker --port 5672 --data-dir ./broker-data",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: Output) -> int:
    """Serve with the options parsed here (the broker's own, borrowed above); a broker that
    cannot start is a usage error (exit 2), reported as text or, under ``--json``, as JSON."""
    from ..broker.operations.cli import StartError
    from ..broker.operations.cli import run as serve

    try:
        return serve(args)
    except StartError as e:
        raise UsageError(str(e)) from None
