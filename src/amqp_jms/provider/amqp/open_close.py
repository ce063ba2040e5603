"""What the peer's Open and Close (or a transport that ends without one) mean for one provider
connection: its offered capabilities, properties, address prefixes and quirks on Open; the
JMS exception a Close, a refused Open, a lost socket or a missed heartbeat turns into.

A mixin of :class:`amqp_jms.provider.amqp.connection.AmqpProvider`, split out so that module
keeps the socket, the loop thread, the flush and the event dispatch, and this one the reading
of the connection-level frames. Runs on the loop thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from proton import Condition

from ...engine import Engine
from ...exceptions import JMSException
from ..base import Capabilities
from ..config import ConnectionConfig
from ..errors import to_jms
from .addressing import prefixes_in_force
from .capabilities import capabilities_of, quirks_of
from .terminus import symbols_of

__all__ = ["OpenCloseHandling"]


class OpenCloseHandling:
    """Mixin: needs the provider's engine, config, open/close futures and failure hooks."""

    config: ConnectionConfig
    engine: Engine | None
    closing: bool
    _opened: asyncio.Future[None] | None
    _closed_fut: asyncio.Future[None] | None
    _remote_caps: frozenset[str]
    _capabilities: Capabilities
    remote_properties: dict[str, Any]
    queue_prefix: str | None
    topic_prefix: str | None
    ignores_selectors: bool
    drain_unsafe: bool
    _establishment_failed: bool
    _timer_reset: Callable[[], None]
    _abort: Callable[[], None]
    fail: Callable[[JMSException], None]

    def _on_remote_open(self) -> None:
        assert self.engine is not None
        c = self.engine.connection
        self._remote_caps = symbols_of(c.remote_offered_capabilities)
        props = c.remote_properties or {}
        self.remote_properties = {str(k): v for k, v in props.items()}
        self.queue_prefix, self.topic_prefix = prefixes_in_force(self.config, self.remote_properties)
        self._capabilities = capabilities_of(self._remote_caps, self.remote_properties)
        quirks = quirks_of(self.remote_properties)
        self.ignores_selectors, self.drain_unsafe = quirks.ignores_selectors, quirks.drain_unsafe
        if "amqp:connection-establishment-failed" in self.remote_properties:
            self._establishment_failed = True  # a close with the reason follows at once
            return
        self._timer_reset()
        if self._opened is not None and not self._opened.done():
            self._opened.set_result(None)

    def _on_remote_close(self) -> None:
        assert self.engine is not None
        c = self.engine.connection
        cond: Condition | None = c.remote_condition
        name = str(cond.name) if cond is not None and cond.name else None
        desc = cond.description if cond is not None else None
        if self.closing:
            if self._closed_fut is not None and not self._closed_fut.done():
                self._closed_fut.set_result(None)
            return
        opening = self._opened is not None and not self._opened.done()
        refused_id = opening and name == "amqp:invalid-field" and (
            self._establishment_failed or bool(self.config.client_id)
        )
        what = "the peer refused to open the connection" if opening else "the peer closed the connection"
        exc = to_jms(name, desc, what, container_id_refused=refused_id,
                     info=cond.info if cond is not None else None)
        c.close()
        self.fail(exc)

    def _on_transport_closed(self) -> None:
        assert self.engine is not None
        err = self.engine.error
        if self.closing:
            if self._closed_fut is not None and not self._closed_fut.done():
                self._closed_fut.set_result(None)
            return
        self.fail(self._transport_failure(err))
        self._abort()

    def _transport_failure(self, err: Any) -> JMSException:
        """What a transport that ended without a close frame means for the application.

        Proton words two of them as conditions that would map to the wrong exception: the
        peer's socket closing (EOF) as ``amqp:connection:framing-error`` "connection aborted",
        and its silence past ``amqp.idleTimeout`` as ``amqp:resource-limit-exceeded``. Both are
        a lost connection (JMSException), not a protocol error nor a resource limit."""
        where = f"{self.config.host}:{self.config.port}"
        assert self.engine is not None
        if err is None or self.engine.eof_received:
            if self.engine.transport.frames_input == 0 and not self.config.secure:
                # not one frame back, not even SASL's: the answer of a TLS port to plain AMQP
                return JMSException(
                    f"{where} closed the connection without answering the AMQP header: if it "
                    "expects TLS, connect with amqps://",
                    error_code="amqp:connection:framing-error",
                )
            return JMSException(f"connection to {where} lost: the peer closed it without an AMQP close")
        if err.name == "amqp:connection:framing-error" and _speaks_tls(err.description):
            return JMSException(
                f"{where} speaks TLS: connect with amqps:// (it answered the AMQP header with "
                f"{err.description})",
                error_code=err.name,
            )
        if err.name == "amqp:resource-limit-exceeded" and "idle-timeout" in (err.description or ""):
            return JMSException(f"connection to {where} lost: the peer sent nothing for "
                                f"{self.config.idle_timeout_ms} ms (amqp.idleTimeout)")
        return to_jms(err.name, err.description, "the connection failed")


def _speaks_tls(description: str | None) -> bool:
    """Proton's header-mismatch description shows a TLS answer: the AMQP-over-TLS header a
    server sends back (AMQP 1.0 5.2.1), or a TLS record (an alert, 0x15, or a handshake, 0x16)."""
    text = description or ""
    return "AMQP TLS layer" in text or r"['\x15\x03" in text or r"['\x16\x03" in text
