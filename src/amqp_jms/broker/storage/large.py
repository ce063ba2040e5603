"""Large messages: streamed to a file as their transfer frames arrive, mapped, never copied whole.

A 100 MB message used to sit in proton's incoming buffer, then in a ``bytearray``, then in
``bytes``, then in proton's outgoing buffer and the socket's (669 MB peak). Now an incoming
delivery's bytes are taken out of proton as they arrive (:class:`IncomingSpool`); past
``large_message_threshold`` they go to an unnamed file in the spill directory, and the finished
message is that file ``mmap``-ed read-only: the kernel's page cache holds it, the broker's heap
does not, and the file vanishes with the last reference to the message. Going out,
:class:`~amqp_jms.broker.protocol.links.OutgoingLink` sends such a message in ``STREAM_CHUNK`` pieces as
the socket drains (``OutgoingStream``).
"""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

__all__ = [
    "DRAIN_AT",
    "SPOOL_PREFIX",
    "SPOOL_SUFFIX",
    "STREAM_CHUNK",
    "IncomingSpool",
    "OutgoingStream",
    "memory_size",
]

DRAIN_AT = 64 * 1024  # a partial delivery's bytes are taken out of proton once this many wait
STREAM_CHUNK = 256 * 1024  # bytes of a large message handed to proton per step going out


def memory_size(data: Any) -> int:
    """Heap bytes a message's data holds: its length, or nothing much for a mapped file."""
    return 256 if type(data) is mmap.mmap else len(data)


SPOOL_PREFIX = "incoming-"
SPOOL_SUFFIX = ".part"


class IncomingSpool:
    """The bytes of one delivery still arriving: in memory up to ``threshold``, then a file.

    The file is named (``incoming-*.part`` in the spill directory, under the data directory by
    default) while the delivery arrives, so an operator's ``ls``/``du`` sees what unfinished
    transfers hold; the name goes when the delivery finishes (the finished message is the file
    mapped, which vanishes with the last reference to it) or is discarded. ``account`` is told
    every byte taken in (+n) and given back (-size) so the broker can cap what unfinished
    transfers hold, per connection and in total."""

    __slots__ = ("_account", "_buf", "_dir", "_file", "size", "threshold")

    def __init__(
        self, threshold: int, directory: str | None, account: Callable[[int], None] | None = None
    ) -> None:
        self.threshold = threshold
        self._dir = directory
        self._account = account
        self._buf = bytearray()
        self._file: IO[bytes] | None = None
        self.size = 0

    def add(self, chunk: bytes | bytearray | memoryview) -> None:
        n = len(chunk)
        self.size += n
        if self._account is not None:
            self._account(n)
        f = self._file
        if f is None and self.size >= self.threshold:
            f = self._file = tempfile.NamedTemporaryFile(
                dir=self._dir, prefix=SPOOL_PREFIX, suffix=SPOOL_SUFFIX, delete=False
            )
            f.write(self._buf)
            self._buf = bytearray()
        if f is not None:
            f.write(chunk)
        else:
            self._buf += chunk

    def _release(self) -> None:
        if self._account is not None and self.size:
            self._account(-self.size)
            self._account = None

    def finish(self) -> bytes | mmap.mmap:
        """The whole message: ``bytes``, or the file mapped read-only (its name removed: the
        data goes when the mapping does)."""
        self._release()
        f = self._file
        if f is None:
            return bytes(self._buf)
        f.flush()
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        f.close()
        os.unlink(f.name)
        self._file = None
        return data

    def discard(self) -> None:
        self._release()
        if self._file is not None:
            self._file.close()
            os.unlink(self._file.name)
            self._file = None
        self._buf = bytearray()


@dataclass(slots=True)
class OutgoingStream:
    """A large message part-way out on one link: its delivery, its bytes, how far it got."""

    delivery: Any
    view: memoryview  # what is left to send after the header (if one was rewritten)
    sent: int
    msg: Any
    base: int = 0  # where ``view`` starts in the message's mapped file
