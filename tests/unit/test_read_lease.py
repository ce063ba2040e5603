"""A loop thread's socket lent to another thread's event loop (``provider.read_lease``): the
borrower reads what arrives while it holds the socket, the loop thread again once it is given
back, and a borrower that stalls (its loop blocked, or closed) cannot keep the loop thread from
its own socket for longer than the lease's budget and ``WATCH_SECONDS``. Against a real
``LoopThread`` and a socket pair.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from amqp_jms.provider.loop import LoopThread
from amqp_jms.provider.read_lease import WATCH_SECONDS


class _Reader(asyncio.Protocol):
    """What the loop thread reads from its end of the pair."""

    def __init__(self) -> None:
        self.data = b""
        self.got = threading.Event()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.data += data
        self.got.set()


@pytest.fixture
def wired() -> Iterator[tuple[LoopThread, _Reader, socket.socket, socket.socket]]:
    lt = LoopThread("lease-test")
    ours, peer = socket.socketpair()
    ours.setblocking(False)
    reader = _Reader()

    async def connect() -> None:
        await asyncio.get_running_loop().connect_accepted_socket(lambda: reader, ours)

    asyncio.run_coroutine_threadsafe(connect(), lt.loop).result(5)
    try:
        yield lt, reader, ours, peer
    finally:
        lt.loop.call_soon_threadsafe(reader.transport.close)
        lt.stop()
        peer.close()


def _descriptors_of(sock: socket.socket) -> int:
    """How many of this process's descriptors are ``sock`` (its own, and any duplicate of it):
    counted by the socket's inode, so that other tests' descriptors closing meanwhile do not
    count."""
    name = f"socket:[{os.fstat(sock.fileno()).st_ino}]"
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == name
        except OSError:
            pass  # (closed while listed)
    return count


def _lend(lt: LoopThread, fd: int, loop: asyncio.AbstractEventLoop, budget: float,
          read: list[tuple[bytes, str]]) -> bool:
    def handle(data: bytes) -> bool:
        read.append((data, threading.current_thread().name))
        return True

    return lt.lending.lend(fd, loop, handle, budget, lambda: None)


def test_the_borrowing_loop_reads_what_arrives_then_gives_the_socket_back(wired: Any) -> None:
    lt, reader, ours, peer = wired
    loop = asyncio.new_event_loop()
    try:
        read: list[tuple[bytes, str]] = []
        assert _lend(lt, ours.fileno(), loop, 5.0, read)
        assert not _lend(lt, ours.fileno(), loop, 5.0, [])  # one lease at a time
        assert _descriptors_of(ours) == 2  # the borrower watches a duplicate
        peer.sendall(b"answer")
        loop.run_until_complete(_until(lambda: bool(read)))
        assert read == [(b"answer", threading.current_thread().name)]
        assert lt.lending.lease is None and reader.data == b""
        peer.sendall(b"after")  # given back: the loop thread reads its socket again
        assert reader.got.wait(2) and reader.data == b"after"
        assert _descriptors_of(ours) == 1  # the borrower's duplicate is closed
    finally:
        loop.close()


def test_a_stalled_borrower_cannot_keep_the_socket_from_the_loop_thread(wired: Any) -> None:
    lt, reader, ours, peer = wired
    loop = asyncio.new_event_loop()
    try:
        read: list[tuple[bytes, str]] = []
        assert _lend(lt, ours.fileno(), loop, 0.02, read)
        # the borrowing loop never runs (as if a task blocked it): the loop thread takes its
        # socket back after the budget and at most WATCH_SECONDS more
        peer.sendall(b"meanwhile")
        assert reader.got.wait(0.02 + WATCH_SECONDS + 1.0), "the socket stayed lent to a stalled loop"
        assert reader.data == b"meanwhile" and read == []
        loop.run_until_complete(asyncio.sleep(0.05))  # the borrower runs again: it lets go
        assert _descriptors_of(ours) == 1
    finally:
        loop.close()


def test_a_borrower_whose_loop_closed_gives_its_duplicate_back(wired: Any) -> None:
    lt, reader, ours, peer = wired
    loop = asyncio.new_event_loop()
    assert _lend(lt, ours.fileno(), loop, 0.02, [])
    loop.close()  # (an ``asyncio.run`` that ended with the socket lent)
    peer.sendall(b"later")
    assert reader.got.wait(0.02 + WATCH_SECONDS + 1.0)
    assert reader.data == b"later"
    assert _descriptors_of(ours) == 1  # the loop thread closed the duplicate nobody watches


def test_a_socket_recalled_while_lent_ends_its_lease(wired: Any) -> None:
    """The connection's socket is going (``Lending.recall``, from the provider's
    ``connection_lost``): the lease ends, and the caller learns that the borrower still holds a
    duplicate (which would hold the connection open), so that it shuts the socket down."""
    lt, _reader, ours, _peer = wired
    loop = asyncio.new_event_loop()
    try:
        assert _lend(lt, ours.fileno(), loop, 5.0, [])
        recalled = asyncio.run_coroutine_threadsafe(_call(lambda: lt.lending.recall(ours.fileno())),
                                                    lt.loop).result(5)
        assert recalled is True and lt.lending.lease is None
        assert asyncio.run_coroutine_threadsafe(_call(lambda: lt.lending.recall(ours.fileno())),
                                                lt.loop).result(5) is False
        loop.run_until_complete(asyncio.sleep(0.05))  # the borrower lets its duplicate go
    finally:
        loop.close()


async def _until(done: Any, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not done():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.001)


async def _call(fn: Any) -> Any:
    return fn()


def test_after_a_quiet_spell_the_loop_thread_sleeps_unbounded_and_still_watches_a_new_lease(
    wired: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop thread's sleeps are bounded only for a spell after each lending, so an idle
    connection is not woken every ``WATCH_SECONDS`` for ever; a lending after the spell wakes
    it once, and a stalled borrower is still caught."""
    import math
    import time

    from amqp_jms.provider import loop as loop_module

    monkeypatch.setattr(loop_module, "LENDING_SPELL_SECONDS", 0.2)
    lt, reader, ours, peer = wired
    loop = asyncio.new_event_loop()
    try:
        read: list[tuple[bytes, str]] = []
        assert _lend(lt, ours.fileno(), loop, 5.0, read)
        peer.sendall(b"answer")
        loop.run_until_complete(_until(lambda: bool(read)))
        deadline = time.monotonic() + 2.0
        while lt._selector.sleep_until != math.inf:  # the spell over: it sleeps unbounded
            assert time.monotonic() < deadline, "the loop thread kept waking after the spell"
            time.sleep(0.05)
        assert _lend(lt, ours.fileno(), loop, 0.02, [])  # the borrower then stalls
        peer.sendall(b"meanwhile")
        assert reader.got.wait(0.02 + WATCH_SECONDS + 1.0), "the socket stayed lent to a stalled loop"
        assert reader.data == b"meanwhile"
        loop.run_until_complete(asyncio.sleep(0.05))
    finally:
        loop.close()
