"""Claims-based security on one connection: ``put-token`` to the peer's ``$cbs`` node before a
link attaches, and again before the token expires (Azure Service Bus's sign-in; the token
providers are :mod:`amqp_jms.cbs`'s).

The request is a message to ``$cbs`` with application properties ``operation=put-token``,
``type`` (``jwt`` or ``servicebus.windows.net:sastoken``), ``name`` (the audience,
``sb://<host>/<address>``) and ``expiration``, the token as an ``amqp-value`` body and a
``reply-to`` naming our receiver; the answer carries ``status-code`` (200 or 202 ok) and
``status-description``. The two links live on the connection's private session.

A token is put again at ``expires_at - min(300 s, a fifth of its life)`` for every audience a
link used; a failed renewal is reported to the connection's exception listener (the peer will
close the links once the old token expires, which fails them with its own reason).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING, Any

from proton import Delivery, Link, Message

from ...cbs import CbsToken
from ...exceptions import JMSException, JMSSecurityException
from .link import AmqpLink

if TYPE_CHECKING:
    from .connection import AmqpProvider

__all__ = ["CbsClient", "audience_of"]

NODE = "$cbs"
#: renew this long before expiry at most (the Azure SDKs' refresh window) ...
RENEW_AHEAD_S = 300.0
#: ... and no later than this share of the token's life before it ends
RENEW_SHARE = 0.2


def audience_of(host: str, address: str) -> str:
    """The audience a link to ``address`` needs a token for (Service Bus's form)."""
    return f"sb://{host}/{address.lstrip('/')}"


class _CbsSender(AmqpLink):
    kind = "$cbs request"

    def on_delivery(self, delivery: Delivery) -> None:
        if delivery.remote_state or delivery.settled:
            delivery.settle()


class _CbsReceiver(AmqpLink):
    kind = "$cbs response"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting: dict[str, asyncio.Future[Message]] = {}

    def on_delivery(self, delivery: Delivery) -> None:
        link = delivery.link
        if not delivery.readable or delivery.partial:
            return
        msg = Message()
        msg.decode(link.recv(delivery.pending) or b"")
        delivery.update(Delivery.ACCEPTED)
        delivery.settle()
        link.flow(1)
        fut = self.waiting.pop(str(msg.correlation_id), None)
        if fut is not None and not fut.done():
            fut.set_result(msg)

    def on_failed(self, exc: JMSException) -> None:
        for fut in self.waiting.values():
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()
        self.waiting.clear()


class CbsClient:
    """The ``$cbs`` conversation of one provider connection (loop thread only)."""

    def __init__(self, provider: AmqpProvider, tokens: Any) -> None:
        self.provider = provider
        self.tokens = tokens
        self._links: tuple[_CbsSender, _CbsReceiver] | None = None
        self._opening: asyncio.Lock = asyncio.Lock()
        self._expires: dict[str, float] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._ids = itertools.count(1)

    async def authorize(self, address: str | None) -> None:
        """Put a token for the audience of a link to ``address`` unless one is still good."""
        if not address or address == NODE:
            return
        audience = audience_of(self.provider.config.host, address)
        if self._expires.get(audience, 0.0) - time.time() > RENEW_AHEAD_S * RENEW_SHARE:
            return
        await self.put_token(audience)

    async def put_token(self, audience: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            token: CbsToken = await loop.run_in_executor(None, self.tokens.get_token, audience)
        except Exception as e:
            raise JMSSecurityException(f"the CBS token provider failed for {audience}: {e!r}",
                                       linked_exception=e) from e
        sender, receiver = await self._ensure_links()
        msg_id = f"{self.provider.connection_id}:cbs:{next(self._ids)}"
        request = Message(
            id=msg_id,
            reply_to=receiver.endpoint.target.address if receiver.endpoint is not None else None,
            body=token.token,
            properties={"operation": "put-token", "type": token.type, "name": audience,
                        "expiration": int(token.expires_at)},
        )
        answer: asyncio.Future[Message] = loop.create_future()
        receiver.waiting[msg_id] = answer
        assert sender.endpoint is not None
        sender.endpoint.delivery(msg_id)
        sender.endpoint.send(request.encode())
        sender.endpoint.advance()
        reply = await self.provider.await_remote(answer, self.provider.request_timeout(),
                                                 f"answer the put-token for {audience}")
        props = reply.properties or {}
        status = props.get("status-code", props.get("statusCode"))
        status = int(status) if isinstance(status, int) else status  # (uint, int: any width)
        text = props.get("status-description", props.get("statusDescription"))
        if status not in (200, 202):
            said = f"{status} {text or ''}".rstrip()
            raise JMSSecurityException(f"$cbs refused the token for {audience}: {said}",
                                       "amqp:unauthorized-access")
        self._expires[audience] = token.expires_at
        self._schedule_renewal(audience, token.expires_at)

    def _schedule_renewal(self, audience: str, expires_at: float) -> None:
        old = self._timers.pop(audience, None)
        if old is not None:
            old.cancel()
        life = max(0.0, expires_at - time.time())
        delay = max(0.0, life - min(RENEW_AHEAD_S, life * RENEW_SHARE))
        self._timers[audience] = self.provider.loop.call_later(delay, self._renew, audience)

    def _renew(self, audience: str) -> None:
        self._timers.pop(audience, None)
        if self.provider.failure is not None or self.provider.closing:
            return

        async def go() -> None:
            try:
                await self.put_token(audience)
            except JMSException as e:
                self.provider.report_async(e)

        self.provider.loop.create_task(go())

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    async def _ensure_links(self) -> tuple[_CbsSender, _CbsReceiver]:
        async with self._opening:
            links = self._links
            if links is not None and not links[0].closed and not links[1].closed:
                return links
            from .connection_session import connection_session

            session = await connection_session(self.provider).session()
            name = f"{self.provider.connection_id}:cbs"
            sender = _CbsSender(session, f"{name}:sender")
            snd = session.endpoint.sender(sender.name)
            snd.target.address = NODE
            snd.source.address = NODE
            snd.snd_settle_mode = Link.SND_UNSETTLED
            await sender.attach(snd, "attach to $cbs")
            receiver = _CbsReceiver(session, f"{name}:receiver")
            rcv = session.endpoint.receiver(receiver.name)
            rcv.source.address = NODE
            rcv.target.address = f"{NODE}-reply-{self.provider.connection_id}"
            await receiver.attach(rcv, "attach from $cbs")
            rcv.flow(10)
            self._links = (sender, receiver)
            return self._links
