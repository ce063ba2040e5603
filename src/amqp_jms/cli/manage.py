"""``amqp-jms queues | purge | move | delete | connections | consumers | subscriptions``: manage a
running broker.

Each verb is one or a few AMQP Management requests to the broker's ``$management`` node, carried
by the JMS client (``_management.py``); the broker authorizes each by its roles, and a refusal
exits 1 with the broker's reason. Numbers come from the broker's own queues at the moment asked.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..management import ManagementClient
from ._client import connect
from ._common import Output, UsageError, add_common, add_url

__all__ = ["register"]

_EPILOGS = {
    "queues": "examples:\n  amqp-jms queues\n  amqp-jms queues --all --json",
    "purge": "examples:\n  amqp-jms purge orders\n  amqp-jms purge DLQ --url amqp://admin:secret@broker:5672",
    "move": "examples:\n  amqp-jms move DLQ orders                       # every dead letter back\n"
    "  amqp-jms move DLQ orders --selector \"region = 'EU'\" --limit 100",
    "delete": "examples:\n  amqp-jms delete old.orders",
    "connections": "examples:\n  amqp-jms connections --json",
    "consumers": "examples:\n  amqp-jms consumers\n  amqp-jms consumers orders --json",
    "subscriptions": "examples:\n  amqp-jms subscriptions\n  amqp-jms subscriptions --remove app1:prices",
}
_DESCRIPTIONS = {
    "queues": "List the broker's queues with their depth and consumers (temporary queues with --all).",
    "purge": "Remove every message waiting on a queue (messages a consumer holds unsettled stay).",
    "move": "Move messages from one queue to another (e.g. from the DLQ back), optionally only those a "
    "JMS selector matches. Properties and bodies travel unchanged; the delivery count starts again.",
    "delete": "Delete a queue and its messages; its consumers are detached.",
    "connections": "List the connections open to the broker (needs manage on $management).",
    "consumers": "List who consumes (and browses) the broker's queues and topics: connection, user, "
    "container id, remote address, link, selector, credit and messages held unsettled (needs manage on "
    "the address read).",
    "subscriptions": "List durable subscriptions (shared non-durable ones too with --all), or remove one.",
}


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=_DESCRIPTIONS[name], epilog=_EPILOGS[name],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(p)
    add_url(p)
    p.add_argument("--timeout", type=float, default=30.0, metavar="S",
                   help="seconds to wait for each answer (default 30)")
    if name == "queues":
        p.add_argument("--all", action="store_true", help="include temporary queues")
    elif name in ("purge", "delete"):
        p.add_argument("queue", help="the queue's name")
    elif name == "move":
        p.add_argument("source", help="the queue to move messages from")
        p.add_argument("destination", help="the queue to move them to (it must exist)")
        p.add_argument("--selector", "-s", help="move only the messages this JMS selector matches")
        p.add_argument("--limit", "-n", type=int, help="move at most this many messages")
    elif name == "consumers":
        p.add_argument("queue", nargs="?", help="only the consumers of this queue, topic or subscription")
    elif name == "subscriptions":
        p.add_argument("--all", action="store_true", help="include shared non-durable subscriptions")
        p.add_argument("--remove", metavar="CLIENT_ID:NAME",
                       help="remove this subscription (':NAME' for a global shared one)")
    p.set_defaults(func=_RUN[name])


def _client(conn: Any, args: argparse.Namespace) -> ManagementClient:
    return ManagementClient(conn, timeout=args.timeout)


def _url(args: argparse.Namespace) -> str:
    """``--url`` with ``jms.sendTimeout`` = ``--timeout`` unless it sets one: a peer that gives
    the request no credit fails the verb in time instead of leaving it waiting."""
    from ..provider.failover.uri import with_client_options

    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    timeout = ("jms.sendTimeout", str(int(args.timeout * 1000)))
    return with_client_options(str(args.url), [timeout], keep_existing=True)


_QUEUE_COLUMNS = [("name", "queue"), ("messageCount", "messages"), ("consumerCount", "consumers"),
                  ("deliveringCount", "delivering"), ("scheduledCount", "scheduled"), ("pagedCount", "paged"),
                  ("bytes", "bytes"), ("durable", "durable")]


def run_queues(args: argparse.Namespace, out: Output) -> int:
    with connect(_url(args)) as conn, _client(conn, args) as mc:
        rows = mc.query("queue", [k for k, _ in _QUEUE_COLUMNS] + ["kind"])
    rows = [r for r in rows if args.all or r.get("kind") == "queue"]
    _show(out, "queues", rows, _QUEUE_COLUMNS)
    return 0


def run_connections(args: argparse.Namespace, out: Output) -> int:
    cols = [("identity", "id"), ("remoteAddress", "from"), ("user", "user"), ("containerId", "container"),
            ("sessionCount", "sessions"), ("linkCount", "links")]
    with connect(_url(args)) as conn, _client(conn, args) as mc:
        rows = mc.query("connection", [k for k, _ in cols])
    _show(out, "connections", rows, cols)
    return 0


_CONSUMER_COLUMNS = [("address", "address"), ("queue", "queue"), ("connectionId", "connection"),
                     ("user", "user"), ("containerId", "container"), ("remoteAddress", "from"),
                     ("name", "link"), ("selector", "selector"), ("credit", "credit"),
                     ("deliveringCount", "delivering"), ("browser", "browser")]


def run_consumers(args: argparse.Namespace, out: Output) -> int:
    with connect(_url(args)) as conn, _client(conn, args) as mc:
        rows = mc.query("consumer", [k for k, _ in _CONSUMER_COLUMNS] + ["subscription"])
        own = mc.reply_queue
    rows = [r for r in rows if r.get("queue") != own]  # not the CLI's own reply consumer
    if args.queue:
        rows = [r for r in rows if _names(args.queue) & _names(r.get("address"), r.get("queue"),
                                                               r.get("subscription"))]
    _show(out, "consumers", rows, _CONSUMER_COLUMNS)
    return 0


def _names(*values: Any) -> set[str]:
    """The names a queue answers to: as listed, and without a ``queue://``-style prefix."""
    return {n for v in values if v for n in (str(v), str(v).partition("://")[2]) if n}


def run_subscriptions(args: argparse.Namespace, out: Output) -> int:
    cols = [("identity", "subscription"), ("topic", "topic"), ("selector", "selector"),
            ("messageCount", "messages"), ("consumerCount", "consumers"), ("durable", "durable"),
            ("shared", "shared")]
    with connect(_url(args)) as conn, _client(conn, args) as mc:
        if args.remove:
            resp = mc.request("DELETE", "subscription", args.remove)
            dropped = resp.properties.get("count")
            out.info(f"removed subscription {args.remove} ({dropped} messages dropped)")
            out.emit({"removed": args.remove, "messages": dropped})
            return 0
        rows = mc.query("subscription", [k for k, _ in cols])
    rows = [r for r in rows if args.all or r.get("durable")]
    _show(out, "subscriptions", rows, cols)
    return 0


def run_purge(args: argparse.Namespace, out: Output) -> int:
    with connect(_url(args)) as conn, _client(conn, args) as mc:
        total = _repeat(lambda limit: mc.request("PURGE", "queue", args.queue, properties=limit), None)
    out.info(f"purged {total} messages from {args.queue}")
    out.emit({"queue": args.queue, "purged": total})
    return 0


def run_move(args: argparse.Namespace, out: Output) -> int:
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    if args.source == args.destination:
        raise UsageError("source and destination are the same queue")
    props: dict[str, Any] = {"destination": args.destination}
    if args.selector:
        props["selector"] = args.selector
    with connect(_url(args)) as conn, _client(conn, args) as mc:
        total = _repeat(lambda limit: mc.request("MOVE", "queue", args.source, properties={**props, **limit}),
                        args.limit)
    out.info(f"moved {total} messages from {args.source} to {args.destination}")
    out.emit({"from": args.source, "to": args.destination, "moved": total})
    return 0


def _repeat(send: Any, limit: int | None) -> int:
    """Ask again while the broker says it stopped at its per-request limit (``more``)."""
    total = 0
    while True:
        asked = {} if limit is None else {"limit": limit - total}
        body = send(asked).body or {}
        total += int(body.get("count", 0))
        if not body.get("more") or (limit is not None and total >= limit):
            return total


def run_delete(args: argparse.Namespace, out: Output) -> int:
    with connect(_url(args)) as conn, _client(conn, args) as mc:
        resp = mc.request("DELETE", "queue", args.queue)
    dropped = resp.properties.get("count")
    out.info(f"deleted queue {args.queue} ({dropped} messages dropped)")
    out.emit({"deleted": args.queue, "messages": dropped})
    return 0


def _show(out: Output, title: str, rows: list[dict[str, Any]], cols: list[tuple[str, str]]) -> None:
    if out.json:
        for r in rows:
            out.emit({label: r.get(key) for key, label in cols})
        return
    out.table(title, [label for _, label in cols],
              [["" if r.get(key) is None else r.get(key) for key, _ in cols] for r in rows])


_RUN = {
    "queues": run_queues,
    "purge": run_purge,
    "move": run_move,
    "delete": run_delete,
    "connections": run_connections,
    "consumers": run_consumers,
    "subscriptions": run_subscriptions,
}
