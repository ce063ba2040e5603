"""``amqp-jms mq import`` / ``mq export``: IBM MQ ``dmpmqmsg`` dump files <-> an AMQP destination.

Import reads each MQ message (MQMD + MQRFH2 + body) from the dump, turns it into the JMS message
IBM's own JMS client would see (``amqp_jms.mq.from_mq``) and sends it with the JMS API, so it goes
on the wire through the AMQP JMS mapping. Export receives (or browses) JMS messages and writes
what an MQPUT from IBM's JMS client would have produced (``amqp_jms.mq.to_mq``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ..destination import Topic
from ._client import connect
from ._common import Output, UsageError, add_common, add_url, parse_destination_arg

__all__ = ["export_dump", "import_dump", "register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add ``mq`` with its ``import`` and ``export`` subcommands."""
    p = sub.add_parser(
        name,
        help=help_text,
        description="Bridge IBM MQ queue dumps (the text format of IBM's dmpmqmsg utility) and AMQP "
        "destinations, converting MQMD/MQRFH2 <-> JMS <-> AMQP as IBM's JMS client and the "
        "AMQP JMS mapping define.",
    )
    add_common(p)
    mq_sub = p.add_subparsers(dest="mq_command", metavar="<import|export>", required=True)

    imp = mq_sub.add_parser("import", help="send every message of a dump file to a destination")
    add_common(imp)
    add_url(imp)
    imp.add_argument("file", type=Path, help="the dmpmqmsg dump file to read")
    imp.add_argument("destination", help="queue://NAME, topic://NAME or a plain NAME")
    imp.set_defaults(func=run_import)

    exp = mq_sub.add_parser("export", help="write the messages of a destination to a dump file")
    add_common(exp)
    add_url(exp)
    exp.add_argument("destination", help="queue://NAME or a plain NAME")
    exp.add_argument("file", type=Path, help="the dmpmqmsg dump file to write")
    exp.add_argument("--browse", action="store_true", help="copy without consuming (queues only)")
    exp.add_argument("--count", "-n", type=int, default=0, help="at most this many messages (default all)")
    exp.add_argument("--timeout", type=float, default=2.0, help="stop when idle this long (s, default 2)")
    exp.add_argument("--selector", "-s", help="only messages matching this JMS selector")
    exp.add_argument("--queue-manager", help="the ReplyToQMgr to write for reply-to queues")
    exp.add_argument(
        "--target-client",
        choices=("jms", "mq"),
        default="jms",
        help="jms writes an MQRFH2 with the JMS folders; mq writes plain MQ messages (default jms)",
    )
    exp.set_defaults(func=run_export)


def import_dump(url: str, file: Path, destination: str, out: Output | None = None) -> int:
    """Send every message of ``file`` to ``destination``; the number sent."""
    from ..mq import from_mq, load_dump

    dest = parse_destination_arg(destination)
    records = load_dump(file)
    out = out or Output(quiet=True)
    with connect(url) as conn:
        session = conn.create_session()
        producer = session.create_producer(dest)
        with out.progress(f"mq import → {dest}", len(records)) as bar:
            for md, data in records:
                producer.send(from_mq(md, data))
                bar.advance()
    return len(records)


def export_dump(
    url: str,
    destination: str,
    file: Path,
    *,
    browse: bool = False,
    count: int = 0,
    timeout: float = 2.0,
    selector: str | None = None,
    queue_manager: str | None = None,
    target_client: str = "jms",
    out: Output | None = None,
) -> int:
    """Write the messages of ``destination`` to ``file`` as a dump; the number written."""
    from ..mq import to_mq, write_dump

    dest = parse_destination_arg(destination)
    if browse and isinstance(dest, Topic):
        raise UsageError("--browse works on queues, not topics")
    out = out or Output(quiet=True)
    records: list[tuple[Any, bytes]] = []
    with connect(url) as conn:
        session = conn.create_session()
        with out.progress(f"mq export ← {dest}", count or None) as bar:
            if browse:
                browser = session.create_browser(dest, selector)
                try:
                    for msg in browser.get_enumeration():
                        mq = to_mq(msg, queue_manager=queue_manager, target_client=target_client)
                        records.append((mq.md, mq.data))
                        bar.advance()
                        if count and len(records) >= count:
                            break
                finally:
                    browser.close()
            else:
                consumer = session.create_consumer(dest, selector)
                while not count or len(records) < count:
                    msg = consumer.receive(int(timeout * 1000))
                    if msg is None:
                        break
                    mq = to_mq(msg, queue_manager=queue_manager, target_client=target_client)
                    records.append((mq.md, mq.data))
                    bar.advance()
                consumer.close()
    write_dump(
        records, file, header=f"exported by amqp-jms from {dest} at {time.strftime('%Y-%m-%d %H:%M:%S')}"
    )
    return len(records)


def run_import(args: argparse.Namespace, out: Output) -> int:
    if not args.file.is_file():
        raise UsageError(f"{args.file}: no such file")
    started = time.monotonic()
    n = import_dump(args.url, args.file, args.destination, out)
    secs = time.monotonic() - started
    out.emit(
        {"imported": n, "file": str(args.file), "destination": args.destination, "seconds": round(secs, 3)}
    )
    out.info(f"imported {n} MQ message{'s' if n != 1 else ''} from {args.file} into {args.destination}")
    return 0


def run_export(args: argparse.Namespace, out: Output) -> int:
    if args.count < 0 or args.timeout < 0:
        raise UsageError("--count and --timeout must not be negative")
    n = export_dump(
        args.url,
        args.destination,
        args.file,
        browse=args.browse,
        count=args.count,
        timeout=args.timeout,
        selector=args.selector,
        queue_manager=args.queue_manager,
        target_client=args.target_client,
        out=out,
    )
    out.emit({"exported": n, "file": str(args.file), "destination": args.destination})
    out.info(f"exported {n} message{'s' if n != 1 else ''} from {args.destination} to {args.file}")
    return 0
