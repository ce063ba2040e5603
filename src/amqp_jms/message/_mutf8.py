"""Java's *modified* UTF-8 (``DataOutput.writeUTF`` / ``DataInput.readUTF``), in pure Python.

It differs from UTF-8 in two ways: U+0000 is written as the two bytes ``C0 80`` (so the encoded
form has no zero byte), and a character outside the BMP is written as its UTF-16 surrogate pair,
each surrogate as a 3-byte sequence (CESU-8), never as a 4-byte sequence. A Java peer reading a
BytesMessage with ``readUTF`` expects exactly this, so it is written out here rather than
approximated with Python's ``utf-8`` codec.
"""

from __future__ import annotations

import re

__all__ = ["decode_java_utf8", "decode_modified_utf8", "encode_modified_utf8"]

_SUPPLEMENTARY = re.compile("[\U00010000-\U0010ffff]")
_NON_BMP_OR_NUL = re.compile("[\x00\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _to_surrogates(match: re.Match[str]) -> str:
    cp = ord(match.group()) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


def encode_modified_utf8(text: str) -> bytes:
    """Encode ``text`` as Java's modified UTF-8 (no length prefix)."""
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    if _NON_BMP_OR_NUL.search(text):
        text = _SUPPLEMENTARY.sub(_to_surrogates, text)
    # 'surrogatepass' writes each surrogate (paired or lone, as Java allows) as 3 bytes.
    return text.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")


def decode_modified_utf8(data: bytes) -> str:
    """Decode Java's modified UTF-8. ``ValueError`` for a malformed sequence (Java's
    UTFDataFormatException), including a 4-byte UTF-8 sequence."""
    if data.isascii():
        return data.decode("ascii")
    return _decode_slow(data)


def _decode_slow(data: bytes) -> str:
    # Mirrors DataInputStream.readUTF: 1-byte 0xxxxxxx, 2-byte 110xxxxx 10xxxxxx, 3-byte
    # 1110xxxx 10xxxxxx 10xxxxxx (overlong forms accepted, as Java does); anything else fails.
    units: list[int] = []
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        top = c >> 4
        if top < 8:
            units.append(c)
            i += 1
        elif top in (12, 13):
            if i + 1 >= n:
                raise ValueError(f"malformed modified UTF-8: partial character at end (byte {i})")
            c2 = data[i + 1]
            if c2 & 0xC0 != 0x80:
                raise ValueError(f"malformed modified UTF-8 around byte {i + 1}")
            units.append(((c & 0x1F) << 6) | (c2 & 0x3F))
            i += 2
        elif top == 14:
            if i + 2 >= n:
                raise ValueError(f"malformed modified UTF-8: partial character at end (byte {i})")
            c2, c3 = data[i + 1], data[i + 2]
            if c2 & 0xC0 != 0x80 or c3 & 0xC0 != 0x80:
                raise ValueError(f"malformed modified UTF-8 around byte {i + 1}")
            units.append(((c & 0x0F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F))
            i += 3
        else:
            raise ValueError(f"malformed modified UTF-8 around byte {i} (0x{c:02X})")
    # Join surrogate pairs back into code points; lone surrogates stay as they are (as in Java).
    raw = b"".join(u.to_bytes(2, "big") for u in units)
    return raw.decode("utf-16-be", "surrogatepass")


def decode_java_utf8(data: bytes) -> str:
    """A string as a Java peer may write it where UTF-8 is due: UTF-8, or CESU-8 / modified UTF-8
    (a supplementary character as its surrogate pair, each half 3 bytes; U+0000 as ``C0 80``).
    ActiveMQ's JMS transformer writes map values and property strings this way. Surrogate pairs
    become the one character they stand for. ``ValueError`` for malformed bytes and for a lone
    surrogate (Java strings may hold one; a Python ``str`` of text must not)."""
    try:
        text = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        text = decode_modified_utf8(data)  # C0 80; ValueError if malformed
    if _SURROGATE.search(text) is None:
        return text
    try:
        return text.encode("utf-16-be", "surrogatepass").decode("utf-16-be")
    except UnicodeDecodeError as e:
        unit = int.from_bytes(e.object[e.start : e.start + 2], "big")
        raise ValueError(f"lone surrogate U+{unit:04X} at character {e.start // 2}") from None
