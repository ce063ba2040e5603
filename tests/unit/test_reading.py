"""``KeptBufferProtocol``: asyncio reads into one kept buffer, and ``data_received`` still gets
bytes of its own, whole and in order, that later reads do not change."""

from __future__ import annotations

import asyncio
import os
import socket
import tracemalloc
from typing import Any

from amqp_jms._reading import READ_SIZE, KeptBufferProtocol


class _Collect(KeptBufferProtocol):
    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.ended = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)  # kept as given: a view of the buffer would change under it

    def eof_received(self) -> bool:
        self.ended.set_result(None)
        return False


def test_what_is_read_reaches_data_received_whole_in_order_and_unchanged_by_later_reads() -> None:
    sent = os.urandom(3 * READ_SIZE + 12345)

    async def go() -> list[bytes]:
        a, b = socket.socketpair()
        loop = asyncio.get_running_loop()
        transport, proto = await loop.connect_accepted_socket(_Collect, a)
        try:
            for i in range(0, len(sent), 7000):  # many reads, some of them partial
                b.sendall(sent[i:i + 7000])
                await asyncio.sleep(0)
            b.shutdown(socket.SHUT_WR)
            await asyncio.wait_for(proto.ended, 10)
        finally:
            transport.close()
            b.close()
        return proto.chunks

    chunks = asyncio.run(go())
    assert len(chunks) > 1
    assert all(type(c) is bytes and 0 < len(c) <= READ_SIZE for c in chunks)
    assert b"".join(chunks) == sent


def _peak_allocation_reading(protocol_factory: Any, reads: int = 20) -> int:
    """The largest memory traced while a protocol of ``protocol_factory`` takes ``reads`` small
    reads (after one untraced read: a kept buffer is made at the first)."""

    async def go() -> int:
        a, b = socket.socketpair()
        loop = asyncio.get_running_loop()
        transport, proto = await loop.connect_accepted_socket(protocol_factory, a)
        try:
            b.sendall(b"x" * 26)
            while not proto.chunks:
                await asyncio.sleep(0)
            tracemalloc.start()
            try:
                for i in range(reads):
                    b.sendall(b"y" * 26)
                    while len(proto.chunks) < i + 2:
                        await asyncio.sleep(0)
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        finally:
            transport.close()
            b.close()

    return asyncio.run(go())


class _Plain(asyncio.Protocol):
    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)


def test_a_small_read_allocates_no_read_sized_block() -> None:
    """asyncio's own reads allocate 256 KiB for each (a fresh glibc mapping each time: the
    module's reason); a ``KeptBufferProtocol``'s allocate what they read."""
    assert _peak_allocation_reading(_Plain) >= 256 * 1024  # (the measure sees the plain way's)
    assert _peak_allocation_reading(_Collect) < READ_SIZE // 4
