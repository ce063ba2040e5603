"""Helpers for the broker tests: raw python-qpid-proton peers (no tests here).

Link options for termini the blocking API has no keyword for (capabilities, selectors,
no-local, durable subscriptions, null sources).
"""

from __future__ import annotations

import socket
from typing import Any

from proton import UNDESCRIBED, Array, Data, Described, Terminus, symbol, ulong
from proton.reactor import LinkOption


class Caps(LinkOption):
    """Set capabilities on the source (receivers) or target (senders)."""

    def __init__(self, *caps: str) -> None:
        self.caps = caps

    def apply(self, link: Any) -> None:
        term = link.source if link.is_receiver else link.target
        term.capabilities.put_object(Array(UNDESCRIBED, Data.SYMBOL, *[symbol(c) for c in self.caps]))


class Selector(LinkOption):
    def __init__(self, text: str, *, no_local: bool = False) -> None:
        self.text = text
        self.no_local = no_local

    def apply(self, link: Any) -> None:
        f: dict[Any, Any] = {}
        if self.text:
            f[symbol("jms-selector")] = Described(ulong(0x0000468C00000004), self.text)
        if self.no_local:
            f[symbol("no-local")] = Described(ulong(0x0000468C00000003), [])
        link.source.filter.put_object(f)


class Durable(LinkOption):
    def apply(self, link: Any) -> None:
        link.source.durability = Terminus.DELIVERIES
        link.source.expiry_policy = Terminus.EXPIRE_NEVER


class NullSource(LinkOption):
    def apply(self, link: Any) -> None:
        link.source.type = Terminus.UNSPECIFIED


class Browse(LinkOption):
    def apply(self, link: Any) -> None:
        link.source.distribution_mode = Terminus.DIST_MODE_COPY


def raw_socket(url: str) -> socket.socket:
    host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)
