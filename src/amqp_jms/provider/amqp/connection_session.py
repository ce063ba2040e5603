"""The connection's private AMQP session: temporary destinations and unsubscribe (issue 7).

Qpid JMS does connection-scoped work on a session of its own, so that no JMS session's
transaction or close can interfere with it: creating a temporary queue/topic (a sender link
whose target is dynamic, with ``lifetime-policy: delete-on-close`` and the ``temporary-*``
capability; the peer names the node and deleting it is closing that link) and removing a
durable subscription (a receiver attached under the subscription's link name with a *null*
source: the peer answers with the subscription's source, or a null one if there is none; then
the link is closed, which ends the subscription).

Everything here runs on the provider's loop thread; the public entry points return
``concurrent.futures.Future``s like the rest of the SPI.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from typing import TYPE_CHECKING, Any

from proton import Described, Link, Terminus, symbol, ulong

from ...exceptions import InvalidDestinationException, JMSException
from .link import AmqpLink
from .terminus import OUTCOMES, put_symbols

if TYPE_CHECKING:
    from .connection import AmqpProvider
    from .session import AmqpSession

__all__ = ["ConnectionSession", "connection_session"]

DELETE_ON_CLOSE = ulong(0x2B)


class _TempCreator(AmqpLink):
    """The sender link that owns one dynamic node; closing it deletes the node."""

    kind = "temporary destination"

    async def open_dynamic(self, capability: str) -> str:
        snd = self.session.endpoint.sender(self.name)
        t = snd.target
        t.dynamic = True
        t.durability = Terminus.NONDURABLE
        t.expiry_policy = Terminus.EXPIRE_WITH_LINK
        t.properties.put_object({symbol("lifetime-policy"): Described(DELETE_ON_CLOSE, [])})
        put_symbols(t.capabilities, [capability])
        put_symbols(snd.source.outcomes, OUTCOMES)
        snd.snd_settle_mode = Link.SND_UNSETTLED
        snd.rcv_settle_mode = Link.RCV_FIRST
        await self.attach(snd, f"create a {capability}")
        address = snd.remote_target.address
        if not address:
            await self.detach()
            raise JMSException(f"the peer created a {capability} but gave it no address")
        return str(address)


class _SubscriptionLookup(AmqpLink):
    """A receiver attached with a null source under a subscription's link name."""

    kind = "subscription lookup"
    found = False

    async def lookup(self) -> bool:
        rcv = self.session.endpoint.receiver(self.name)
        rcv.source.type = Terminus.UNSPECIFIED  # null source: "give me the stored one"
        rcv.snd_settle_mode = Link.SND_UNSETTLED
        rcv.rcv_settle_mode = Link.RCV_FIRST
        await self.attach(rcv, f"look up subscription {self.name!r}")
        return self.found

    def on_remote_open(self) -> None:
        # unlike a consumer, a null remote source is an answer here (no such subscription),
        # not the first half of a refusal
        if self._attached is None or self._attached.done():
            return
        assert self.endpoint is not None
        self.found = self.endpoint.remote_source.type != Terminus.UNSPECIFIED
        self._attached.set_result(None)


class ConnectionSession:
    """Lazily begun private session of one provider, with the temporary nodes it created."""

    def __init__(self, provider: AmqpProvider) -> None:
        self.provider = provider
        self._session: AmqpSession | None = None
        self._opening: asyncio.Future[AmqpSession] | None = None
        self._temps: dict[str, _TempCreator] = {}
        self._ids = itertools.count(1)

    async def session(self) -> AmqpSession:
        from .session import AmqpSession

        s = self._session
        if s is not None and s.failure is None and not s.closed:
            return s
        if self._opening is not None:
            return await asyncio.shield(self._opening)
        self._opening = self.provider.loop.create_future()
        try:
            s = AmqpSession(self.provider, f"{self.provider.connection_id}:0", False)
            await s.open()
            self._session = s
            self._opening.set_result(s)
            return s
        except BaseException as e:
            self._opening.set_exception(e)
            self._opening.exception()
            raise
        finally:
            self._opening = None

    # -- any thread ----------------------------------------------------------------------------
    def create_temporary(self, topic: bool) -> concurrent.futures.Future[str]:
        async def go() -> str:
            self.provider.check_usable()
            s = await self.session()
            kind = "temporary-topic" if topic else "temporary-queue"
            n = next(self._ids)
            link = _TempCreator(s, f"qpid-jms:{'temp-topic' if topic else 'temp-queue'}-creator:"
                                   f"{self.provider.connection_id}:{n}")
            address = await link.open_dynamic(kind)
            self._temps[address] = link
            return address

        return self.provider.loop_thread.submit(go())

    def delete_temporary(self, address: str) -> concurrent.futures.Future[None]:
        async def go() -> None:
            link = self._temps.pop(address, None)
            if link is not None and self.provider.failure is None and not self.provider.closing:
                await link.detach()

        return self.provider.loop_thread.submit(go())

    def unsubscribe(self, link_name: str) -> concurrent.futures.Future[None]:
        async def go() -> None:
            self.provider.check_usable()
            s = await self.session()
            link = _SubscriptionLookup(s, link_name)
            found = await link.lookup()
            await link.detach(close=True)
            if not found:
                raise InvalidDestinationException(
                    f"no durable subscription named {link_name!r} exists", "amqp:not-found"
                )

        return self.provider.loop_thread.submit(go())


def connection_session(provider: Any) -> ConnectionSession:
    """The provider's private session helper (created on first use)."""
    cs: ConnectionSession | None = getattr(provider, "_jms_connection_session", None)
    if cs is None:
        cs = ConnectionSession(provider)
        provider._jms_connection_session = cs
    return cs
