"""One connection's side of the ``$cbs`` node (``routing/cbs.py``): the requests arriving on
its link to ``$cbs``, the answers on its link from ``$cbs``, and closing what a lapsed grant
covered. Answers are sent presettled; while the client's receiver has no credit they wait."""

from __future__ import annotations

import itertools
import logging
import time
from typing import TYPE_CHECKING, Any

from proton import Condition, Link, Message

from ..routing.cbs import covers
from ..routing.requests import RequestRefused, decode_request

if TYPE_CHECKING:
    from .connection import BrokerConnection

__all__ = ["CbsLink"]

log = logging.getLogger("amqp_jms.broker")
_tags = itertools.count(1)


class CbsLink:
    """The ``$cbs`` conversation of one broker connection."""

    def __init__(self, conn: BrokerConnection) -> None:
        self.conn = conn
        self.reply: Link | None = None  # our sender to the client's receiver from $cbs
        self._pending: list[bytes] = []

    def attach_reply(self, link: Link) -> None:
        link.source.copy(link.remote_source)
        link.target.copy(link.remote_target)
        link.snd_settle_mode = Link.SND_SETTLED
        link.open()
        self.reply = link

    def request(self, data: bytes) -> tuple[str, str] | None:
        """A put-token request: answered (None), or ``(condition, description)`` to reject it."""
        core = self.conn.core
        grants = core.cbs
        assert grants is not None
        try:
            msg = decode_request(data, core.limits, "$cbs")
        except RequestRefused as exc:
            return exc.refusal
        props: dict[Any, Any] = msg.properties or {}
        status, text, expiry = grants.put_token(self.conn.id, props, msg.body)
        audience = str(props.get("name"))
        log.info("connection %s: $cbs put-token for %s: %s %s", self.conn.id, audience, status,
                 text)
        answer = Message(correlation_id=msg.id,
                         properties={"status-code": status, "status-description": text})
        self._send(answer.encode())
        if expiry is not None:
            loop = core.loop
            loop.call_at(loop.time() + max(0.0, expiry - time.time()) + 0.05, self._lapse, audience)
        return None

    def on_flow(self) -> None:
        pending, self._pending = self._pending, []
        for data in pending:
            self._send(data)

    def _send(self, data: bytes) -> None:
        link = self.reply
        if link is None or not link.state & Link.LOCAL_ACTIVE:
            log.info("connection %s: a $cbs answer with no link from $cbs to carry it", self.conn.id)
            return
        if link.credit <= 0:
            self._pending.append(data)
            return
        d = link.delivery(str(next(_tags)))
        link.send(data)
        link.advance()
        d.settle()
        self.conn.dirty()

    def _lapse(self, audience: str) -> None:
        """A grant's time is up: unless renewed, close the links only it covered."""
        conn = self.conn
        grants = conn.core.cbs
        if conn.closed or grants is None or not grants.lapsed(conn.id, audience):
            return
        for key, st in list(conn.links.items()):
            address = _address_of(st)
            if address is None or address == "$cbs" or not covers(audience, address):
                continue
            if grants.allows(conn.id, address):
                continue
            link = st.link
            conn.links.pop(key, None)
            conn._end_link(link, st, closed=True, connection_gone=False)
            if link.state & Link.LOCAL_ACTIVE:
                link.condition = Condition("amqp:unauthorized-access",
                                           f"the token for {audience} expired and was not renewed")
                link.close()
        conn.dirty()


def _address_of(st: Any) -> str | None:
    address = getattr(st, "address", None)
    if address is not None:
        return str(address)
    queue = getattr(st, "queue", None)
    return str(queue.name) if queue is not None else None
