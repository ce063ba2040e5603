"""Reading a socket without a fresh quarter-megabyte per read: the client's and the broker's.

asyncio's stream transports read with ``recv(256 KiB)`` into a new bytes object every time, and
its TLS layer reads 256 KiB from the SSL object the same way. glibc serves an allocation above
its mmap threshold (128 KiB unless a program raised it) with a fresh mapping: each such read
maps memory, faults its first page in, shrinks it with ``mremap`` and unmaps it. That costs
about 15 µs a read on a small virtual machine, more than the rest of a small read, and an AMQP
connection reads once for every frame that arrives on its own (a waiting send's answer, each
message a broker gets from a producer that waits).

So every AMQP connection's protocol, client or broker, plain TCP, TLS or WebSocket, is a
``KeptBufferProtocol``: asyncio reads into one buffer kept per thread (a connection's I/O
events all run on its loop's thread), of ``READ_SIZE``, below the threshold, and the bytes read
are copied out of it, at their own size, before ``data_received`` sees them. A caller that
reads a socket itself (a waiting send, ``LoopThread.read_here``) asks for ``READ_SIZE`` too.
"""

from __future__ import annotations

import asyncio
import threading

__all__ = ["READ_SIZE", "KeptBufferProtocol"]

#: the most one read takes from a socket: below glibc's default mmap threshold (128 KiB), so
#: a read's bytes never get a mapping of their own; 64 KiB is also what Netty reads at most
READ_SIZE = 64 * 1024

_buffers = threading.local()


def _thread_buffer() -> memoryview:
    """This thread's read buffer (made at its first read)."""
    view: memoryview | None = getattr(_buffers, "view", None)
    if view is None:
        view = _buffers.view = memoryview(bytearray(READ_SIZE))
    return view


class KeptBufferProtocol(asyncio.BufferedProtocol):
    """A stream protocol written as ``data_received(bytes)`` that asyncio reads for into the
    thread's kept buffer (``asyncio.BufferedProtocol``: ``recv_into``, and for TLS the SSL
    object's read into it). The buffer is only lent between ``get_buffer`` and
    ``buffer_updated``, which asyncio calls back to back on the loop's thread; what was read
    is copied out before ``data_received`` runs, so the bytes it gets are its own to keep."""

    def get_buffer(self, sizehint: int) -> memoryview:
        return _thread_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(bytes(_thread_buffer()[:nbytes]))  # (the same thread's buffer)

    def data_received(self, data: bytes) -> None:
        """The bytes one read took from the socket."""
        raise NotImplementedError
