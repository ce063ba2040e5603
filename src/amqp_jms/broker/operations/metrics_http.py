"""The broker's HTTP listener, on its own thread: ``GET /metrics`` for Prometheus and, when
enabled, the web console (``console/``) at every other path.

The broker's event loop only takes the snapshot (:func:`~.metrics.snapshot_sliced`, a slice of
queues per loop turn); reading the request, rendering the text and writing it happen on this
server's own thread and event loop, so a slow or hostile scraper never holds the broker's loop.
What a scraper controls is bounded: the request head (:data:`MAX_REQUEST` bytes, else 431), the
time to send it and to read the answer (:data:`TIMEOUT` seconds, then the socket is cut),
connections still sending their request (:data:`MAX_WAITING`, beyond that closed at once: a silent
socket takes no serving slot), requests served at once (:data:`MAX_CLIENTS`, beyond that 503 at
once), and how often the broker
snapshots: at most once per :data:`MIN_INTERVAL`. A scrape sooner than that waits for the next
snapshot (shared by every scrape waiting for it) rather than getting an older one: an answer
always shows the broker as it was after the request arrived.

The answer is HTTP/1.1 with ``Connection: close``: one request per connection, as Prometheus's
scrapes need no more. The console's requests are bounded the same way, and a POST's body by
:data:`MAX_BODY`; what the console asks of the broker runs on the broker's loop as small
``$management`` steps, and its pages are rendered here, so an open console tab costs the AMQP
side only those steps (``benchmarks/console_bench.py``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import hmac
import threading
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..._logs import BROKER as log
from .metrics import CONTENT_TYPE, MetricsSnapshot, render

if TYPE_CHECKING:
    import ssl

    from .console import Console

__all__ = [
    "MAX_CLIENTS",
    "MAX_REQUEST",
    "MIN_INTERVAL",
    "TIMEOUT",
    "MetricsServer",
    "authorized",
    "parse_listen",
]


MAX_REQUEST = 8192  # bytes of request line + headers
MAX_BODY = 65536  # bytes of a console form
TIMEOUT = 10.0  # seconds a client has to send its request, and to read the answer
MAX_CLIENTS = 8  # requests served at once
MAX_WAITING = 64  # connections still sending their request head (beyond: closed at once)
MIN_INTERVAL = 1.0  # seconds between snapshots, at least
SNAPSHOT_TIMEOUT = 30.0  # seconds the broker's loop has to answer


def parse_listen(text: str) -> tuple[str, int]:
    """``"127.0.0.1:9464"`` (also ``"[::1]:9464"``, or ``":9464"`` for 127.0.0.1) as (host, port);
    ``ValueError`` naming the problem."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"metrics address {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9464")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def authorized(head: bytes, token: str) -> bool:
    """Whether a request head carries ``token``: ``Authorization: Bearer <token>``, or Basic
    with any user name and the token as password (compared in constant time)."""
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if not sep or name.strip().lower() != b"authorization":
            continue
        scheme, _, credentials = value.strip().partition(b" ")
        given = b""
        if scheme.lower() == b"bearer":
            given = credentials.strip()
        elif scheme.lower() == b"basic":
            try:
                given = base64.b64decode(credentials.strip(), validate=True).partition(b":")[2]
            except (binascii.Error, ValueError):
                return False
        return hmac.compare_digest(given, token.encode())
    return False


Snapshotter = Callable[[], Coroutine[Any, Any, MetricsSnapshot]]


class MetricsServer:
    """Serves ``render(snapshot)`` at ``/metrics``; ``take`` makes a snapshot on the broker's loop
    (``broker_loop``) and ``finish`` completes it here (process figures: disk, memory)."""

    def __init__(
        self,
        host: str,
        port: int,
        broker_loop: asyncio.AbstractEventLoop,
        take: Snapshotter,
        finish: Callable[[MetricsSnapshot], MetricsSnapshot],
        *,
        console: Console | None = None,
        ssl_context: ssl.SSLContext | None = None,
        token: str | None = None,
        queue_labels: str = "names",
    ) -> None:
        self.console = console
        #: with a token, ``/metrics`` answers only ``Authorization: Bearer <token>`` or Basic
        #: auth whose password is the token (Prometheus's ``authorization`` / ``basic_auth``)
        self.token = token
        self.queue_labels = queue_labels  # how queues and topics are named (metrics.QUEUE_LABELS)
        self.ssl_context = ssl_context
        self.host = host
        self.port = port
        self._broker_loop = broker_loop
        self._take = take
        self._finish = finish
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._clients = 0
        self._waiting = 0
        self._last_at = float("-inf")  # monotonic time the last snapshot was begun
        self._next: asyncio.Future[str] | None = None  # the next snapshot, not yet begun: shared

    @property
    def url(self) -> str:
        return self.base_url + "/metrics"

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.ssl_context else 'http'}://{host}:{self.port}"

    # -- life cycle (called from any thread but this server's) -----------------------------------
    def start(self, timeout: float = 10.0) -> None:
        """Listen (``OSError`` if the address is taken); returns once the socket is bound."""
        loop = asyncio.new_event_loop()
        started: concurrent.futures.Future[None] = concurrent.futures.Future()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._serve, self.host, self.port, limit=MAX_REQUEST,
                                         reuse_address=True, ssl=self.ssl_context,
                                         ssl_handshake_timeout=TIMEOUT if self.ssl_context else None))
            except BaseException as exc:
                started.set_exception(exc)
                loop.close()
                return
            self.port = int(self._server.sockets[0].getsockname()[1])
            started.set_result(None)
            try:
                loop.run_forever()
            finally:
                # stopping: no waiting for clients (a slow one would hold the broker's stop)
                self._server.close()
                tasks = asyncio.all_tasks(loop)
                for task in tasks:
                    task.cancel()
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="amqp-jms-broker-metrics", daemon=True)
        self._thread.start()
        started.result(timeout)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(10)

    # -- serving (this server's loop) ------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # a socket that has not sent its request yet holds no serving slot: eight silent ones
        # used to make every scrape answer 503; they are bounded on their own (MAX_WAITING)
        if self._waiting >= MAX_WAITING:
            writer.transport.abort()
            return
        self._waiting += 1
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        except (asyncio.LimitOverrunError, ValueError):
            await self._answer(writer, 431, f"request head over {MAX_REQUEST} bytes\n")
            return
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            writer.transport.abort()
            return
        except BaseException:  # cancelled (the broker stopping): no half-open socket left
            writer.transport.abort()
            raise
        finally:
            self._waiting -= 1
        if self._clients >= MAX_CLIENTS:
            await self._answer(writer, 503, "too many scrapes at once\n")
            return
        self._clients += 1
        try:
            request = head.split(b"\r\n", 1)[0].split()
            if len(request) != 3 or not request[2].startswith(b"HTTP/"):
                await self._answer(writer, 400, "malformed request line\n")
                return
            method, target = request[0], request[1].split(b"?", 1)[0]
            if target != b"/metrics":
                if self.console is not None:
                    await self._console(reader, writer, head, request[0], request[1])
                else:
                    await self._answer(writer, 404, "the metrics are at /metrics\n")
                return
            if method not in (b"GET", b"HEAD"):
                await self._answer(writer, 405, "GET or HEAD\n", extra="Allow: GET, HEAD\r\n")
                return
            if self.token is not None and not authorized(head, self.token):
                await self._answer(writer, 401, "the metrics need the broker's metrics token\n",
                                   extra='WWW-Authenticate: Basic realm="amqp-jms metrics"\r\n')
                return
            try:
                text = await self._text()
            except Exception:
                log.exception("metrics snapshot failed")
                await self._answer(writer, 500, "the broker did not answer\n")
                return
            await self._answer(writer, 200, text, content_type=CONTENT_TYPE, head_only=method == b"HEAD")
        finally:
            self._clients -= 1
            if not writer.is_closing():
                writer.transport.abort()  # left early (cancelled at stop): no half-open socket

    async def _console(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes,
                       method: bytes, target: bytes) -> None:
        from .console import Request

        assert self.console is not None
        headers: dict[str, str] = {}
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        body = b""
        if method == b"POST":
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                await self._answer(writer, 400, "bad Content-Length\n")
                return
            if not 0 <= length <= MAX_BODY:
                await self._answer(writer, 413, f"a form is at most {MAX_BODY} bytes\n")
                return
            try:
                body = await asyncio.wait_for(reader.readexactly(length), TIMEOUT)
            except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                writer.transport.abort()
                return
        peer = writer.get_extra_info("peername")
        req = Request(method.decode("latin-1"), target.decode("latin-1"), headers, body,
                      f"{peer[0]}:{peer[1]}" if peer else "", self.ssl_context is not None)
        try:
            resp = await self.console.handle(req)
        except Exception:
            log.exception("console request failed")
            await self._answer(writer, 500, "the console failed: see the broker's log\n")
            return
        extra = "".join(f"{k}: {v}\r\n" for k, v in resp.headers)
        await self._answer(writer, resp.status, resp.body, content_type=resp.content_type, extra=extra,
                           head_only=method == b"HEAD")

    async def _text(self) -> str:
        """The next snapshot begun after this call, rendered (see the module's docstring)."""
        if self._next is None:
            self._next = asyncio.ensure_future(self._snapshot_when_due())
        return await asyncio.shield(self._next)

    async def _snapshot_when_due(self) -> str:
        wait = self._last_at + MIN_INTERVAL - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self._next = None  # scrapes from now on wait for a later one
        self._last_at = time.monotonic()
        fut = asyncio.run_coroutine_threadsafe(self._take(), self._broker_loop)
        snap = await asyncio.wait_for(asyncio.wrap_future(fut), SNAPSHOT_TIMEOUT)
        return render(self._finish(snap), self.queue_labels)

    async def _answer(
        self, writer: asyncio.StreamWriter, status: int, body: str | bytes, *,
        content_type: str = "text/plain; charset=utf-8", head_only: bool = False, extra: str = "",
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        reason = _REASONS.get(status, "")
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(data)}\r\n{extra}Connection: close\r\n\r\n").encode()
        try:
            writer.write(head if head_only else head + data)
            await asyncio.wait_for(writer.drain(), TIMEOUT)
            writer.close()
            await asyncio.wait_for(writer.wait_closed(), TIMEOUT)
        except (TimeoutError, ConnectionError):
            writer.transport.abort()  # a client that does not read: cut


_REASONS = {200: "OK", 303: "See Other", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
            404: "Not Found", 405: "Method Not Allowed", 409: "Conflict", 413: "Content Too Large",
            429: "Too Many Requests", 431: "Request Header Fields Too Large",
            500: "Internal Server Error", 503: "Service Unavailable"}
