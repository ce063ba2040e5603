"""``amqp-jms send``, ``receive`` and ``browse``: the JMS client from the shell."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.markup import escape

from ..destination import Topic
from ..mapping.dead_letter import CAUSE_PROPERTY, DEAD_LETTER_PROPERTIES, ORIG_QUEUE_PROPERTY, TIME_PROPERTY
from ._client import BODY_TYPES, build_message, connect, describe_message
from ._common import (
    EXIT_UNMET,
    ExpectationUnmet,
    Output,
    UsageError,
    add_common,
    add_url,
    parse_destination_arg,
    parse_property,
    to_jsonable,
)

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``send``, ``receive`` or ``browse`` subparser."""
    {"send": _register_send, "receive": _register_receive, "browse": _register_browse}[name](
        sub, name, help_text
    )


# -- send ----------------------------------------------------------------------------------------


def _register_send(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="Send messages to a queue or topic. Bodies come from the TEXT arguments, from "
        "--file (one message per file), or else from stdin (one message per line).",
        epilog="examples:\n  amqp-jms send orders 'hello' --property region=EU --property total=12.5:double\n"
        "  seq 100 | amqp-jms send queue://numbers\n"
        '  amqp-jms send topic://prices --type map \'{"sku": "A1", "price": 9.5}\' --count 10 --rate 5',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    add_url(p)
    p.add_argument("destination", help="queue://NAME, topic://NAME, or a plain NAME (a queue)")
    p.add_argument("text", nargs="*", help="message bodies (one message each)")
    p.add_argument(
        "--file", "-f", action="append", default=[], type=Path, help="a file whose content is one body"
    )
    p.add_argument("--type", "-t", choices=BODY_TYPES, default="text", help="JMS message type (default text)")
    p.add_argument(
        "--property",
        "-p",
        action="append",
        default=[],
        metavar="NAME=VALUE[:TYPE]",
        help="a typed property; TYPE is string (default), boolean, byte, short, int, long, float, "
        "double or char; repeat for more",
    )
    p.add_argument("--jms-type", help="the JMSType header")
    p.add_argument("--correlation-id", help="the JMSCorrelationID header")
    p.add_argument("--reply-to", help="the JMSReplyTo destination")
    p.add_argument("--priority", type=int, choices=range(10), metavar="0-9", help="JMSPriority")
    p.add_argument("--ttl", type=int, default=0, metavar="MS", help="time to live in milliseconds")
    p.add_argument("--delivery-delay", type=int, default=0, metavar="MS", help="delivery delay in ms")
    p.add_argument("--non-persistent", action="store_true", help="send NON_PERSISTENT (default PERSISTENT)")
    p.add_argument("--count", "-n", type=int, default=1, help="send each body this many times (default 1)")
    p.add_argument("--rate", type=float, default=0.0, metavar="MSG/S", help="limit the send rate")
    p.set_defaults(func=run_send, intermixed="text")


def _bodies(args: argparse.Namespace) -> list[str | bytes | None]:
    bodies: list[str | bytes | None] = list(args.text)
    for f in args.file:
        data = Path(f).read_bytes()
        bodies.append(data if args.type == "bytes" else data.decode())
    if not bodies:
        if args.type == "message":
            bodies = [None]
        elif sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no message body: give TEXT arguments, --file, or pipe lines on stdin")
        else:
            bodies = [line.rstrip("\n") for line in sys.stdin]
            if not bodies:
                raise UsageError("stdin was empty: nothing to send")
    return bodies


def run_send(args: argparse.Namespace, out: Output) -> int:
    dest = parse_destination_arg(args.destination)
    props = [parse_property(s) for s in args.property]
    if args.count < 1:
        raise UsageError("--count must be at least 1")
    if args.rate < 0:
        raise UsageError("--rate must not be negative")
    bodies = _bodies(args)
    total = len(bodies) * args.count
    ids: list[str | None] = []
    started = time.monotonic()
    with connect(args.url) as conn:
        session = conn.create_session()
        producer = session.create_producer(dest)
        if args.non_persistent:
            producer.set_delivery_mode(1)
        if args.priority is not None:
            producer.set_priority(args.priority)
        if args.ttl:
            producer.set_time_to_live(args.ttl)
        if args.delivery_delay:
            producer.set_delivery_delay(args.delivery_delay)
        reply_to = parse_destination_arg(args.reply_to) if args.reply_to else None
        with out.progress(f"sending to {dest}", total) as bar:
            n = 0
            for _ in range(args.count):
                for body in bodies:
                    msg = build_message(session, args.type, body)
                    for k, v in props:
                        msg.set_object_property(k, v)
                    if args.jms_type:
                        msg.set_jms_type(args.jms_type)
                    if args.correlation_id:
                        msg.set_jms_correlation_id(args.correlation_id)
                    if reply_to is not None:
                        msg.set_jms_reply_to(reply_to)
                    producer.send(msg)
                    n += 1
                    if len(ids) < 100:
                        ids.append(msg.get_jms_message_id())
                    bar.advance()
                    if args.rate:
                        delay = started + n / args.rate - time.monotonic()
                        if delay > 0:
                            time.sleep(delay)
    seconds = time.monotonic() - started
    rate = total / seconds if seconds > 0 else 0.0
    out.emit(
        {
            "sent": total,
            "destination": str(dest),
            "seconds": round(seconds, 3),
            "rate": round(rate, 1),
            "message_ids": ids,
        }
    )
    out.info(
        f"sent {total} message{'s' if total != 1 else ''} to {dest} in {seconds:.2f} s ({rate:,.0f} msg/s)"
    )
    return 0


# -- receive -------------------------------------------------------------------------------------


def _register_receive(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="Receive messages and print them (the body as text, or JSON lines with --json). "
        "Stops after --count messages, or when none arrived for --timeout seconds. An empty queue "
        f"is not an error (exit 0, nothing printed) unless --expect says so (exit {EXIT_UNMET}).",
        epilog="examples:\n  amqp-jms receive orders --count 10\n"
        "  amqp-jms receive orders --expect 1 --timeout 2 || echo 'nothing there'\n"
        "  amqp-jms receive orders --selector \"region = 'EU' AND total > 100\" --json\n"
        "  amqp-jms receive topic://prices --durable prices-sub --client-id app1",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(p)
    add_url(p)
    p.add_argument("destination", help="queue://NAME, topic://NAME, or a plain NAME (a queue)")
    p.add_argument("--selector", "-s", help="a JMS message selector")
    p.add_argument(
        "--count", "-n", type=int, default=0, help="stop after this many messages (default: no limit)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="stop when no message arrived for this long (default 5; 0 = wait forever)",
    )
    p.add_argument(
        "--expect",
        type=int,
        default=0,
        metavar="N",
        help=f"exit {EXIT_UNMET} unless at least N messages arrived (an empty queue then fails); "
        "without --count, stop after N",
    )
    p.add_argument("--durable", metavar="NAME", help="receive through the durable subscription NAME (topics)")
    p.add_argument("--client-id", help="the JMS client ID (scopes durable subscriptions)")
    p.add_argument(
        "--unsubscribe", action="store_true", help="with --durable: remove the subscription at the end"
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text prints bodies, json prints one JSON object per message (same as --json)",
    )
    p.set_defaults(func=run_receive)


def _body_text(body: Any) -> str:
    """The body as one printable text: strings as is, bytes as UTF-8 (else hex), the rest as JSON."""
    if body is None:
        return ""
    if isinstance(body, str):
        return body
    if isinstance(body, bytes | bytearray):
        try:
            return bytes(body).decode()
        except UnicodeDecodeError:
            return bytes(body).hex()
    return json.dumps(to_jsonable(body), ensure_ascii=False)


def _print_message(out: Output, fmt: str, msg: Any) -> None:
    record = describe_message(msg)
    if out.json or fmt == "json":
        out.json_line(record)
    else:
        out.line(_body_text(record["body"]))


def run_receive(args: argparse.Namespace, out: Output) -> int:
    dest = parse_destination_arg(args.destination)
    if args.count < 0 or args.timeout < 0 or args.expect < 0:
        raise UsageError("--count, --timeout and --expect must not be negative")
    if args.expect and args.count and args.count < args.expect:
        raise UsageError(f"--count {args.count} can never reach --expect {args.expect}")
    if args.expect and not args.count:
        args.count = args.expect
    if args.durable and not isinstance(dest, Topic):
        raise UsageError("--durable needs a topic destination (topic://NAME)")
    received = 0
    with connect(args.url, client_id=args.client_id) as conn:
        session = conn.create_session()
        if args.durable:
            consumer = session.create_durable_consumer(dest, args.durable, args.selector, False)
        else:
            consumer = session.create_consumer(dest, args.selector)
        timeout_ms = int(args.timeout * 1000)
        with out.progress(f"receiving from {dest}", args.count or None) as bar:
            while not args.count or received < args.count:
                msg = consumer.receive(timeout_ms) if timeout_ms else consumer.receive()
                if msg is None:
                    break
                received += 1
                _print_message(out, args.format, msg)
                bar.advance()
        consumer.close()
        if args.durable and args.unsubscribe:
            session.unsubscribe(args.durable)
    if not out.json:
        out.err.print(f"received {received} message{'s' if received != 1 else ''} from {dest}")
    if received < args.expect:
        raise ExpectationUnmet(
            f"expected {args.expect} message{'s' if args.expect != 1 else ''} from {dest}, "
            f"received {received} within --timeout {args.timeout:g} s"
        )
    return 0


# -- browse --------------------------------------------------------------------------------------


def _register_browse(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description="List the messages waiting on a queue without consuming them.",
    )
    add_common(p)
    add_url(p)
    p.add_argument("queue", help="queue://NAME or a plain NAME")
    p.add_argument("--selector", "-s", help="a JMS message selector")
    p.add_argument("--count", "-n", type=int, default=0, help="show at most this many (default: all)")
    p.add_argument("--bodies", action="store_true", help="also show the bodies in the table")
    p.set_defaults(func=run_browse)


def _browse(browser: Any) -> Iterator[Any]:
    enum = browser.get_enumeration()
    yield from enum


def _dead_letter_cause(props: dict[str, Any]) -> str:
    """Why a dead letter is one (the broker's ``dlqDeliveryFailureCause``), from which queue and
    when, as one cell; ``""`` for a message that was never dead-lettered."""
    cause = props.get(CAUSE_PROPERTY)
    if cause is None:
        return ""
    text = str(cause)
    origin = props.get(ORIG_QUEUE_PROPERTY)
    if origin is not None:
        text += f" (from {origin}"
        when = props.get(TIME_PROPERTY)
        if isinstance(when, int):
            stamp = datetime.fromtimestamp(when / 1000, tz=UTC).isoformat(timespec="seconds")
            text += f" at {stamp}"
        text += ")"
    return text


def run_browse(args: argparse.Namespace, out: Output) -> int:
    dest = parse_destination_arg(args.queue)
    if isinstance(dest, Topic):
        raise UsageError("browse works on queues, not topics")
    rows: list[list[Any]] = []
    causes: list[str] = []
    with connect(args.url) as conn:
        session = conn.create_session()
        browser = session.create_browser(dest, args.selector)
        try:
            for msg in _browse(browser):
                record = describe_message(msg)
                out.emit(record)
                props = record["properties"]
                causes.append(_dead_letter_cause(props))
                row = [
                    len(rows) + 1,
                    record["message_id"],
                    record["type"],
                    record["priority"],
                    record["jms_type"] or "",
                    ", ".join(
                        f"{k}={to_jsonable(v)}" for k, v in props.items() if k not in DEAD_LETTER_PROPERTIES
                    ),
                ]
                if args.bodies:
                    row.append(str(record["body"])[:60])
                rows.append(row)
                if args.count and len(rows) >= args.count:
                    break
        finally:
            browser.close()
    cols = ["#", "JMSMessageID", "type", "priority", "JMSType", "properties"] + (
        ["body"] if args.bodies else []
    )
    if any(causes):  # dead letters: why each one is here (the DLQ, or a queue they were moved to)
        cols.append("dead-lettered")
        for row, cause in zip(rows, causes):
            row.append(escape(cause))  # the consumer's words: "[...]" is text, not table markup
    if not out.json:
        out.table(f"{dest}: {len(rows)} message{'s' if len(rows) != 1 else ''}", cols, rows)
    return 0
