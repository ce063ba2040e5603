"""``BytesMessage``: a stream of uninterpreted bytes, typed like Java's DataOutput/DataInput.

Values are big-endian, as Java writes them, so a Java client reading with ``readInt`` gets what
``write_int`` wrote here. Strings go through ``write_utf``/``read_utf`` (Java's modified UTF-8
with a 2-byte length). A read that would run past the end raises ``MessageEOFException`` and
leaves the position where it was.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from ..exceptions import (
    MessageEOFException,
    MessageFormatException,
    MessageNotReadableException,
)
from ..types import Byte, Char, Float, Int, Short
from . import _conversions as cv
from ._base import Message
from ._data import BodyKind
from ._mutf8 import decode_modified_utf8, encode_modified_utf8

__all__ = ["BytesMessage"]

_B = struct.Struct(">b")
_BU = struct.Struct(">B")
_H = struct.Struct(">h")
_HU = struct.Struct(">H")
_I = struct.Struct(">i")
_Q = struct.Struct(">q")
_F = struct.Struct(">f")
_D = struct.Struct(">d")


class BytesMessage(Message):
    """A message whose body is bytes (``javax.jms.BytesMessage``).

    A new message is write-only; ``reset()`` makes it readable from the start (and read-only).
    ``BytesMessage(b"...")`` starts with those bytes written.
    """

    __slots__ = ("_buf", "_pos", "_reading")
    jms_type = "BytesMessage"
    _buf: bytes | bytearray
    _reading: bool
    _pos: int

    def __init__(self, data: bytes | bytearray | memoryview | None = None) -> None:
        self._init_headers()
        self._buf = bytearray(data) if data is not None else bytearray()
        self._reading = False
        self._pos = 0

    def _init_body(self) -> None:
        self._buf = bytearray()
        self._reading = False
        self._pos = 0

    # ------------------------------------------------------------------ provider SPI

    def _body_bytes(self) -> bytes:
        """The whole body, whatever the read/write mode and position."""
        return bytes(self._buf)

    def _set_body_bytes(self, data: bytes) -> None:
        """Replace the body (the decoder's path; no state checks)."""
        self._buf = data if type(data) is bytes else bytes(data)
        self._pos = 0

    def _mark_received(self) -> None:
        self._props_ro = True
        self._body_ro = True
        self._reading = True
        self._pos = 0
        if type(self._buf) is not bytes:
            self._buf = bytes(self._buf)

    _body_kind = BodyKind.BYTES

    def _body_snapshot(self) -> bytes:
        return bytes(self._buf)

    def _adopt_received_body(self, body: Any) -> None:
        self._buf = body if type(body) is bytes else bytes(body)
        self._pos = 0
        self._reading = True

    def _restore_body(self, body: Any) -> None:
        self._buf = bytearray(body)
        self._reading = False
        self._pos = 0

    def _has_body(self) -> bool:
        return len(self._buf) > 0

    def _body_value(self) -> Any:
        return bytes(self._buf)

    # ------------------------------------------------------------------ state

    def reset(self) -> None:
        """Make the body read-only and put the read position at the first byte."""
        self._reading = True
        self._body_ro = True
        self._pos = 0
        if type(self._buf) is not bytes:
            self._buf = bytes(self._buf)

    def get_body_length(self) -> int:
        """The number of bytes in the body (only while reading, as in Java)."""
        self._check_readable()
        return len(self._buf)

    def _check_readable(self) -> None:
        if not self._reading:
            raise MessageNotReadableException("the BytesMessage is write-only; call reset() to read it")

    def _take(self, size: int, what: str) -> int:
        """Position of the next ``size`` bytes, advancing past them; EOF leaves it unchanged."""
        if not self._reading:
            raise MessageNotReadableException("the BytesMessage is write-only; call reset() to read it")
        pos = self._pos
        if pos + size > len(self._buf):
            raise MessageEOFException(
                f"end of the BytesMessage reached reading a {what} "
                f"({len(self._buf) - pos} of {size} bytes left)"
            )
        self._pos = pos + size
        return pos

    # ------------------------------------------------------------------ reading

    def read_boolean(self) -> bool:
        return self._buf[self._take(1, "boolean")] != 0

    def read_byte(self) -> Byte:
        return int.__new__(Byte, _B.unpack_from(self._buf, self._take(1, "byte"))[0])

    def read_unsigned_byte(self) -> int:
        return self._buf[self._take(1, "unsigned byte")]

    def read_short(self) -> Short:
        return int.__new__(Short, _H.unpack_from(self._buf, self._take(2, "short"))[0])

    def read_unsigned_short(self) -> int:
        value: int = _HU.unpack_from(self._buf, self._take(2, "unsigned short"))[0]
        return value

    def read_char(self) -> Char:
        """One UTF-16 code unit, as Java's ``readChar`` (a surrogate comes back on its own)."""
        unit = _HU.unpack_from(self._buf, self._take(2, "char"))[0]
        return str.__new__(Char, chr(unit))

    def read_int(self) -> Int:
        return int.__new__(Int, _I.unpack_from(self._buf, self._take(4, "int"))[0])

    def read_long(self) -> int:
        value: int = _Q.unpack_from(self._buf, self._take(8, "long"))[0]
        return value

    def read_float(self) -> Float:
        return float.__new__(Float, _F.unpack_from(self._buf, self._take(4, "float"))[0])

    def read_double(self) -> float:
        value: float = _D.unpack_from(self._buf, self._take(8, "double"))[0]
        return value

    def read_utf(self) -> str:
        """A string written by ``write_utf`` / Java's ``writeUTF`` (2-byte length, modified UTF-8).

        A malformed string is a ``MessageFormatException`` and the position does not move."""
        self._check_readable()
        start = self._pos
        if start + 2 > len(self._buf):
            raise MessageEOFException("end of the BytesMessage reached reading a UTF string length")
        length = _HU.unpack_from(self._buf, start)[0]
        if start + 2 + length > len(self._buf):
            raise MessageEOFException(
                f"end of the BytesMessage reached reading a {length}-byte UTF string"
            )
        try:
            text = decode_modified_utf8(bytes(self._buf[start + 2 : start + 2 + length]))
        except ValueError as exc:
            raise MessageFormatException(f"malformed UTF string in the BytesMessage: {exc}") from exc
        self._pos = start + 2 + length
        return text

    def read_bytes(self, buffer: bytearray | memoryview, length: int | None = None) -> int:
        """Read up to ``length`` (default ``len(buffer)``) bytes into ``buffer``.

        Returns how many were read, or -1 if the end of the body was already reached.
        """
        self._check_readable()
        if buffer is None:
            raise TypeError("read_bytes needs a buffer")
        view = memoryview(buffer)
        if view.readonly:
            raise TypeError("read_bytes needs a writable buffer (a bytearray), not a read-only one")
        if length is None:
            length = len(view)
        elif length < 0 or length > len(view):
            raise ValueError(f"length {length} is outside the buffer of {len(view)} bytes")
        pos = self._pos
        available = len(self._buf) - pos
        if available <= 0:
            return -1 if length > 0 else 0
        count = min(length, available)
        view[:count] = self._buf[pos : pos + count]
        self._pos = pos + count
        return count

    # ------------------------------------------------------------------ writing

    def _append(self, data: bytes) -> None:
        self._check_body_writable()
        buf = self._buf
        if type(buf) is bytes:  # a body set by _set_body_bytes, then made writable again
            buf = self._buf = bytearray(buf)
        buf += data

    def write_boolean(self, value: bool) -> None:
        self._append(b"\x01" if cv.as_boolean(value) else b"\x00")

    def write_byte(self, value: int) -> None:
        self._append(_B.pack(cv.as_byte(value)))

    def write_short(self, value: int) -> None:
        self._append(_H.pack(cv.as_short(value)))

    def write_char(self, value: str) -> None:
        """Write one UTF-16 code unit (Java ``char``); a character beyond U+FFFF does not fit."""
        char = cv.as_char(value)
        if ord(char) > 0xFFFF:
            raise MessageFormatException(
                f"{char!r} is outside the Basic Multilingual Plane and does not fit a Java char"
            )
        self._append(_HU.pack(ord(char)))

    def write_int(self, value: int) -> None:
        self._append(_I.pack(cv.as_int(value)))

    def write_long(self, value: int) -> None:
        self._append(_Q.pack(cv.as_long(value)))

    def write_float(self, value: float) -> None:
        self._append(_F.pack(cv.as_float(value)))

    def write_double(self, value: float) -> None:
        self._append(_D.pack(cv.as_double(value)))

    def write_utf(self, value: str) -> None:
        """Write a 2-byte length and the modified UTF-8 bytes (at most 65535 of them)."""
        if value is None:
            raise TypeError("write_utf cannot write None (Java: NullPointerException)")
        if not isinstance(value, str):
            raise MessageFormatException(f"write_utf needs a str, not {type(value).__name__}")
        data = encode_modified_utf8(value)
        if len(data) > 0xFFFF:
            raise MessageFormatException(
                f"string too long for write_utf: {len(data)} encoded bytes (at most 65535)"
            )
        self._append(_HU.pack(len(data)) + data)

    def write_bytes(
        self, value: bytes | bytearray | memoryview, offset: int = 0, length: int | None = None
    ) -> None:
        """Write ``value[offset:offset+length]`` (the whole of ``value`` by default)."""
        self._append(cv.as_bytes(value, offset, length))

    def write_object(self, value: object) -> None:
        """Write a boxed primitive by its type: ``bool``, ``Byte``, ``Short``, ``Char``, ``Int``,
        ``int`` (long), ``Float``, ``float`` (double), ``str`` (as ``write_utf``), or bytes-like.
        ``None`` is a ``TypeError``; any other type a ``MessageFormatException``."""
        if value is None:
            raise TypeError("a BytesMessage cannot hold a null (Java: NullPointerException)")
        if isinstance(value, (bytes, bytearray, memoryview)):
            self.write_bytes(value)
            return
        kind = cv.kind_of(value)
        writer = _OBJECT_WRITERS.get(kind) if type(value) not in cv._UNSIGNED else None
        if writer is None:
            raise MessageFormatException(
                f"write_object cannot write a {type(value).__name__}: it takes bool, Byte, Short, "
                "Char, Int, int, Float, float, str or bytes"
            )
        writer(self, value)

    def _repr_body(self) -> str:
        mode = f"reading at {self._pos}" if self._reading else "writing"
        return f"{len(self._buf)} bytes ({mode})" if self._buf else ""


_OBJECT_WRITERS: dict[int, Callable[[BytesMessage, Any], None]] = {
    cv.BOOLEAN: BytesMessage.write_boolean,
    cv.BYTE: BytesMessage.write_byte,
    cv.SHORT: BytesMessage.write_short,
    cv.CHAR: BytesMessage.write_char,
    cv.INT: BytesMessage.write_int,
    cv.LONG: BytesMessage.write_long,
    cv.FLOAT: BytesMessage.write_float,
    cv.DOUBLE: BytesMessage.write_double,
    cv.STRING: BytesMessage.write_utf,
}
