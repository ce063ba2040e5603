"""Selector value semantics: Java types of property values, numeric promotion, three-valued compare.

A property value's selector type is its JMS type (``amqp_jms.types``): ``Byte``/``Short``/``Int``
(and the AMQP ``UByte``/``UShort``) are Java ``int`` for arithmetic, plain ``int``/``Long``/
``UInt``/``ULong``/``Timestamp`` are ``long``, ``Float`` is ``float``, plain ``float``/``Double``
are ``double``, any ``str`` is a String, ``bool`` is boolean, ``None`` is NULL; anything else
(``bytes``, UUID, lists, ...) is a type no selector operation applies to.

Java binary numeric promotion decides both arithmetic and comparisons: double if either side is
double, else float (binary32) if either is float, else long if either is long, else int. Integer
arithmetic wraps like Java (32-bit for int, 64-bit for long); integer division truncates toward
zero; integer division by zero is NULL (Java would throw); floating division by zero gives
IEEE infinity/NaN like Java.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from typing import Any

from ..types import Byte, Char, Double, Float, Int, Long, Short, Symbol, Timestamp, UByte, UInt, ULong, UShort

__all__ = [
    "CMP_OPS",
    "B",
    "D",
    "F",
    "I",
    "L",
    "N",
    "O",
    "S",
    "arith",
    "classify",
    "compare",
    "delivery_mode",
    "negate",
    "priority",
    "to_f32",
]

# kinds: Java int / long / float / double, String, boolean, NULL, other
I, L, F, D, S, B, N, O = "int", "long", "float", "double", "string", "boolean", "null", "other"
NUMERIC = frozenset({I, L, F, D})

KINDS: dict[type, str] = {
    int: L,
    Long: L,
    UInt: L,
    ULong: L,
    Timestamp: L,
    Int: I,
    Short: I,
    Byte: I,
    UByte: I,
    UShort: I,
    float: D,
    Double: D,
    Float: F,
    str: S,
    Symbol: S,
    Char: S,
    bool: B,
    type(None): N,
}

CMP_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

_F32 = struct.Struct("<f")


def classify(value: object) -> str:
    """The selector kind of ``value`` (one of I L F D S B N O)."""
    kind = KINDS.get(value.__class__)
    if kind is not None:
        return kind
    if isinstance(value, bool):
        return B
    if isinstance(value, int):
        return I if isinstance(value, (Int, Short, Byte, UByte, UShort)) else L
    if isinstance(value, float):
        return F if isinstance(value, Float) else D
    if isinstance(value, str):
        return S
    return O


def _f32_of_float(x: float) -> float:
    try:
        return float(_F32.unpack(_F32.pack(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def to_f32(x: float | int) -> float:
    """Round to binary32 like a Java widening/narrowing to ``float`` (ints: one correct rounding)."""
    if isinstance(x, float):
        return _f32_of_float(x)
    if -(2**53) <= x <= 2**53:
        return _f32_of_float(float(x))
    # float(x) would round once and binary32 again: round to 24 bits exactly instead
    sign = -1 if x < 0 else 1
    mag = abs(x)
    shift = mag.bit_length() - 24
    q, r = divmod(mag, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return _f32_of_float(float(sign * q * (1 << shift)))


def _make_float(x: float) -> Float:
    return float.__new__(Float, _f32_of_float(x))


def _wrap32(x: int) -> Int:
    return int.__new__(Int, (x + 2**31) % 2**32 - 2**31)


def _wrap64(x: int) -> int:
    return (x + 2**63) % 2**64 - 2**63


def _promote(ka: str, kb: str) -> str:
    if ka == D or kb == D:
        return D
    if ka == F or kb == F:
        return F
    if ka == L or kb == L:
        return L
    return I


def compare(op: str, a: object, b: object) -> bool | None:
    """``a op b`` in three-valued logic: NULL -> None, unlike types -> False."""
    if a is None or b is None:
        return None
    ka, kb = classify(a), classify(b)
    if ka in NUMERIC and kb in NUMERIC:
        k = _promote(ka, kb)
        if k == D:
            return CMP_OPS[op](float(a), float(b))  # type: ignore[arg-type]
        if k == F:
            return CMP_OPS[op](to_f32(a), to_f32(b))  # type: ignore[arg-type]
        return CMP_OPS[op](int(a), int(b))  # type: ignore[call-overload]
    if ka == kb and ka in (S, B):
        if op == "=":
            return a == b
        if op == "<>":
            return a != b
    return False


def _fdiv(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def arith(op: str, a: object, b: object) -> object:
    """``a op b`` with Java numeric promotion; None when NULL, non-numeric or int division by 0."""
    if a is None or b is None:
        return None
    ka, kb = classify(a), classify(b)
    if ka not in NUMERIC or kb not in NUMERIC:
        return None
    k = _promote(ka, kb)
    if k == D or k == F:
        x, y = (float(a), float(b)) if k == D else (to_f32(a), to_f32(b))  # type: ignore[arg-type]
        if op == "+":
            r = x + y
        elif op == "-":
            r = x - y
        elif op == "*":
            r = x * y
        else:
            r = _fdiv(x, y)
        return r if k == D else _make_float(r)
    m, n = int(a), int(b)  # type: ignore[call-overload]
    if op == "+":
        v = m + n
    elif op == "-":
        v = m - n
    elif op == "*":
        v = m * n
    else:
        if n == 0:
            return None
        q = abs(m) // abs(n)
        v = -q if (m < 0) != (n < 0) else q
    return _wrap32(v) if k == I else _wrap64(v)


def negate(op: str, a: object) -> object:
    """Unary ``+``/``-`` with unary numeric promotion (byte/short -> int); None if not numeric."""
    if a is None:
        return None
    k = classify(a)
    if k not in NUMERIC:
        return None
    if k == D:
        return float(a) if op == "+" else -float(a)  # type: ignore[arg-type]
    if k == F:
        return _make_float(float(a) if op == "+" else -float(a))  # type: ignore[arg-type]
    v = int(a) if op == "+" else -int(a)  # type: ignore[call-overload]
    return _wrap32(v) if k == I else _wrap64(v)


def delivery_mode(value: object) -> str | None:
    """JMSDeliveryMode as the selector sees it: 2 -> 'PERSISTENT', 1 -> 'NON_PERSISTENT'."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return "PERSISTENT" if value == 2 else "NON_PERSISTENT" if value == 1 else None
    return None


def priority(value: object) -> object:
    """JMSPriority is a Java ``int`` (whatever int type the message model returns)."""
    if isinstance(value, int) and value.__class__ is int and -(2**31) <= value < 2**31:
        return int.__new__(Int, value)
    return value
