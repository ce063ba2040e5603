"""Errors the broker raises about what a peer sent (each becomes an AMQP error condition).

``MalformedFrame``: a field of the wrong type or with undecodable content (invalid UTF-8, a
capability that is not a symbol); the connection closes with ``amqp:decode-error`` and one log
line, not an ``internal-error`` with a traceback (that stays for the broker's own bugs).

``AttachRefused``: an attach the broker refuses. Raised by the routing layer too (an invalid
selector, ``routing.core``), caught by the protocol layer's attach handling: it lives here, below
both, so that the error travels up without routing importing protocol.
"""

from __future__ import annotations

__all__ = ["DECODE_ERROR", "AttachRefused", "MalformedFrame", "is_malformed"]

DECODE_ERROR = "amqp:decode-error"


class MalformedFrame(Exception):
    """The peer sent a value the spec does not allow where it sent it."""


def is_malformed(exc: BaseException) -> bool:
    """True for an error caused by the peer's bytes: ours, or proton's str decoding of them."""
    return isinstance(exc, MalformedFrame | UnicodeDecodeError)


class AttachRefused(Exception):
    """An attach the broker answers with a refusal: ``condition`` and ``description`` go back to
    the peer on the detach."""

    def __init__(self, condition: str, description: str) -> None:
        super().__init__(description)
        self.condition = condition
        self.description = description
