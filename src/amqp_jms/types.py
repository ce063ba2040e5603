"""Typed scalar values shared by the message model, the mapping, the selector engine and MQ.

Python has one ``int``, one ``float`` and one ``str``; JMS has byte/short/int/long, float/double
and char, and AMQP adds unsigned integers, timestamps, symbols and described values. A property
set with ``set_byte_property`` must stay a byte all the way to the wire and back, so values carry
their type as a subclass of the Python builtin. They *are* ints/floats/strs (arithmetic, hashing,
comparison and JSON all just work) and cost one ``__new__`` each.

The plain builtins have fixed meanings:

=============  =====================  =============
Python value   JMS type               AMQP type
=============  =====================  =============
``bool``       boolean                boolean
``int``        long                   long
``float``      double                 double
``str``        String                 string
``bytes``      byte[]                 binary
``None``       null                   null
=============  =====================  =============

and the subclasses below add the rest. Constructors check the range and raise ``ValueError``
(the message model turns that into ``MessageFormatException`` where JMS says so). This module
knows nothing of proton; the mapping converts these to and from the wire.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

__all__ = [
    "UUID",
    "Byte",
    "Char",
    "Decimal32",
    "Decimal64",
    "Decimal128",
    "Described",
    "Double",
    "Float",
    "Int",
    "Long",
    "Short",
    "Symbol",
    "Timestamp",
    "UByte",
    "UInt",
    "ULong",
    "UShort",
    "jms_type_name",
]

UUID = uuid.UUID

_F32 = struct.Struct(">f")


def _ranged(cls: type, lo: int, hi: int, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"{cls.__name__} needs an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{value} is out of range for {cls.__name__} ({lo}..{hi})")
    return value


class Byte(int):
    """JMS ``byte`` / AMQP ``byte``: signed 8-bit."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> Byte:
        return int.__new__(cls, _ranged(cls, -128, 127, value))

    def __repr__(self) -> str:
        return f"Byte({int(self)})"


class Short(int):
    """JMS ``short`` / AMQP ``short``: signed 16-bit."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> Short:
        return int.__new__(cls, _ranged(cls, -(2**15), 2**15 - 1, value))

    def __repr__(self) -> str:
        return f"Short({int(self)})"


class Int(int):
    """JMS ``int`` / AMQP ``int``: signed 32-bit."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> Int:
        return int.__new__(cls, _ranged(cls, -(2**31), 2**31 - 1, value))

    def __repr__(self) -> str:
        return f"Int({int(self)})"


class Long(int):
    """An explicit JMS ``long`` (a plain ``int`` means the same; this one range-checks)."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> Long:
        return int.__new__(cls, _ranged(cls, -(2**63), 2**63 - 1, value))

    def __repr__(self) -> str:
        return f"Long({int(self)})"


class UByte(int):
    """AMQP ``ubyte`` (no JMS twin; kept so received application properties round-trip)."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> UByte:
        return int.__new__(cls, _ranged(cls, 0, 255, value))

    def __repr__(self) -> str:
        return f"UByte({int(self)})"


class UShort(int):
    """AMQP ``ushort``."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> UShort:
        return int.__new__(cls, _ranged(cls, 0, 2**16 - 1, value))

    def __repr__(self) -> str:
        return f"UShort({int(self)})"


class UInt(int):
    """AMQP ``uint``."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> UInt:
        return int.__new__(cls, _ranged(cls, 0, 2**32 - 1, value))

    def __repr__(self) -> str:
        return f"UInt({int(self)})"


class ULong(int):
    """AMQP ``ulong``."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> ULong:
        return int.__new__(cls, _ranged(cls, 0, 2**64 - 1, value))

    def __repr__(self) -> str:
        return f"ULong({int(self)})"


class Timestamp(int):
    """AMQP ``timestamp``: milliseconds since the Unix epoch (signed 64-bit)."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> Timestamp:
        return int.__new__(cls, _ranged(cls, -(2**63), 2**63 - 1, value))

    def __repr__(self) -> str:
        return f"Timestamp({int(self)})"


class Float(float):
    """JMS ``float`` / AMQP ``float``: the value is rounded to IEEE 754 binary32 on construction,
    so widening to double gives what Java gives (``Float(1.1) == 1.100000023841858``)."""

    __slots__ = ()

    def __new__(cls, value: Any = 0.0) -> Float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"Float needs a number, not {type(value).__name__}")
        try:
            rounded = _F32.unpack(_F32.pack(float(value)))[0]
        except OverflowError:
            raise ValueError(f"{value} is out of range for a 32-bit float") from None
        return float.__new__(cls, rounded)

    def __repr__(self) -> str:
        return f"Float({float(self)!r})"


class Double(float):
    """An explicit JMS ``double`` (a plain ``float`` means the same)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Double({float(self)!r})"


class Char(str):
    """JMS ``char`` / AMQP ``char``: exactly one character."""

    __slots__ = ()

    def __new__(cls, value: Any) -> Char:
        if not isinstance(value, str):
            raise TypeError(f"Char needs a 1-character str, not {type(value).__name__}")
        if len(value) != 1:
            raise ValueError(f"Char needs exactly one character, got {len(value)}")
        return str.__new__(cls, value)

    def __repr__(self) -> str:
        return f"Char({str(self)!r})"


class Symbol(str):
    """AMQP ``symbol``: an ASCII name."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Symbol({str(self)!r})"


class _DecimalBytes(bytes):
    __slots__ = ()
    size = 0

    def __new__(cls, value: bytes) -> _DecimalBytes:
        if len(value) != cls.size:
            raise ValueError(f"{cls.__name__} needs {cls.size} bytes, got {len(value)}")
        return bytes.__new__(cls, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({bytes(self).hex()})"


class Decimal32(_DecimalBytes):
    """AMQP ``decimal32``, kept as its 4 IEEE 754 bytes (no arithmetic is ever done on it)."""

    size = 4


class Decimal64(_DecimalBytes):
    """AMQP ``decimal64``, kept as its 8 bytes."""

    size = 8


class Decimal128(_DecimalBytes):
    """AMQP ``decimal128``, kept as its 16 bytes."""

    size = 16


class Described:
    """An AMQP described value: a descriptor (``ULong`` or ``Symbol``) and a value."""

    __slots__ = ("descriptor", "value")

    def __init__(self, descriptor: Any, value: Any) -> None:
        self.descriptor = descriptor
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Described):
            return NotImplemented
        return (
            type(self.descriptor) is type(other.descriptor)
            and self.descriptor == other.descriptor
            and self.value == other.value
        )

    def __hash__(self) -> int:
        return hash((self.descriptor, repr(self.value)))

    def __repr__(self) -> str:
        return f"Described({self.descriptor!r}, {self.value!r})"


_JMS_NAMES: dict[type, str] = {
    bool: "boolean",
    Byte: "byte",
    Short: "short",
    Int: "int",
    int: "long",
    Long: "long",
    Float: "float",
    float: "double",
    Double: "double",
    Char: "char",
    str: "String",
    bytes: "byte[]",
}


def jms_type_name(value: object) -> str:
    """The JMS type a value stands for (``"byte"``, ``"String"``, ...), or its AMQP/Python name."""
    if value is None:
        return "null"
    return _JMS_NAMES.get(type(value)) or type(value).__name__
