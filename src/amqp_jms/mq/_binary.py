"""Byte-level helpers shared by the MQ structures: byte order from an Encoding, character fields.

MQ integers travel in the byte order named by the *preceding* structure's ``Encoding`` (low
nibble 1 = big-endian "normal", 2 = little-endian "reversed"). Character fields are fixed width,
blank padded; readers strip trailing blanks and NULs because C programs leave NULs behind.
"""

from __future__ import annotations

from .constants import MQENC_INTEGER_MASK, MQENC_INTEGER_NORMAL, MQENC_INTEGER_REVERSED
from .errors import MQFormatError

__all__ = ["byte_order", "char_field", "encode_char", "read_char"]


def byte_order(
    encoding: int, structure: str = "MQ", field: str = "Encoding", offset: int | None = None
) -> str:
    """``">"`` or ``"<"`` for an MQ Encoding value; MQFormatError when its integer nibble is unset."""
    if not isinstance(encoding, int):
        raise MQFormatError(
            f"Encoding must be an int, not {type(encoding).__name__}",
            structure=structure,
            field=field,
            offset=offset,
        )
    nibble = encoding & MQENC_INTEGER_MASK
    if nibble == MQENC_INTEGER_NORMAL:
        return ">"
    if nibble == MQENC_INTEGER_REVERSED:
        return "<"
    raise MQFormatError(
        f"Encoding {encoding} (0x{encoding & 0xFFFFFFFF:X}) names no integer byte order "
        "(low nibble must be 1 = normal or 2 = reversed)",
        structure=structure,
        field=field,
        offset=offset,
    )


def encode_char(value: str, width: int, structure: str, field: str, *, truncate: bool = False) -> bytes:
    """A fixed-width MQCHAR field: UTF-8, blank padded. Too long is an error unless ``truncate``
    (then cut at a character boundary, never mid-character)."""
    if not isinstance(value, str):
        raise MQFormatError(f"must be a str, not {type(value).__name__}", structure=structure, field=field)
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MQFormatError(f"{value!r} is not encodable as UTF-8", structure=structure, field=field) from exc
    if len(raw) > width:
        if not truncate:
            raise MQFormatError(
                f"{value!r} is {len(raw)} bytes, longer than the field's {width}",
                structure=structure,
                field=field,
            )
        raw = raw[:width]
        while raw:
            try:
                raw.decode("utf-8")
                break
            except UnicodeDecodeError:
                raw = raw[:-1]
    return raw.ljust(width, b" ")


def read_char(raw: bytes, structure: str, field: str, offset: int) -> str:
    """Decode a fixed-width MQCHAR field, stripping trailing blanks and NULs."""
    try:
        return bytes(raw).rstrip(b" \x00").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MQFormatError(
            f"bytes {bytes(raw)!r} are not valid character data",
            structure=structure,
            field=field,
            offset=offset,
        ) from exc


def char_field(value: str, width: int) -> str:
    """A value as a blank-padded MQCHAR string (for MQFMT_* comparisons): ``"MQSTR"`` -> ``"MQSTR   "``."""
    return value.ljust(width)[:width]
