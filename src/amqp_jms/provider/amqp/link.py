"""What every AMQP link resource shares: attach, refused attach, detach, failure."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from proton import Link, Terminus

from ...engine.raw import addr
from ...engine.sizes import attach_frame_size, frame_limit
from ...exceptions import IllegalStateException, JMSException
from ..errors import to_jms

if TYPE_CHECKING:
    from .session import AmqpSession

__all__ = ["AmqpLink", "fail_waiting", "take_answer"]


def take_answer(waiting: dict[str, Any], delivery: Any) -> tuple[Any, Any] | None:
    """The peer's answer to a delivery a link sent (a producer's message, a coordinator's
    declare or discharge): None while the update carries none (no remote state, not settled);
    else ``(remote state, the future waiting for its tag, or None)``, that future forgotten.
    The caller resolves the future, then settles the delivery."""
    state = delivery.remote_state
    if not state and not delivery.settled:
        return None
    return state, waiting.pop(delivery.tag, None)


def fail_waiting(waiting: dict[str, Any], exc: JMSException) -> None:
    """Fail every future still waiting for an answer (the link failed or is detaching)."""
    futures = list(waiting.values())
    waiting.clear()
    for fut in futures:
        if not fut.done():
            fut.set_exception(exc)


class AmqpLink:
    """Base of producer, consumer and coordinator links (loop-thread state only)."""

    kind = "link"
    #: its ``on_delivery_raw`` and ``on_flow`` touch nothing but its own state, its sink and
    #: the provider's ``completed``: a waiting caller may run them on its own thread while the
    #: I/O thread sleeps (``AmqpProvider.answer_here``, ``read_until``)
    answers_here = False

    def __init__(self, session: AmqpSession, name: str) -> None:
        self.session = session
        self.provider = session.provider
        self.name = name
        self.endpoint: Link | None = None
        self._attached: asyncio.Future[None] | None = None
        self._detached: asyncio.Future[None] | None = None
        self.failure: JMSException | None = None
        self.closed = False

    # -- attach --------------------------------------------------------------------------------
    async def attach(self, link: Link, what: str) -> None:
        self._check_frame_size(link, what)
        cbs = self.provider.cbs
        if cbs is not None:  # claims-based security: a token for this address first
            try:
                await cbs.authorize(link.target.address if link.is_sender else link.source.address)
            except BaseException:
                link.free()
                raise
        self.endpoint = link
        link.jms = self
        self.session.links.add(self)
        self.provider.links_by_addr[addr(link)] = self
        self._attached = self.provider.loop.create_future()
        link.open()
        try:
            await self.provider.await_remote(self._attached, self.provider.request_timeout(), what)
        except BaseException:
            if not self._attached.done():  # nobody waits any more: a late refusal goes nowhere
                self._attached.cancel()
            self._forget()
            if not self.closed and link.state & Link.LOCAL_ACTIVE:
                link.close()
                self.provider.flush()
            raise

    @staticmethod
    def _check_frame_size(link: Link, what: str) -> None:
        """Refuse, before sending it, an Attach the peer's max-frame-size cannot hold: sent, it
        would make the peer close the whole connection with a framing error."""
        limit = frame_limit(link)
        if limit is None:
            return
        size = attach_frame_size(link)
        if size <= limit:
            return
        link.free()
        raise JMSException(
            f"cannot {what}: its Attach frame would take about {size} bytes, more than the peer's "
            f"max-frame-size of {limit} bytes (shorten the selector, address or link name); "
            "nothing was sent",
            error_code="amqp:frame-size-too-small",
        )

    def _remote_terminus_missing(self) -> bool:
        assert self.endpoint is not None
        term = self.endpoint.remote_target if self.endpoint.is_sender else self.endpoint.remote_source
        return term.type == Terminus.UNSPECIFIED

    def on_remote_open(self) -> None:
        if self._attached is None or self._attached.done():
            return
        if self._remote_terminus_missing():
            return  # a refusal: the detach with the error condition follows
        self._attached.set_result(None)
        self.on_attached()

    def on_attached(self) -> None:
        """Hook: the peer accepted the attach."""

    def on_remote_close(self) -> None:
        assert self.endpoint is not None
        cond = self.endpoint.remote_condition
        name = str(cond.name) if cond is not None and cond.name else None
        desc = cond.description if cond is not None else None
        if self._attached is not None and not self._attached.done():
            exc = to_jms(name, desc, f"the peer refused the {self.kind} link {self.name!r}")
            self._attached.set_exception(exc)
            self.closed = True
            self.endpoint.close()
            return
        if self._detached is not None and not self._detached.done():
            self._detached.set_result(None)
            self._forget()
            return
        # detached by the peer while in use
        self.endpoint.close()
        self.fail(to_jms(name, desc, f"the peer closed the {self.kind} link {self.name!r}",
                         info=cond.info if cond is not None else None))

    # -- close / failure -----------------------------------------------------------------------
    async def detach(self, close: bool = True) -> None:
        if self.closed or self.endpoint is None:
            return
        self.closed = True
        self.before_detach()
        if self.failure is not None or self.session.failure is not None:
            self._forget()
            return
        self._detached = self.provider.loop.create_future()
        if close:
            self.endpoint.close()
        else:
            self.endpoint.detach()
        try:
            await self.provider.await_remote(
                self._detached, self.provider.config.seconds(self.provider.config.close_timeout_ms), "detach"
            )
        finally:
            self._forget()

    def before_detach(self) -> None:
        """Hook: fail what cannot complete once the link goes."""

    def _forget(self) -> None:
        self.session.links.discard(self)
        if self.endpoint is not None:
            self.provider.links_by_addr.pop(addr(self.endpoint), None)

    def on_delivery_raw(self, delivery: Any) -> bool:
        """Hook: a delivery update as proton-c's ``pn_delivery_t`` pointer (``engine.raw``);
        True when handled, else the update comes again through ``on_delivery``."""
        return False

    def fail(self, exc: JMSException) -> None:
        if self.failure is not None:
            return
        self.failure = exc
        self.closed = True
        for fut in (self._attached, self._detached):
            if fut is not None and not fut.done():
                fut.set_exception(exc)
                fut.exception()  # retrieved: no "never retrieved" warning if nobody awaits
        self.on_failed(exc)
        self._forget()

    def on_failed(self, exc: JMSException) -> None:
        """Hook: fail pending operations of this link."""

    @property
    def closed_alone(self) -> bool:
        """The link failed while its session and connection live: the peer closed this link
        alone (Qpid JMS's ``onResourceClosed``), which the link's own users must hear of; a
        lost session or connection is reported once, by them."""
        return self.failure is not None and self.session.failure is None and self.provider.failure is None

    def check(self) -> None:
        if self.failure is not None:
            raise type(self.failure)(self.failure.reason, self.failure.error_code, self.failure)
        if self.closed:
            raise IllegalStateException(f"the {self.kind} is closed")

    def on_flow(self) -> None:
        """Hook: credit or drain changed."""

    def on_delivery(self, delivery: Any) -> None:
        """Hook: a delivery arrived or its state changed."""
