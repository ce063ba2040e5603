"""Request/reply with a temporary queue, across two processes.

Start a server, then send requests from another process::

    python examples/request_reply.py --url amqp://localhost:5672 serve --count 3
    python examples/request_reply.py --url amqp://localhost:5672 request alpha beta gamma

The server answers each request with its text upper-cased, sent to the request's
``JMSReplyTo`` (the requestor's temporary queue) with ``JMSCorrelationID`` = the request's
``JMSMessageID``. Without ``--url`` an embedded broker is started (both roles then run in
this one process, for a demo).
"""

from __future__ import annotations

import argparse
import sys
import threading

from amqp_jms import ConnectionFactory, Queue
from amqp_jms.client.requestor import QueueRequestor

SERVICE = Queue("example.upper")


def serve(url: str, count: int, ready: threading.Event | None = None) -> None:
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        session = conn.create_session()
        requests = session.create_consumer(SERVICE)
        replies = session.create_producer(None)  # anonymous: each reply names its destination
        if ready is not None:
            ready.set()
        for _ in range(count):
            request = requests.receive(30_000)
            if request is None:
                raise SystemExit("no request within 30 s")
            reply = session.create_text_message(str(request.get_body(str)).upper())
            reply.set_jms_correlation_id(request.get_jms_message_id())
            replies.send(request.get_jms_reply_to(), reply)


def request(url: str, texts: list[str]) -> list[str]:
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        requestor = QueueRequestor(conn.create_session(), SERVICE)
        with requestor:
            for text in texts:
                reply = requestor.request(requestor._session.create_text_message(text), 30_000)
                if reply is None:
                    raise SystemExit(f"no reply to {text!r} within 30 s")
                out.append(str(reply.get_body(str)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="broker URL (default: start an embedded broker)")
    sub = ap.add_subparsers(dest="role")
    s = sub.add_parser("serve")
    s.add_argument("--count", type=int, default=1)
    r = sub.add_parser("request")
    r.add_argument("texts", nargs="+")
    args = ap.parse_args(argv)
    if args.url is None:
        from amqp_jms.broker import Broker

        with Broker(port=0) as broker:
            ready = threading.Event()
            texts = args.texts if args.role == "request" else ["hello", "world"]
            t = threading.Thread(target=serve, args=(broker.url, len(texts), ready))
            t.start()
            ready.wait(10)
            print("\n".join(request(broker.url, texts)))
            t.join()
        return 0
    if args.role == "serve":
        serve(args.url, args.count)
    elif args.role == "request":
        print("\n".join(request(args.url, args.texts)))
    else:
        ap.error("choose serve or request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
