"""The client's outgoing byte stream, edited where proton cannot say what Qpid JMS says.

A JMS consumer's source must carry ``default-outcome = modified{delivery-failed=true}`` (Qpid
JMS's ``AmqpConsumerBuilder``): a delivery the peer must settle on its own (the link detached,
the session ended) then counts as a failed delivery attempt, so it comes back with
``JMSRedelivered`` set and its delivery count raised, instead of as new. proton-c encodes the
source terminus itself and has no field for the default outcome: it always writes ``null``.

So the provider hands the bytes proton produces through :class:`OutgoingFrames` before they
reach the socket. It follows frame boundaries (the protocol headers, SASL frames, AMQP frames)
and rewrites only *attach* frames whose role is receiver and whose source names no default
outcome, splicing the outcome into the source list. Every other byte goes out untouched, and a
frame is never held back longer than it takes to see all of it. Pure functions on bytes, no I/O:
tested against proton's own attach frames and read back by rhea, an independent AMQP stack.
"""

from __future__ import annotations

import struct

from ...exceptions import JMSException
from ...mapping.codec import skip_value

__all__ = ["MODIFIED_DELIVERY_FAILED", "OutgoingFrames", "with_default_outcome"]

#: ``modified`` (descriptor 0x27) with ``delivery-failed = true`` and nothing else
MODIFIED_DELIVERY_FAILED = b"\x00\x53\x27\xc0\x02\x01\x41"

_ATTACH = (b"\x00\x53\x12", b"\x00\x80\x00\x00\x00\x00\x00\x00\x00\x12")
_SOURCE = (b"\x00\x53\x28", b"\x00\x80\x00\x00\x00\x00\x00\x00\x00\x28")
_NULL = 0x40
_TRUE = (b"\x41", b"\x56\x01")
_ROLE, _SOURCE_FIELD, _DEFAULT_OUTCOME = 2, 5, 8
_PROTOCOL_HEADER = b"AMQP"
_U32 = struct.Struct(">I")


def _list_items(buf: bytes, pos: int) -> tuple[list[tuple[int, int]], int]:
    """The (start, end) spans of a list's elements at ``pos``, and the offset past the list."""
    code = buf[pos]
    if code == 0x45:
        return [], pos + 1
    if code == 0xC0:
        size, count, start = buf[pos + 1], buf[pos + 2], pos + 3
        end = pos + 2 + size
    elif code == 0xD0:
        size, count = _U32.unpack_from(buf, pos + 1)[0], _U32.unpack_from(buf, pos + 5)[0]
        start, end = pos + 9, pos + 5 + size
    else:
        raise ValueError(f"expected a list, found constructor {code:#04x}")
    spans = []
    p = start
    for _ in range(count):
        q = skip_value(buf, p, "attach")
        spans.append((p, q))
        p = q
    if p != end:
        raise ValueError("list size does not match its elements")
    return spans, end


def _list32(items: list[bytes]) -> bytes:
    body = b"".join(items)
    return b"\xd0" + _U32.pack(len(body) + 4) + _U32.pack(len(items)) + body


def _described_list(buf: bytes, pos: int, descriptors: tuple[bytes, ...]) -> int | None:
    """The offset of the list inside a described value with one of ``descriptors``, or None."""
    for d in descriptors:
        if buf.startswith(d, pos):
            return pos + len(d)
    return None


def with_default_outcome(body: bytes, outcome: bytes = MODIFIED_DELIVERY_FAILED) -> bytes | None:
    """An attach performative (``body``, starting at its descriptor) rewritten so that a
    receiver's source carries ``outcome`` as its default outcome; ``None`` when nothing is to be
    changed (a sender, no source, or a default outcome already set)."""
    lst = _described_list(body, 0, _ATTACH)
    if lst is None:
        return None
    fields, end = _list_items(body, lst)
    if len(fields) <= _SOURCE_FIELD:
        return None
    rs, re_ = fields[_ROLE]
    if body[rs:re_] not in _TRUE:  # role false = sender: no source outcome to give
        return None
    ss, se = fields[_SOURCE_FIELD]
    src_list = _described_list(body, ss, _SOURCE)
    if src_list is None:  # a null source (or something we do not recognise): leave it be
        return None
    src_fields, src_end = _list_items(body, src_list)
    if src_end != se:
        raise ValueError("source terminus size does not match its fields")
    items = [body[a:b] for a, b in src_fields]
    if len(items) > _DEFAULT_OUTCOME:
        if items[_DEFAULT_OUTCOME] != bytes((_NULL,)):
            return None
        items[_DEFAULT_OUTCOME] = outcome
    else:
        items += [bytes((_NULL,))] * (_DEFAULT_OUTCOME - len(items)) + [outcome]
    source = body[ss:src_list] + _list32(items)
    attach = [body[a:b] for a, b in fields]
    attach[_SOURCE_FIELD] = source
    return body[:lst] + _list32(attach) + body[end:]


def _may_be_attach(data: bytes, pos: int, doff: int, size: int) -> bool:
    """The frame at ``pos`` (its header seen, ``doff`` and ``size`` read from it) is an AMQP
    frame (type 0) whose performative, as far as ``data`` holds it, may be an attach: ``00 53
    12`` or ``00 80 ..`` (a descriptor by name or long code, told apart once whole)."""
    b = pos + doff
    if data[pos + 5] != 0 or size <= doff + 2 or b + 3 > len(data) or data[b] != 0:
        return False
    code = data[b + 1]
    return (code == 0x53 and data[b + 2] == 0x12) or code == 0x80


def _one_plain_frame(data: bytes) -> bool:
    """``data`` is exactly one whole frame, and no attach: nothing in it to edit or hold."""
    n = len(data)
    if n < 8 or data[0] == 0x41:  # ("A": a protocol header)
        return False
    doff = data[4] * 4
    return _U32.unpack_from(data, 0)[0] == n and 8 <= doff <= n and not _may_be_attach(data, 0, doff, n)


class OutgoingFrames:
    """Follows the frame boundaries of one connection's outgoing stream and edits attach frames.

    :meth:`feed` takes what proton produced, in order, and returns what to write. Bytes of a
    frame that must be seen whole (an attach) are held until the rest arrives; everything else
    passes straight through. Should the stream ever stop making sense as frames (proton does not
    produce such a stream), editing stops and every byte from then on goes out as proton made it:
    a consumer without its default outcome beats a connection that dies.
    """

    __slots__ = ("_held", "_lost", "_skip")

    def __init__(self) -> None:
        self._skip = 0  # bytes of the current frame still to pass through unexamined
        self._held = b""  # the start of a frame not yet seen whole enough to decide on
        self._lost = False

    @property
    def at_frame_boundary(self) -> bool:
        """Nothing held and no frame part-way through: a whole frame that needs no edit may be
        written past :meth:`feed` (``write_through``) without putting it out of step."""
        return not self._skip and not self._held

    def feed(self, data: bytes) -> bytes:
        skip = self._skip
        if not self._held and skip >= len(data):  # the common case: the middle of a big frame
            self._skip = skip - len(data)
            return data
        if not skip and not self._held and not self._lost and _one_plain_frame(data):
            return data  # the other common case: one whole frame (a waiting send's transfer)
        if self._lost:
            return data
        if self._held:
            data = self._held + data
            self._held = b""
        n = len(data)
        pos = skip
        out: list[bytes] = []
        emitted = 0
        unpack = _U32.unpack_from
        while pos + 8 <= n:
            if data[pos] == 0x41:  # "A": a protocol header (no frame is 1 GiB long)
                if not data.startswith(_PROTOCOL_HEADER, pos):
                    return self._lose(out, data, emitted)
                pos += 8
                continue
            size = unpack(data, pos)[0]
            doff = data[pos + 4] * 4
            if size < 8 or doff < 8 or doff > size:
                return self._lose(out, data, emitted)
            b = pos + doff
            if _may_be_attach(data, pos, doff, size):
                if pos + size > n:  # wait for the whole frame
                    break
                if data[b + 1] == 0x53 or data.startswith(_ATTACH[1], b):
                    edited = self._edit(data, pos, doff, size)
                    if edited is not None:
                        out.append(data[emitted:pos])
                        out.append(edited)
                        emitted = pos + size
            elif data[pos + 5] == 0 and size > doff and b + 3 > n:
                break  # cannot tell yet whether it is an attach
            pos += size
        if pos > n:  # the last frame runs on into later output
            self._skip = pos - n
            pos = n
        else:
            self._skip = 0
            self._held = data[pos:]
        out.append(data[emitted:pos])
        return b"".join(out)

    def _lose(self, out: list[bytes], data: bytes, emitted: int) -> bytes:
        """The stream stopped making sense as frames: send the rest as it is from now on."""
        self._lost = True
        self._held = b""
        self._skip = 0
        out.append(data[emitted:])
        return b"".join(out)

    @staticmethod
    def _edit(data: bytes, pos: int, doff: int, size: int) -> bytes | None:
        """The attach frame at ``pos`` with the default outcome spliced in, or None to send it
        as it is (nothing to change, or a body this code cannot follow)."""
        try:
            body = with_default_outcome(data[pos + doff : pos + size])
        except (ValueError, IndexError, struct.error, JMSException):
            return None
        if body is None:
            return None
        header = bytearray(data[pos : pos + doff])
        header[0:4] = _U32.pack(doff + len(body))
        return bytes(header) + body
