"""``amqp-jms broker``: run the broker in the foreground until SIGTERM/SIGINT.

The ``amqp-jms`` command calls :func:`main` with the arguments after ``broker``; it can also be
run as ``python -m amqp_jms.broker``. ``--config FILE`` reads the one configuration file
(:mod:`amqp_jms.broker.operations.config`); every other flag given overrides the file's value.
``--hash-password`` prints the stored form of a password for that file's ``[users]``.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import signal
import sys
from collections.abc import Sequence
from typing import Any

from ..._links import doc_url
from ..limits import AddressFullPolicy, BrokerLimits
from .config import BrokerConfig, ConfigError, load_config, with_overrides
from .metrics import QUEUE_LABELS

__all__ = ["add_limit_arguments", "build_parser", "limits_from_args", "main"]


def _prefixes(text: str) -> tuple[str, str]:
    from ..routing.prefixes import parse_address_prefixes

    try:
        return parse_address_prefixes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _listen(text: str) -> str:
    from .metrics_http import parse_listen

    try:
        parse_listen(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def build_parser(prog: str = "amqp-jms broker") -> argparse.ArgumentParser:
    # defaults are None so that a flag not given leaves the configuration file's value alone
    p = argparse.ArgumentParser(prog=prog, description="Run the embedded AMQP 1.0 JMS broker.")
    p.add_argument("--config", default=None,
                   help=f"broker configuration file (TOML; {doc_url('broker', 'configuration-file')}); "
                   "flags override it")
    p.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 5672; 0 = any free port)")
    p.add_argument("--data-dir", default=None,
                   help="directory for the durable store (default: memory only)")
    p.add_argument("--users", default=None,
                   help="users file, one 'user:password' per line (enables SCRAM and PLAIN auth)")
    p.add_argument("--ws-port", type=int, default=None,
                   help="also listen for AMQP over WebSocket (subprotocol amqp) on this port; TLS "
                   "(amqpwss) with --tls-cert; every limit of the TCP listener applies")
    p.add_argument("--ws-path", default=None, help="the path the WebSocket listener answers at (default /)")
    p.add_argument("--require-client-certificate", action="store_const", const=True, default=None,
                   help="every TLS client must present a certificate --tls-ca verifies (mutual TLS)")
    p.add_argument("--tls-cert", default=None, help="PEM certificate chain (enables TLS, with --tls-key)")
    p.add_argument("--tls-key", default=None, help="PEM private key")
    p.add_argument("--tls-ca", default=None,
                   help="PEM CA file: client certificates it signed may log in with SASL EXTERNAL")
    p.add_argument("--dlq", default=None, help="dead-letter queue name (default DLQ)")
    p.add_argument("--max-delivery-attempts", type=int, default=None,
                   help="dead-letter a message after this many failed deliveries (default 0 = never)")
    p.add_argument("--address-prefixes", default=None, type=_prefixes, metavar="QUEUE,TOPIC",
                   help="prefix mode, as ActiveMQ/Artemis: advertise these address prefixes "
                        "(e.g. queue://,topic://) and decide node types by them (default: off)")
    p.add_argument("--idle-timeout", type=float, default=None,
                   help="close connections silent this long, seconds (default 60; 0 = never)")
    p.add_argument("--metrics-token", default=None, metavar="TOKEN",
                   help="make /metrics ask for this token (Authorization: Bearer TOKEN, or Basic auth "
                        "with it as the password); [listener] metrics_token in a config file")
    p.add_argument("--metrics-queue-labels", default=None, choices=QUEUE_LABELS,
                   help="how /metrics names queues and topics: names (default, as Artemis), hashed "
                        "(a stable digest per name), none (one sum per family, as RabbitMQ's /metrics); "
                        "[listener] metrics_queue_labels in a config file")
    p.add_argument("--metrics", default=None, type=_listen, metavar="HOST:PORT",
                   help="serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464; "
                   "port 0 = any free port; default: off)")
    p.add_argument("--console", action="store_true", default=None,
                   help="serve the web console (on the --metrics listener; without it on "
                   "http://127.0.0.1:8161/), HTTPS when --tls-cert is given; sign in with the broker's users")
    p.add_argument("--console-allow-anonymous-actions", action="store_true", default=None,
                   help="a broker without users: let the console move, purge and delete (default: read-only)")
    p.add_argument("--hash-password", action="store_true",
                   help="read a password (prompt, or one line of stdin) and print its hash for the "
                   "configuration file's [users.<name>] password, then exit")
    p.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    add_limit_arguments(p)
    return p


def add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """Flags for the main :class:`~amqp_jms.broker.limits.BrokerLimits` (each overrides the
    config file's ``[limits]``; unset = the default)."""
    g = p.add_argument_group(f"limits (every limit and its default: {doc_url('broker', 'limits')})")
    g.add_argument("--max-message-size", type=int, default=None, help="bytes (default 100 MiB)")
    g.add_argument("--max-frame-size", type=int, default=None, help="bytes (default 65536)")
    g.add_argument("--handshake-timeout", type=float, default=None,
                   help="seconds to finish SASL and Open (default 10; 0 = never)")
    g.add_argument("--max-connections", type=int, default=None, help="total (default 4096; 0 = no limit)")
    g.add_argument("--max-connections-per-user", type=int, default=None, help="(default 1024; 0 = no limit)")
    g.add_argument("--queue-memory-limit", type=int, default=None,
                   help="bytes a queue holds in memory before its address-full policy applies (32 MiB)")
    g.add_argument("--address-full-policy", choices=["PAGE", "BLOCK", "FAIL"], default=None,
                   help="what a full queue does (default PAGE)")
    g.add_argument("--max-memory", type=int, default=None,
                   help="message bytes in memory, all queues, before producers wait (default 512 MiB)")
    g.add_argument("--large-message-threshold", type=int, default=None,
                   help="messages this big stream to a file (default 1 MiB)")
    g.add_argument("--no-persist-delivery-count", dest="persist_delivery_count", action="store_const",
                   const=False, default=None,
                   help="do not store a durable message's delivery count as it is sent (faster; "
                   "a message delivered before a crash then comes back not redelivered)")
    g.add_argument("--spill-dir", default=None,
                   help="paging and large-message files (default <data-dir>/spill)")


def limits_from_args(args: argparse.Namespace, base: BrokerLimits | None = None) -> BrokerLimits:
    """``base`` (the defaults, or the config file's) with the limit flags that were given."""
    names = [n for n in BrokerLimits.field_names() if hasattr(args, n)]
    changes = {n: getattr(args, n) for n in names}
    if changes.get("address_full_policy") is not None:
        changes["address_full_policy"] = AddressFullPolicy(changes["address_full_policy"])
    return (base or BrokerLimits()).replace(**changes)


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    """The configuration file (if any) with the flags given on the command line on top."""
    from ..protocol.sasl import load_users

    config = load_config(args.config) if args.config else BrokerConfig()
    return with_overrides(
        config,
        host=args.host, port=args.port, data_dir=args.data_dir,
        users=load_users(args.users) if args.users else None,
        tls_cert=args.tls_cert, tls_key=args.tls_key, tls_ca=args.tls_ca, dlq=args.dlq,
        require_client_certificate=args.require_client_certificate,
        max_delivery_attempts=args.max_delivery_attempts, idle_timeout_s=args.idle_timeout,
        address_prefixes=args.address_prefixes, limits=limits_from_args(args, config.limits),
        metrics=args.metrics, metrics_token=args.metrics_token, console=args.console,
        metrics_queue_labels=args.metrics_queue_labels,
        console_allow_anonymous_actions=args.console_allow_anonymous_actions,
        ws_port=args.ws_port, ws_path=args.ws_path,
    )


async def _serve(options: dict[str, Any]) -> None:
    from .broker import AsyncBroker

    broker = AsyncBroker(**options)
    await broker.start()
    # one line (tools read the URL from it): the metrics endpoint, if any, at its end
    metrics = f" (metrics on {broker.metrics_url})" if broker.metrics_url else ""
    console = f" (console on {broker.console_url})" if broker.console_url else ""
    ws = f" (WebSocket on {broker.ws_url})" if broker.ws_url else ""
    print(f"amqp-jms broker listening on {broker.url}{metrics}{console}{ws}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await broker.stop()


def _hash_password() -> int:
    from ..protocol.scram import hash_password

    if sys.stdin.isatty():
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            raise StartError("the passwords differ")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise StartError("empty password refused")
    print(hash_password(password))
    return 0


class StartError(Exception):
    """The broker cannot start as asked (a configuration mistake, a refused password); the
    message says why. The command line reports it and exits 2 (``amqp-jms broker --json``: as
    its JSON error object)."""


def run(args: argparse.Namespace) -> int:
    """Do what ``args`` (parsed by :func:`build_parser`'s options) ask: hash a password, or serve
    until a signal. Raises :class:`StartError` without serving when the configuration is wrong."""
    if args.hash_password:
        return _hash_password()
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        options = config_from_args(args).broker_options()
    except (ConfigError, ValueError, OSError) as e:
        raise StartError(str(e)) from e
    asyncio.run(_serve(options))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (without the ``broker`` word) and serve until a signal; returns 0.

    A configuration mistake prints the file, line and key and returns 2 without serving.
    """
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except StartError as e:
        print(f"amqp-jms broker: {e}", file=sys.stderr)
        return 2
