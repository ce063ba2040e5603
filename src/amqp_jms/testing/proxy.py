"""A fault-injecting TCP proxy for loopback tests: real network faults, on command.

Failover and idle-timeout behaviour can only be trusted when tested against the faults a real
network produces, so the proxy sits between a client and a broker and, when told, breaks the
path the way networks do::

    with FaultProxy(broker.port) as proxy:
        conn = ConnectionFactory(proxy.url).create_connection()
        proxy.drop()             # every connection reset (RST), or drop(reset=False): FIN
        proxy.blackhole()        # connections stay open but forward nothing, never close:
                                 # only an idle timeout can notice
        proxy.silence_target()   # the client's bytes still reach the target, the target's
                                 # answers are dropped: then drop() loses an answer for good
        proxy.delay(0.2)         # every chunk forwarded 0.2 s late (order kept)
        proxy.refuse()           # stop listening: new connects get "connection refused"
        proxy.accept()           # listen again on the same port
        proxy.accepted, proxy.active   # connections accepted in total / open now

The proxy runs its own asyncio loop on a daemon thread, so sync tests call it directly; every
command returns once it has taken effect (a dropped connection is closed when ``drop()``
returns). Faults apply to the connections open at the time; connections accepted later are
forwarded normally (except after ``refuse()``), which is what a reconnecting client meets.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["FaultProxy"]

_T = TypeVar("_T")
_CHUNK = 65536
_KEEP_DROPPED = 1 << 20
#: how long a command may take on the proxy's loop before the caller is told
_COMMAND_TIMEOUT_S = 10.0


class _Pipe:
    """One proxied connection: client <-> proxy <-> target, one pump task per direction."""

    def __init__(self, proxy: FaultProxy, client: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        self.proxy = proxy
        self.client_reader, self.client_writer = client
        self.target_writer: asyncio.StreamWriter | None = None
        self.blackholed = False
        self.target_silenced = False  # what the target sends is dropped (silence_target)
        self.tasks: list[asyncio.Task[None]] = []

    async def run(self, host: str, port: int) -> None:
        try:
            target_reader, self.target_writer = await asyncio.open_connection(host, port)
        except OSError:
            # the target is down: the client sees its connection closed, as behind a real
            # load balancer whose backend is gone
            self.client_writer.close()
            return
        self.tasks = [
            asyncio.create_task(self._pump(self.client_reader, self.target_writer)),
            asyncio.create_task(self._pump(target_reader, self.client_writer, from_target=True)),
        ]
        await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)
        self.close(reset=False)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, from_target: bool = False
    ) -> None:
        # A writer task per direction keeps order when chunks are delayed.
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def write() -> None:
            while (item := await queue.get()) is not None:
                due, data = item
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if self.blackholed:
                    continue
                writer.write(data)
                await writer.drain()

        writer_task = asyncio.create_task(write())
        try:
            while data := await reader.read(_CHUNK):
                if self.blackholed or (from_target and self.target_silenced):
                    self.proxy.note_dropped(data)  # a black hole swallows, and says nothing
                else:
                    queue.put_nowait((loop.time() + self.proxy.delay_s, data))
            queue.put_nowait(None)
            await writer_task
        except (OSError, asyncio.CancelledError):
            writer_task.cancel()
            raise
        finally:
            if not writer_task.done():
                writer_task.cancel()

    def close(self, reset: bool) -> None:
        for task in self.tasks:
            task.cancel()
        for w in (self.client_writer, self.target_writer):
            if w is None or w.transport.is_closing():
                continue
            if reset:
                sock = w.get_extra_info("socket")
                if sock is not None:  # linger 0: close sends RST, not FIN
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                w.transport.abort()
            else:
                w.close()
        self.proxy._pipes.discard(self)


class FaultProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target_host:target_port`` and injects faults."""

    def __init__(self, target_port: int, target_host: str = "127.0.0.1", port: int = 0) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.host = "127.0.0.1"
        self.port = port
        #: connections accepted since start (including ones later dropped)
        self.accepted = 0
        self.delay_s = 0.0
        #: what was read and not forwarded (``blackhole``, ``silence_target``), its last
        #: ``_KEEP_DROPPED`` bytes: a test waits on it to know a request reached the proxy
        self.dropped = bytearray()
        self._pipes: set[_Pipe] = set()
        self._server: asyncio.Server | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy", daemon=True)
        self._started = False

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> FaultProxy:
        if not self._started:
            self._thread.start()
            self._started = True
            self._call(self._listen())
        return self

    def stop(self) -> None:
        if not self._started:
            return
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_COMMAND_TIMEOUT_S)
        self._loop.close()
        self._started = False

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"amqp://{self.host}:{self.port}"

    @property
    def active(self) -> int:
        """Connections open through the proxy now (black-holed ones included)."""
        return self._call(self._count())

    # -- faults ---------------------------------------------------------------------------------
    def drop(self, reset: bool = True) -> int:
        """Close every open connection on both sides: RST (``reset``) or an orderly FIN.

        Returns how many connections were dropped."""
        return self._call(self._drop(reset))

    def blackhole(self) -> int:
        """Make every open connection silent both ways, without closing it: data is read and
        discarded, no FIN or RST is sent. Returns how many connections it affected."""
        return self._call(self._blackhole())

    def note_dropped(self, data: bytes) -> None:
        dropped = self.dropped
        dropped += data
        if len(dropped) > _KEEP_DROPPED:
            del dropped[: len(dropped) - _KEEP_DROPPED]

    def silence_target(self) -> int:
        """On every open connection, drop what the target sends from now on, while the client's
        bytes still reach it: a request is served and its answer never arrives (``drop()``
        then loses it for good, as a connection that dies between the two). Returns how many
        connections it affected."""
        return self._call(self._silence_target())

    def delay(self, seconds: float) -> None:
        """Forward every chunk (from now on, all connections) ``seconds`` late; 0 restores."""
        if seconds < 0:
            raise ValueError("delay must not be negative")
        self.delay_s = seconds

    def refuse(self) -> None:
        """Stop listening: new connection attempts are refused by the OS. Open ones live on."""
        self._call(self._unlisten())

    def accept(self) -> None:
        """Listen again on the same port after ``refuse()``."""
        self._call(self._listen())

    # -- on the proxy's loop --------------------------------------------------------------------
    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("FaultProxy commands must not be called on the proxy's own thread")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(_COMMAND_TIMEOUT_S)

    async def _listen(self) -> None:
        if self._server is not None:
            return
        self._server = await asyncio.start_server(self._on_client, self.host, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _unlisten(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        pipe = _Pipe(self, (reader, writer))
        self._pipes.add(pipe)
        try:
            await pipe.run(self.target_host, self.target_port)
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            self._pipes.discard(pipe)

    async def _count(self) -> int:
        return len(self._pipes)

    async def _drop(self, reset: bool) -> int:
        pipes = list(self._pipes)
        for pipe in pipes:
            pipe.close(reset)
        await asyncio.sleep(0)  # let the cancelled pumps finish
        return len(pipes)

    async def _blackhole(self) -> int:
        for pipe in self._pipes:
            pipe.blackholed = True
        return len(self._pipes)

    async def _silence_target(self) -> int:
        for pipe in self._pipes:
            pipe.target_silenced = True
        return len(self._pipes)

    async def _stop(self) -> None:
        await self._unlisten()
        await self._drop(reset=False)
        # handlers still connecting to the target: cancel them so none is left pending
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in others:
            t.cancel()
        await asyncio.gather(*others, return_exceptions=True)
