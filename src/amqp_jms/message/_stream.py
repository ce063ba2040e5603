"""``StreamMessage``: a sequence of typed values, written then read in order (JMS table 3.7).

A read that fails with ``MessageFormatException`` or ``NumberFormatException`` leaves the read
position where it was, so the same item can be read again as another type (JMS §3.11.3).
``read_bytes`` may take a byte[] item in several calls; until that item is used up, reading
anything else is a ``MessageFormatException`` (the javadoc rule, as Qpid JMS and ActiveMQ do).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ..exceptions import MessageEOFException, MessageFormatException, MessageNotReadableException
from ..types import Byte, Char, Float, Int, Short
from . import _conversions as cv
from ._base import Message
from ._data import BodyKind

__all__ = ["StreamMessage"]

R = TypeVar("R")


class StreamMessage(Message):
    """A message whose body is an ordered list of typed values (``javax.jms.StreamMessage``).

    A new message is write-only; ``reset()`` makes it readable from the start (and read-only).
    ``StreamMessage([1, "a", Byte(2)])`` writes the items with ``write_object``.
    """

    __slots__ = ("_bytes_left", "_items", "_pos", "_reading")
    jms_type = "StreamMessage"
    _items: list[Any]
    _reading: bool
    _pos: int
    _bytes_left: int  # -1 unless a byte[] item is part-way through read_bytes

    def __init__(self, items: Iterable[Any] | None = None) -> None:
        self._init_headers()
        self._init_body()
        if items is not None:
            for item in items:
                self.write_object(item)

    def _init_body(self) -> None:
        self._items = []
        self._reading = False
        self._pos = 0
        self._bytes_left = -1

    def _mark_received(self) -> None:
        self._props_ro = True
        self._body_ro = True
        self._reading = True
        self._pos = 0
        self._bytes_left = -1

    _body_kind = BodyKind.STREAM

    def _body_snapshot(self) -> list[Any]:
        return list(self._items)

    def _body_view(self) -> list[Any]:
        return self._items

    def _adopt_received_body(self, body: Any) -> None:
        self._items = body
        self._reading = True
        self._pos = 0
        self._bytes_left = -1

    def _restore_body(self, body: Any) -> None:
        self._items = list(body)
        self._reading = False
        self._pos = 0
        self._bytes_left = -1

    def _has_body(self) -> bool:
        return bool(self._items)

    def is_body_assignable_to(self, cls: type) -> bool:
        """Always ``False``: a StreamMessage body cannot be returned by ``get_body``."""
        if not isinstance(cls, type):
            raise TypeError(f"is_body_assignable_to needs a type, not {cls!r}")
        return False

    def get_body(self, cls: type[R]) -> R | None:
        """Always a ``MessageFormatException`` (JMS: getBody is not supported on a StreamMessage)."""
        if not isinstance(cls, type):
            raise TypeError(f"get_body needs a type, not {cls!r}")
        raise MessageFormatException("the body of a StreamMessage cannot be returned by get_body")

    def reset(self) -> None:
        """Make the body read-only and put the read position at the first item."""
        self._reading = True
        self._body_ro = True
        self._pos = 0
        self._bytes_left = -1

    # ------------------------------------------------------------------ writing

    def _write(self, value: Any) -> None:
        self._check_body_writable()
        self._items.append(value)

    def write_boolean(self, value: bool) -> None:
        self._write(cv.as_boolean(value))

    def write_byte(self, value: int) -> None:
        self._write(cv.as_byte(value))

    def write_short(self, value: int) -> None:
        self._write(cv.as_short(value))

    def write_char(self, value: str) -> None:
        self._write(cv.as_char(value))

    def write_int(self, value: int) -> None:
        self._write(cv.as_int(value))

    def write_long(self, value: int) -> None:
        self._write(cv.as_long(value))

    def write_float(self, value: float) -> None:
        self._write(cv.as_float(value))

    def write_double(self, value: float) -> None:
        self._write(cv.as_double(value))

    def write_string(self, value: str | None) -> None:
        self._write(cv.as_string(value))

    def write_bytes(
        self, value: bytes | bytearray | memoryview | None, offset: int = 0, length: int | None = None
    ) -> None:
        """Write a copy of ``value[offset:offset+length]`` as one byte[] item (``None``: a null)."""
        self._write(None if value is None else cv.as_bytes(value, offset, length))

    def write_object(self, value: object) -> None:
        """Write a typed value (``bool``, ``Byte``, ``Short``, ``Char``, ``Int``, ``int``,
        ``Float``, ``float``, ``str``, bytes-like or ``None``)."""
        self._write(cv.as_body_object(value))

    # ------------------------------------------------------------------ reading

    def _read(self, convert: Callable[[Any, cv.Where], R]) -> R:
        if not self._reading:
            raise MessageNotReadableException("the StreamMessage is write-only; call reset() to read it")
        if self._bytes_left != -1:
            raise MessageFormatException(
                "a byte[] item is part-way through read_bytes; read it to the end first"
            )
        pos = self._pos
        if pos >= len(self._items):
            raise MessageEOFException("end of the StreamMessage reached")
        value = convert(self._items[pos], pos)
        self._pos = pos + 1  # only after a successful conversion (JMS §3.11.3)
        return value

    def read_boolean(self) -> bool:
        return self._read(cv.read_as_boolean)

    def read_byte(self) -> Byte:
        return self._read(cv.read_as_byte)

    def read_short(self) -> Short:
        return self._read(cv.read_as_short)

    def read_char(self) -> Char:
        return self._read(cv.read_as_char)

    def read_int(self) -> Int:
        return self._read(cv.read_as_int)

    def read_long(self) -> int:
        return self._read(cv.read_as_long)

    def read_float(self) -> Float:
        return self._read(cv.read_as_float)

    def read_double(self) -> float:
        return self._read(cv.read_as_double)

    def read_string(self) -> str | None:
        return self._read(cv.read_as_string)

    def read_object(self) -> Any:
        """The next item as stored (a byte[] item as a ``bytes`` copy); ``None`` for a null."""
        return self._read(_identity)

    def read_bytes(self, buffer: bytearray | memoryview) -> int:
        """Read (part of) a byte[] item into ``buffer``; returns the number of bytes copied.

        Call again while it returns ``len(buffer)``: it returns fewer (maybe 0) when the item is
        used up, or -1 when a previous call had already taken the last bytes. A null item gives
        -1 at once. ``MessageEOFException`` at the end of the stream.
        """
        if not self._reading:
            raise MessageNotReadableException("the StreamMessage is write-only; call reset() to read it")
        if buffer is None:
            raise TypeError("read_bytes needs a buffer")
        view = memoryview(buffer)
        if view.readonly:
            raise TypeError("read_bytes needs a writable buffer (a bytearray), not a read-only one")
        pos = self._pos
        if self._bytes_left == -1:
            if pos >= len(self._items):
                raise MessageEOFException("end of the StreamMessage reached")
            item = self._items[pos]
            if item is None:
                self._pos = pos + 1
                return -1
            if not isinstance(item, bytes):
                raise cv._cannot(item, cv.kind_of(item), "byte[]", pos)
            self._bytes_left = len(item)
        elif self._bytes_left == 0:
            # The last call filled the buffer exactly and took the last bytes.
            self._bytes_left = -1
            self._pos = pos + 1
            return -1
        item = self._items[pos]
        start = len(item) - self._bytes_left
        count = min(len(view), self._bytes_left)
        view[:count] = item[start : start + count]
        self._bytes_left -= count
        if self._bytes_left == 0 and count < len(view):
            self._bytes_left = -1
            self._pos = pos + 1
        return count

    def _repr_body(self) -> str:
        if not self._items:
            return ""
        text = repr(self._items)
        mode = f"reading at {self._pos}" if self._reading else "writing"
        return f"items={text[:120]}{'…' if len(text) > 120 else ''} ({mode})"


def _identity(value: Any, where: cv.Where) -> Any:
    return value
