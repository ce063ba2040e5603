"""Tables 3.2 and 3.7: which stored JMS type can be read as which, and how values are accepted.

One table serves properties (3.2), MapMessage and StreamMessage (3.7): 3.2 is 3.7 without the
``char`` and ``byte[]`` rows and columns, and no property can hold those types through the JMS
API (a peer's AMQP ``char`` application property is read like a String).

Readers (``read_as_*``) take the stored value and a description of where it came from (used in
error messages: ``"property 'x'"``, ``"map item 'y'"``, ``"stream item 3"``). Writers
(``as_*``) check and wrap what a user passes: a byte stays a ``Byte``, a float becomes a 32-bit
``Float``. Where Java has a primitive parameter, ``None`` is a ``TypeError`` (Java cannot pass
null there); any other wrong type or an out-of-range number is a ``MessageFormatException``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..exceptions import MessageFormatException
from ..types import (
    Byte,
    Char,
    Double,
    Float,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
    jms_type_name,
)
from ._javatext import (
    java_boolean_value_of,
    java_double_to_string,
    java_float_to_string,
    java_parse_double,
    java_parse_float,
    java_parse_integral,
    to_float32,
)

# Kinds: the JMS type a stored value stands for.
BOOLEAN, BYTE, SHORT, CHAR, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, NULL = range(11)

KIND_NAMES = ("boolean", "byte", "short", "char", "int", "long", "float", "double", "String",
              "byte[]", "null")

_KIND_OF_TYPE: dict[type, int] = {
    bool: BOOLEAN,
    Byte: BYTE,
    Short: SHORT,
    Char: CHAR,
    Int: INT,
    int: LONG,
    Long: LONG,
    Float: FLOAT,
    float: DOUBLE,
    Double: DOUBLE,
    str: STRING,
    Symbol: STRING,
    bytes: BYTES,
    type(None): NULL,
    # AMQP types with no JMS twin that a peer may send: read as the JMS type that holds them.
    UByte: SHORT,
    UShort: INT,
    UInt: LONG,
    ULong: LONG,
    Timestamp: LONG,
}

_I8 = (-(2**7), 2**7 - 1)
_I16 = (-(2**15), 2**15 - 1)
_I32 = (-(2**31), 2**31 - 1)
_I64 = (-(2**63), 2**63 - 1)


def kind_of(value: object) -> int:
    """The JMS kind of a stored value; ``-1`` for values no JMS getter can convert."""
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is not None:
        return kind
    # Subclasses (a user's own int subclass, say) fall back to their builtin's meaning.
    for base, base_kind in ((bool, BOOLEAN), (int, LONG), (float, DOUBLE), (str, STRING),
                            (bytes, BYTES)):
        if isinstance(value, base):
            return base_kind
    return -1


#: Where a value came from, for error messages: ``("property", name)``, ``("map item", name)``
#: or a stream position (int). Formatted only when an error is raised.
Where = tuple[str, str] | int | str


def describe(where: Where) -> str:
    if type(where) is tuple:
        return f"{where[0]} {where[1]!r}"
    if type(where) is int:
        return f"stream item {where}"
    return str(where)


def _cannot(value: object, kind: int, target: str, where: Where) -> MessageFormatException:
    have = KIND_NAMES[kind] if kind >= 0 else jms_type_name(value)
    article = "an" if have[:1] in ("a", "e", "i", "o", "u") else "a"
    return MessageFormatException(f"{describe(where)} is {article} {have}; it cannot be read as {target}")


# --------------------------------------------------------------------------- readers (getters)


def read_as_boolean(value: Any, where: Where) -> bool:
    kind = kind_of(value)
    if kind == BOOLEAN:
        return bool(value)
    if kind == STRING or kind == NULL:
        return java_boolean_value_of(value)
    raise _cannot(value, kind, "boolean", where)


def read_as_byte(value: Any, where: Where) -> Byte:
    kind = kind_of(value)
    if kind == BYTE:
        return value if type(value) is Byte else Byte(value)
    if kind == STRING or kind == NULL:
        return int.__new__(Byte, java_parse_integral(value, *_I8, "byte"))
    raise _cannot(value, kind, "byte", where)


def read_as_short(value: Any, where: Where) -> Short:
    kind = kind_of(value)
    if kind == SHORT or kind == BYTE:
        return value if type(value) is Short else int.__new__(Short, value)
    if kind == STRING or kind == NULL:
        return int.__new__(Short, java_parse_integral(value, *_I16, "short"))
    raise _cannot(value, kind, "short", where)


def read_as_char(value: Any, where: Where) -> Char:
    kind = kind_of(value)
    if kind == CHAR:
        return value if type(value) is Char else Char(value)
    if kind == NULL:
        raise TypeError(
            f"{describe(where)} is null; a null cannot be read as char (Java: NullPointerException)"
        )
    raise _cannot(value, kind, "char", where)


def read_as_int(value: Any, where: Where) -> Int:
    kind = kind_of(value)
    if kind == INT or kind == SHORT or kind == BYTE:
        return value if type(value) is Int else int.__new__(Int, value)
    if kind == STRING or kind == NULL:
        return int.__new__(Int, java_parse_integral(value, *_I32, "int"))
    raise _cannot(value, kind, "int", where)


def read_as_long(value: Any, where: Where) -> int:
    kind = kind_of(value)
    if LONG >= kind >= BYTE and kind != CHAR:
        return value if type(value) is int else int(value)
    if kind == STRING or kind == NULL:
        return java_parse_integral(value, *_I64, "long")
    raise _cannot(value, kind, "long", where)


def read_as_float(value: Any, where: Where) -> Float:
    kind = kind_of(value)
    if kind == FLOAT:
        return value if type(value) is Float else float.__new__(Float, value)
    if kind == STRING or kind == NULL:
        return float.__new__(Float, java_parse_float(value))
    raise _cannot(value, kind, "float", where)


def read_as_double(value: Any, where: Where) -> float:
    kind = kind_of(value)
    if kind == DOUBLE or kind == FLOAT:
        return value if type(value) is float else float(value)
    if kind == STRING or kind == NULL:
        return java_parse_double(value)
    raise _cannot(value, kind, "double", where)


def read_as_string(value: Any, where: Where) -> str | None:
    kind = kind_of(value)
    if kind == STRING:
        return value if type(value) is str else str.__str__(value)
    if kind == NULL:
        return None
    if kind == BOOLEAN:
        return "true" if value else "false"
    if kind == FLOAT:
        return java_float_to_string(value)
    if kind == DOUBLE:
        return java_double_to_string(value)
    if kind == CHAR:
        return str.__str__(value)
    if kind != BYTES and kind >= 0:
        return str(int(value))
    raise _cannot(value, kind, "String", where)


def read_as_bytes(value: Any, where: Where) -> bytes | None:
    kind = kind_of(value)
    if kind == BYTES:
        return value if type(value) is bytes else bytes(value)
    if kind == NULL:
        return None
    raise _cannot(value, kind, "byte[]", where)


# --------------------------------------------------------------------------- writers (setters)


def _need(value: object, what: str) -> MessageFormatException:
    if value is None:
        raise TypeError(f"a {what} value cannot be None")
    return MessageFormatException(f"a {what} value is needed, not {jms_type_name(value)} {value!r:.40}")


def _integral(value: Any, lo: int, hi: int, what: str) -> int:
    if type(value) is bool or not isinstance(value, int):
        raise _need(value, what)
    if not lo <= value <= hi:
        raise MessageFormatException(f"{value} is out of range for a {what} ({lo}..{hi})")
    return value


def as_boolean(value: Any) -> bool:
    if type(value) is bool:
        return value
    raise _need(value, "boolean")


_new_int = int.__new__


_J = TypeVar("_J", Byte, Short, Int)


def _int_writer(cls: type[_J], lo: int, hi: int, what: str) -> Callable[[Any], _J]:
    """The writer of one of Java's 8/16/32-bit integers: a plain int in range becomes ``cls``,
    a ``cls`` passes as it is, anything else goes through ``_integral``'s checks."""

    def write(value: Any) -> _J:
        if type(value) is int and lo <= value <= hi:
            return _new_int(cls, value)
        if type(value) is cls:
            return value
        return _new_int(cls, _integral(value, lo, hi, what))

    write.__name__ = write.__qualname__ = f"as_{what}"
    return write


as_byte = _int_writer(Byte, *_I8, "byte")
as_short = _int_writer(Short, *_I16, "short")
as_int = _int_writer(Int, *_I32, "int")


def as_long(value: Any) -> int:
    if type(value) is int and -9223372036854775808 <= value <= 9223372036854775807:
        return value
    return int(_integral(value, *_I64, "long"))


def as_float(value: Any) -> Float:
    if type(value) is Float:
        return value
    if type(value) is bool or not isinstance(value, (int, float)):
        raise _need(value, "float")
    try:
        as_double = float(value)
    except OverflowError:
        raise MessageFormatException(f"{value} is out of range for a float") from None
    rounded = to_float32(as_double)
    if rounded in (float("inf"), float("-inf")) and as_double == as_double and rounded != as_double:
        raise MessageFormatException(f"{value} is out of range for a float (±3.4028235E38)")
    return float.__new__(Float, rounded)


def as_double(value: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is bool or not isinstance(value, (int, float)):
        raise _need(value, "double")
    try:
        return float(value)
    except OverflowError:
        raise MessageFormatException(f"{value} is out of range for a double") from None


def as_char(value: Any) -> Char:
    if type(value) is Char:
        return value
    if not isinstance(value, str) or len(value) != 1:
        if isinstance(value, str):
            raise MessageFormatException(f"a char value must be one character, got {len(value)}")
        raise _need(value, "char")
    return str.__new__(Char, value)


def as_string(value: Any) -> str | None:
    """Strings may be null (JMS §3.12); a ``Symbol``/``Char`` given here becomes a plain str."""
    if type(value) is str or value is None:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    raise MessageFormatException(f"a String value is needed, not {jms_type_name(value)}")


def as_bytes(value: Any, offset: int = 0, length: int | None = None) -> bytes:
    """Copy ``value[offset:offset+length]`` (a bytes-like object) into an immutable ``bytes``."""
    if value is None:
        raise TypeError("a byte[] value cannot be None")
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise MessageFormatException(f"a byte[] value is needed, not {jms_type_name(value)}")
    if offset == 0 and length is None:
        return bytes(value)
    size = len(value)
    if length is None:
        length = size - offset
    if offset < 0 or length < 0 or offset + length > size:
        raise ValueError(f"offset {offset} and length {length} are outside a {size}-byte array")
    return bytes(value[offset : offset + length])


def as_property_object(value: Any) -> Any:
    """``setObjectProperty``: Boolean, Byte, Short, Integer, Long, Float, Double, String (§3.5.5).

    ``None`` is accepted and stored (reading it back gives null). Anything else, including a
    ``Char`` or bytes, is a ``MessageFormatException``.
    """
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is None or kind == CHAR or kind == BYTES or type(value) in _UNSIGNED:
        raise MessageFormatException(
            f"a property value must be boolean, byte, short, int, long, float, double or String, "
            f"not {jms_type_name(value)}"
        )
    return _canonical(value, kind)


def as_body_object(value: Any) -> Any:
    """``MapMessage.setObject`` / ``StreamMessage.writeObject``: the property types plus char and
    byte[] (a bytes-like value is copied). ``None`` is stored as null."""
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is None or type(value) in _UNSIGNED:
        raise MessageFormatException(
            "a value must be boolean, byte, short, char, int, long, float, double, String or "
            f"byte[], not {jms_type_name(value)}"
        )
    return _canonical(value, kind)


_UNSIGNED = frozenset({UByte, UShort, UInt, ULong, Timestamp})


def _canonical(value: Any, kind: int) -> Any:
    if kind == LONG:
        return as_long(value)
    if kind == DOUBLE:
        return float(value)
    if kind == STRING:
        return str.__str__(value)
    return value
