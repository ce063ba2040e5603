"""``KeptBufferProtocol``: asyncio reads into one kept buffer, and ``data_received`` still gets
bytes of its own, whole and in order, that later reads do not change."""

from __future__ import annotations

import asyncio
import os
import socket

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


def test_the_read_size_stays_below_glibcs_mmap_threshold() -> None:
    """A read buffer of 128 KiB or more would be a fresh mapping per read (the module's reason)."""
    assert READ_SIZE < 128 * 1024
