"""Java's number/boolean text rules, so conversions through String give what a Java client gets.

JMS defines the String conversions of tables 3.2 and 3.7 by Java's ``valueOf(String)`` and
``toString`` methods. Python's ``int()``/``float()``/``repr`` differ in the corners (whitespace,
underscores, ``inf``, ``1e10`` vs ``1.0E10``), and a property set by a Java client and read here
(or the reverse) must agree, so those rules are written out here.
"""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal
from fractions import Fraction

from ..exceptions import NumberFormatException

__all__ = [
    "java_boolean_value_of",
    "java_double_to_string",
    "java_float_to_string",
    "java_parse_double",
    "java_parse_float",
    "java_parse_integral",
    "to_float32",
]

_F32 = struct.Struct(">f")
_U32 = struct.Struct(">I")

# Integer.parseInt: optional sign, then one or more digits (Character.digit accepts any Unicode
# decimal digit, as Python's \d and int() do). No whitespace, no underscores.
_INTEGRAL = re.compile(r"[+-]?\d+")

# FloatingDecimal.readJavaFormatString after String.trim(): ASCII digits only, optional f/F/d/D
# suffix, hexadecimal floating literals with a mandatory binary exponent, NaN and Infinity.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?")
_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?")
_SPECIAL = {
    "NaN": math.nan,
    "+NaN": math.nan,
    "-NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "-Infinity": -math.inf,
}


def _a(type_name: str) -> str:
    """The type name with its English article: "a long", "an int"."""
    return f"{'an' if type_name[:1] in 'aeiou' else 'a'} {type_name}"


def java_parse_integral(text: str | None, lo: int, hi: int, type_name: str) -> int:
    """``Byte/Short/Integer/Long.valueOf(text)``: ``NumberFormatException`` for null, junk or range."""
    if text is None:
        raise NumberFormatException(f"cannot convert null to {type_name}")
    if not _INTEGRAL.fullmatch(text):
        raise NumberFormatException(f"for input string {text!r} (not {_a(type_name)})")
    try:
        value = int(text)
    except ValueError:  # more digits than Python converts
        raise NumberFormatException(f"for input string {text!r}: out of range for {type_name}") from None
    if not lo <= value <= hi:
        raise NumberFormatException(f"value {text!r} is out of range for {type_name} ({lo}..{hi})")
    return value


def _java_trim(text: str) -> str:
    # String.trim() removes every char <= U+0020 at both ends (not Unicode whitespace).
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def java_parse_double(text: str | None, type_name: str = "double") -> float:
    """``Double.valueOf(text)``. A null string is a ``TypeError`` (Java: NullPointerException)."""
    return _parse(text, type_name)[0]


def _parse(text: str | None, type_name: str) -> tuple[float, str | None]:
    """The double value, and the decimal text it came from (None for hex and specials)."""
    if text is None:
        raise TypeError(f"cannot convert null to {type_name} (Java: NullPointerException)")
    s = _java_trim(text)
    special = _SPECIAL.get(s)
    if special is not None:
        return special, None
    if _DECIMAL.fullmatch(s):
        if s[-1] in "fFdD":
            s = s[:-1]
        return float(s), s
    if _HEX.fullmatch(s):
        if s[-1] in "fFdD":
            s = s[:-1]
        return float.fromhex(s), None
    raise NumberFormatException(f"for input string {text!r} (not {_a(type_name)})")


def to_float32(value: float) -> float:
    """Round a double to the nearest binary32 value, overflowing to ±infinity as Java's cast does."""
    try:
        return float(_F32.unpack(_F32.pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def java_parse_float(text: str | None) -> float:
    """``Float.valueOf(text)``: the decimal rounded once, straight to the nearest float.

    Rounding to double first and then to float gives the same result except when the double
    lands exactly halfway between two floats; then the exact decimal decides, as in Java.
    """
    value, decimal = _parse(text, "float")
    rounded = to_float32(value)
    if decimal is None or rounded == value or math.isinf(rounded) or value != value:
        return rounded
    other = _next_float32(rounded, value > rounded)
    if math.isinf(other) or Fraction(rounded) + Fraction(other) != 2 * Fraction(value):
        return rounded  # the double is not a midpoint: rounding it is rounding the decimal
    exact = Fraction(decimal)
    if exact == Fraction(value):
        return rounded  # a true tie: ties-to-even, as to_float32 did
    # The decimal lies on one side of the midpoint: pick the float on that side.
    return other if (exact > Fraction(value)) == (other > rounded) else rounded


def _next_float32(value: float, up: bool) -> float:
    """The adjacent binary32 value above (``up``) or below ``value``."""
    bits = _U32.unpack(_F32.pack(value))[0]
    if value == 0.0:
        bits = 1 if up else 0x80000001
    elif (value > 0) == up:
        bits += 1
    else:
        bits -= 1
    return float(_F32.unpack(_U32.pack(bits))[0])


def java_boolean_value_of(text: str | None) -> bool:
    """``Boolean.valueOf(text)``: true iff ``text`` equals "true" ignoring case; null is false."""
    if text is None or len(text) != 4:
        return False
    if text.isascii():
        return text.lower() == "true"
    # String.equalsIgnoreCase compares char by char through toUpperCase, then toLowerCase.
    return all(
        a == b or a.upper() == b.upper() or a.upper().lower() == b.upper().lower()
        for a, b in zip(text, "true")
    )


def _shortest_digits(value: float, is_float32: bool) -> tuple[str, int]:
    """Shortest decimal digits that read back as ``value`` (at float or double precision), and
    the decimal exponent of the first digit. ``value`` is finite and positive."""
    if is_float32:
        for precision in range(1, 10):
            text = f"{value:.{precision - 1}e}"
            if to_float32(float(text)) == value:
                break
    else:
        text = repr(value)  # Python's repr is the shortest round-tripping form
    _, digit_tuple, exp = Decimal(text).as_tuple()
    if len("".join(map(str, digit_tuple)).rstrip("0")) == 1:
        # Java (JDK 19+) picks among decimals of at least 2 digits the one closest to the
        # value: Float.MIN_VALUE is "1.4E-45", not "1.0E-45".
        _, digit_tuple, exp = Decimal(f"{value:.1e}").as_tuple()
    assert isinstance(exp, int)
    exponent = len(digit_tuple) + exp - 1
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    return digits, exponent


def _java_fp_to_string(value: float, is_float32: bool) -> str:
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value), is_float32)
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            frac = digits[exponent + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def java_double_to_string(value: float) -> str:
    """``Double.toString``: ``1.0``, ``0.001``, ``1.0E7``, ``1.0E-4``, ``NaN``, ``-Infinity``."""
    return _java_fp_to_string(value, False)


def java_float_to_string(value: float) -> str:
    """``Float.toString`` of a binary32 value: the shortest digits at float precision."""
    return _java_fp_to_string(value, True)
