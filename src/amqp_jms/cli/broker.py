"""``amqp-jms broker``: the embedded broker's own command line, mounted under ``amqp-jms``.

The broker package owns its options and serving loop (``amqp_jms.broker.operations.cli``); this module only
borrows its parser for ``--help`` and hands it the arguments, so the two never drift apart.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import Output, add_common

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
    from ..broker import main

    argv = [a for a in args.argv_after_command if a not in ("--json", "--debug")]
    return int(main(argv) or 0)
