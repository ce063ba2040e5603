"""``amqp-jms worker``: run a handler in a listener container (``amqp_jms.container``).

    amqp-jms worker myapp.orders:handle --destination queue://orders --concurrency 8 --transacted

The handler is ``package.module:callable`` (an ``async def`` runs in the asyncio container); the
current directory is importable, as with uvicorn or gunicorn. On a terminal a live status line
shows rate, in flight, failures, dead letters and backlog; otherwise a plain line every
``--status-interval`` seconds. SIGTERM or Ctrl-C stops gracefully: no more messages are taken,
handlers in flight finish and settle (or commit), then the connection closes; exit code 0.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import os
import signal
import sys
import threading
import time
from typing import Any

from rich.markup import escape
from rich.text import Text

from ._common import Output, UsageError, add_common, add_url

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name, help=help_text,
        description="Consume a destination with a Python handler, the way a Spring "
        "@JmsListener service does: concurrency, a transaction per message or per batch, "
        "redelivery with back-off and a dead-letter limit, reconnects, graceful stop on SIGTERM.",
        epilog="examples:\n"
        "  amqp-jms worker myapp.orders:handle --destination queue://orders --concurrency 8\n"
        "  amqp-jms worker myapp:handle -d topic://prices --subscription px --shared --durable "
        "--concurrency 1-4 --transacted --batch-size 50\n"
        "  amqp-jms worker myapp:handle --jndi jndi.properties --factory orders -d ordersQueue",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    add_url(p)
    p.add_argument("handler", help="package.module:callable (def or async def, called with each message)")
    p.add_argument("--destination", "-d", required=True,
                   help="queue://NAME, topic://NAME, a plain NAME (a queue), or a name bound in --jndi")
    p.add_argument("--selector", "-s", help="a JMS message selector")
    p.add_argument("--subscription", help="subscription name (topics): with --shared and/or --durable")
    p.add_argument("--durable", action="store_true", help="a durable subscription")
    p.add_argument("--shared", action="store_true", help="a shared subscription (several workers)")
    p.add_argument("--concurrency", "-c", default="1",
                   help="workers: N, or MIN-MAX to scale with the backlog")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--transacted", action="store_true", help="a local transaction per message (or batch)")
    mode.add_argument("--client-ack", action="store_true",
                      help="the handler acknowledges (message.acknowledge()); default: after it returns")
    p.add_argument("--batch-size", type=int, default=1, help="with --transacted: messages per transaction")
    p.add_argument("--max-deliveries", type=int, default=5,
                   help="failed deliveries before the dead-letter path (0: never; default 5)")
    p.add_argument("--backoff", default="0.5,2,10", metavar="INITIAL,MULTIPLIER,MAX",
                   help="seconds a failed message waits before it is given back (default 0.5,2,10)")
    p.add_argument("--dead-letter-outcome", default="MODIFIED_FAILED_UNDELIVERABLE",
                   choices=["MODIFIED_FAILED_UNDELIVERABLE", "REJECTED"],
                   help="how a dead letter is settled (default modified undeliverable-here)")
    p.add_argument("--shutdown-timeout", type=float, default=30.0,
                   help="seconds in-flight handlers may take when stopping (default 30)")
    p.add_argument("--status-interval", type=float, default=10.0,
                   help="seconds between status lines when not on a terminal (0: none)")
    p.add_argument("--jndi", help="a jndi.properties or .toml file (Qpid JMS's format)")
    p.add_argument("--factory", help="the connection factory's name in --jndi (default: the only one)")
    p.set_defaults(func=run)


def _load_handler(spec: str) -> Any:
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise UsageError(f"handler {spec!r}: expected package.module:callable")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as e:
        raise UsageError(f"cannot import {module!r}: {e}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"{module!r} has no {attr!r}") from None
    if not callable(obj):
        raise UsageError(f"{spec} is not callable")
    return obj


def _backoff(text: str) -> Any:
    from ..container import Backoff

    try:
        parts = [float(x) for x in text.split(",")]
        return Backoff(*parts)
    except (TypeError, ValueError) as e:
        raise UsageError(f"--backoff {text!r}: expected INITIAL[,MULTIPLIER[,MAX]] seconds ({e})") from None


def _factory_and_destination(args: argparse.Namespace) -> tuple[Any, Any]:
    if not args.jndi:
        return args.url, args.destination
    from ..jndi import InitialContext

    ctx = InitialContext(args.jndi)
    name = args.factory
    if name is None:
        from ..client.factory import ConnectionFactory

        found = [n for n in ctx.names() if isinstance(ctx.lookup(n), ConnectionFactory)]
        if len(found) != 1:
            raise UsageError(f"--jndi {args.jndi} binds {len(found)} connection factories "
                             f"({', '.join(found)}): name one with --factory")
        name = found[0]
    factory = ctx.lookup(name)
    dest = args.destination
    if "://" not in dest and dest in ctx.names():
        dest = ctx.lookup_destination(dest)
    return factory, dest


def _options(args: argparse.Namespace) -> dict[str, Any]:
    if args.batch_size > 1 and not args.transacted:
        raise UsageError("--batch-size needs --transacted (a batch is one transaction)")
    opts: dict[str, Any] = {
        "selector": args.selector, "subscription": args.subscription, "durable": args.durable,
        "shared": args.shared, "concurrency": args.concurrency,
        "mode": "transacted" if args.transacted else "client" if args.client_ack else "auto",
        "batch_size": args.batch_size, "max_deliveries": args.max_deliveries,
        "backoff": _backoff(args.backoff), "dead_letter_outcome": args.dead_letter_outcome,
        "shutdown_timeout_s": args.shutdown_timeout,
    }
    return opts


def status_text(s: Any, health: Any) -> str:
    """One status line: what an operator watches."""
    return (f"{health.state:<12} workers {s.workers:>3}  rate {s.rate:8.1f}/s  in flight {s.in_flight:>3}  "
            f"done {s.succeeded:>8}  failed {s.failed:>5}  dead {s.dead_lettered:>4}  backlog {s.backlog:>5}"
            + (f"  reconnects {s.reconnects}" if s.reconnects else "")
            + (f"  ({health.detail})" if health.detail and health.state != "running" else ""))


def run(args: argparse.Namespace, out: Output) -> int:
    handler = _load_handler(args.handler)
    factory, destination = _factory_and_destination(args)
    try:
        opts = _options(args)
        if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(type(handler).__call__):
            return asyncio.run(_run_async(factory, handler, destination, opts, args, out))
        return _run_sync(factory, handler, destination, opts, args, out)
    except ValueError as e:
        raise UsageError(str(e)) from None


class _Status:
    """The live line on a terminal (rich), plain lines every ``interval`` seconds otherwise."""

    def __init__(self, out: Output, interval: float) -> None:
        self.err = out.err
        self.live: Any = None
        self.interval = interval
        self.last = time.monotonic()
        if self.err.is_terminal and not out.quiet:
            from rich.live import Live

            self.live = Live("", console=self.err, refresh_per_second=4, transient=False)
            self.live.start()

    def show(self, text: str, final: bool = False) -> None:
        if self.live is not None:
            self.live.update(Text(text))  # plain text: a '[Errno 111]' in the detail is not markup
            if final:
                self.live.stop()
            return
        now = time.monotonic()
        if final or (self.interval > 0 and now - self.last >= self.interval):
            self.last = now
            print(text, file=sys.stderr, flush=True)


def _run_sync(factory: Any, handler: Any, destination: Any, opts: dict[str, Any],
              args: argparse.Namespace, out: Output) -> int:
    from ..container import ListenerContainer

    c = ListenerContainer(factory, handler, destination, **opts)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    status = _Status(out, args.status_interval)
    out.info(escape(f"worker: {args.handler} on {c.policy.describes}, concurrency {opts['concurrency']}, "
                    f"mode {opts['mode']} (SIGTERM or Ctrl-C stops gracefully)"))
    c.start()
    while not stop.wait(0.25):
        status.show(status_text(c.stats(), c.health()))
    status.show(status_text(c.stats(), c.health()) + "  stopping...")
    clean = c.stop()
    status.show(status_text(c.stats(), c.health()), final=True)
    return 0 if clean else 1


async def _run_async(factory: Any, handler: Any, destination: Any, opts: dict[str, Any],
                     args: argparse.Namespace, out: Output) -> int:
    from ..container import AsyncListenerContainer

    c = AsyncListenerContainer(factory, handler, destination, **opts)
    status = _Status(out, args.status_interval)
    out.info(escape(f"worker: {args.handler} (async) on {c.policy.describes}, concurrency "
                    f"{opts['concurrency']}, mode {opts['mode']} (SIGTERM or Ctrl-C stops gracefully)"))
    task = asyncio.create_task(c.run())
    while not task.done():
        await asyncio.wait([task], timeout=0.25)
        status.show(status_text(c.stats(), c.health()))
    await task
    status.show(status_text(c.stats(), c.health()), final=True)
    return 0

