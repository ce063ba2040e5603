"""Errors the broker raises about what a peer sent (each becomes an AMQP error condition).

``MalformedFrame``: a field of the wrong type or with undecodable content (invalid UTF-8, a
capability that is not a symbol); the connection closes with ``amqp:decode-error`` and one log
line, not an ``internal-error`` with a traceback (that stays for the broker's own bugs).
"""

from __future__ import annotations

__all__ = ["DECODE_ERROR", "MalformedFrame", "is_malformed"]

DECODE_ERROR = "amqp:decode-error"


class MalformedFrame(Exception):
    """The peer sent a value the spec does not allow where it sent it."""


def is_malformed(exc: BaseException) -> bool:
    """True for an error caused by the peer's bytes: ours, or proton's str decoding of them."""
    return isinstance(exc, MalformedFrame | UnicodeDecodeError)
