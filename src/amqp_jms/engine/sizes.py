"""How large an Attach frame will be, before proton writes it.

Why: proton writes a performative larger than the peer's max-frame-size anyway, and the peer
then closes the whole connection (``framing-error: malformed frame``), taking every session
with it. A link whose Attach cannot fit (a 50 KB selector against a broker's 32 KB frames) must
be refused on its own, before anything is sent. Only the parts a user controls vary in size
(the link name, addresses, the filter with its selector, capabilities, properties); the rest
of the performative is bounded by ``ATTACH_OVERHEAD``.
"""

from __future__ import annotations

from typing import Any

from proton import Data, Link, Terminus

__all__ = ["ATTACH_OVERHEAD", "attach_frame_size", "frame_limit"]

ATTACH_OVERHEAD = 128
"""Bytes an Attach frame takes besides its variable parts: the frame header, the descriptor,
the list of fixed-size fields, the expiry policy and default outcome (measured: 53 for a
Qpid JMS-shaped consumer; the margin covers sender/coordinator fields)."""

_STR_HEADER = 5  # str32/sym32: constructor + 4-byte length (an upper bound for str8)


def _text(value: str | None) -> int:
    return 0 if value is None else _STR_HEADER + len(value.encode("utf-8", "surrogatepass"))


def _data(value: Data | None) -> int:
    return 0 if value is None else len(value.encode())


def _object(value: Any) -> int:
    if value is None:
        return 0
    d = Data()
    d.put_object(value)
    return len(d.encode())


def _terminus(t: Terminus) -> int:
    return _text(t.address) + sum(_data(d) for d in (t.filter, t.capabilities, t.outcomes, t.properties))


def attach_frame_size(link: Link) -> int:
    """An upper estimate, in bytes, of the Attach frame ``link.open()`` will write."""
    return ATTACH_OVERHEAD + _text(link.name) + _terminus(link.source) + _terminus(link.target) + _object(
        link.properties
    )


def frame_limit(link: Link) -> int | None:
    """The peer's max-frame-size for this link's connection, or None when it set none."""
    transport = link.connection.transport
    if transport is None:
        return None
    limit = int(transport.remote_max_frame_size)
    return None if limit <= 0 or limit >= 0xFFFFFFFF else limit
