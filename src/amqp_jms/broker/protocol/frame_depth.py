"""``max_value_depth`` for the performatives themselves, before proton decodes them.

Why: ``max_value_depth`` bounded the nesting of a *message*, but a frame's own fields (an Open's
properties, an Attach's filter or capabilities) could nest thousands of levels deep and were
accepted: decoding such a field into Python later recurses that deep. The guard sits between the
socket and the engine, splits the byte stream into frames by their headers (no decoding), and
walks each non-transfer frame's body with :func:`~amqp_jms.broker.routing.depth.check_depth`.
A transfer's message is checked when it has arrived whole (``transfers.py``), so transfer frames
are skipped by their size, their payload never copied: the hot path pays one header parse per
frame.
"""

from __future__ import annotations

import struct

from ..routing.depth import check_depth

__all__ = ["FrameDepthGuard"]

_HEADER = 8  # size (4), doff (1), type (1), channel (2)
_PREFIX = 3  # 0x00 0x53 <code>: a performative's descriptor as a small ulong
_TRANSFER = 0x14
_unpack_header = struct.Struct(">IB").unpack_from  # a frame's size and data offset (in words)


def _cannot_nest(size: int, doff: int, limit: int) -> bool:
    """A frame of ``size`` bytes with data offset ``doff`` need not be walked: no limit, a body
    too short to nest past it (each level takes two bytes), or extended header bytes (none in
    practice; a malformed header is proton's to refuse)."""
    return not limit or size - doff <= 2 * limit or doff != _HEADER


class FrameDepthGuard:
    """Feed it what the engine is fed; ``feed`` answers why a frame nests too deep, or None."""

    __slots__ = ("_body", "_head", "_limit", "_max_frame", "_need", "_skip", "_start", "condition", "cut")

    def __init__(self, limit: int, protocol_header: int = 8, max_frame_size: int = 0) -> None:
        self._limit = limit
        self._max_frame = max_frame_size  # a bigger frame is named as such (proton: "malformed")
        #: the AMQP error condition of what ``feed`` found
        self.condition = "amqp:decode-error"
        self._skip = protocol_header  # the AMQP protocol header comes first
        self._head = bytearray()  # a frame header, then the body's first bytes
        self._body: bytearray | None = None  # a non-transfer frame's body being collected
        self._need = 0  # bytes of the body still to come (collected or skipped)
        self._start = 0  # where the frame being read began in the data fed last (<0: before it)
        #: after ``feed`` found a frame too deep: how much of that data comes before the frame
        #: (the engine may have those bytes; the frame itself it must never complete)
        self.cut = 0

    def _check(self, body: bytes | bytearray) -> bool:
        try:
            check_depth(body, self._limit)
        except ValueError:
            return True
        return False

    def _why(self) -> str:
        self.cut = max(0, self._start)
        return f"a frame nests values more than {self._limit} levels deep (limit max_value_depth)"

    def feed(self, data: bytes) -> str | None:
        limit = self._limit
        if not limit and not self._max_frame:
            return None
        view = memoryview(data)
        i, n = 0, len(view)
        self._start -= 1 << 62  # a frame still being read began in earlier data
        max_frame = self._max_frame
        while i < n:
            if not self._skip and self._body is None and not self._head and i + _HEADER + _PREFIX <= n:
                # a whole frame header (and a performative's descriptor) in this data, at a frame
                # boundary: a frame that cannot nest too deep, or a transfer, is stepped over
                # without copying its header (the common case: one unpack per frame); anything
                # else takes the general path below from the same place
                size, doff = _unpack_header(data, i)
                doff *= 4
                if size >= _HEADER and not (max_frame and size > max_frame) and (
                        _cannot_nest(size, doff, limit)
                        or (data[i + 8] == 0 and data[i + 9] == 0x53 and data[i + 10] == _TRANSFER)):
                    self._start = i
                    end = i + size
                    if end > n:
                        self._skip = end - n
                        i = n
                    else:
                        i = end
                    continue
            if self._skip:
                take = min(self._skip, n - i)
                self._skip -= take
                i += take
                continue
            body = self._body
            if body is not None:
                take = min(self._need, n - i)
                body += view[i : i + take]
                self._need -= take
                i += take
                if not self._need:
                    self._body = None
                    if self._check(body):
                        return self._why()
                continue
            head = self._head
            if not head:
                self._start = i
            if len(head) < _HEADER:
                take = min(_HEADER - len(head), n - i)
                head += view[i : i + take]
                i += take
                if len(head) < _HEADER:
                    continue
                size = int.from_bytes(head[:4], "big")
                doff = head[4] * 4
                if self._max_frame and size > self._max_frame:
                    self.cut = max(0, self._start)
                    self.condition = "amqp:connection:framing-error"
                    return (f"a frame of {size} bytes is larger than the broker's max-frame-size of "
                            f"{self._max_frame} (an Attach with a selector, address or name that long "
                            "cannot be sent)")
                if _cannot_nest(size, doff, limit):
                    self._skip = max(0, size - _HEADER)
                    head.clear()
                    continue
                self._need = size - _HEADER
                continue
            take = min(_HEADER + _PREFIX - len(head), n - i)
            head += view[i : i + take]
            i += take
            if len(head) < _HEADER + _PREFIX:
                continue
            prefix = bytes(head[_HEADER:])
            head.clear()
            rest = self._need - _PREFIX
            if prefix[:2] == b"\x00\x53" and prefix[2] == _TRANSFER:
                self._skip, self._need = rest, 0
            else:
                self._body = bytearray(prefix)
                self._need = rest
                if not rest:
                    self._body = None
                    if self._check(bytes(prefix)):
                        return self._why()
        return None
