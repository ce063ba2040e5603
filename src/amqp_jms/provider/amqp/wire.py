"""The layers between the provider's socket and its engine: WebSocket framing (``amqpws``) and
the SASL exchange (unless ``amqp.saslLayer=false``). TLS is the socket's own (asyncio's SSL
transport), below all of them; proton's engine sees only the AMQP layer.

One object per connection attempt, so ``connection.py`` asks the same two questions whatever
the URL: what do these socket bytes carry for the engine (``inbound``), and what goes on the
socket for these engine bytes (``outbound``). Each layer is sans-IO (:mod:`amqp_jms.engine`).
"""

from __future__ import annotations

from collections.abc import Callable

from ...engine.sasl_client import (
    SaslClient,
    SaslCredentials,
    SaslError,
    SaslHeaderMismatch,
    SaslNoMechanism,
    SaslRefused,
)
from ...engine.websocket import WebSocketClient, WebSocketError
from ...exceptions import JMSException, JMSSecurityException, JMSSecuritySaslException
from ..config import DEFAULT_PORTS, ConnectionConfig
from ..errors import sasl_mismatch, sasl_refused

__all__ = ["Wire", "WireError", "sasl_credentials"]


class WireError(Exception):
    """A layer below AMQP failed; ``jms`` is what the application is told."""

    def __init__(self, jms: JMSException) -> None:
        super().__init__(jms.reason)
        self.jms = jms


def sasl_credentials(config: ConnectionConfig, token: str | None = None) -> SaslCredentials:
    """What this connection may sign in with: the user name, the password (or the bearer
    ``token`` a token provider just gave), a client certificate (EXTERNAL, over TLS only)."""
    return SaslCredentials(
        username=config.username,
        password=token if token is not None else config.password,
        has_certificate=config.secure and config.transport.key_store_location is not None,
        allowed=config.sasl_mechanisms,
        hostname=config.vhost or config.host,
    )


class Wire:
    """The byte path of one connection attempt (made fresh for every connect)."""

    def __init__(
        self,
        config: ConnectionConfig,
        sasl: SaslCredentials | None = None,
        trace: Callable[[str], None] | None = None,
    ) -> None:
        self._where = config.address
        self._config = config
        self._ws: WebSocketClient | None = None
        if config.websocket:
            default_port = config.port == DEFAULT_PORTS[config.scheme]
            host = config.host if default_port else f"{config.host}:{config.port}"
            self._ws = WebSocketClient(
                host,
                config.path or "/",
                config.transport.ws_http_headers,
                config.transport.ws_max_frame_size,
            )
        self._sasl = SaslClient(sasl, trace) if sasl is not None else None

    @property
    def mechanism(self) -> str | None:
        """The SASL mechanism chosen (once the server offered its list)."""
        return self._sasl.mechanism_name if self._sasl is not None else None

    def inbound(self, data: bytes) -> bytes:
        """Socket bytes -> the bytes they carry for the engine (possibly none).

        Raises :class:`WireError` when a layer cannot go on; ``closing()`` then returns what
        that layer still has to tell the peer (a WebSocket close)."""
        ws = self._ws
        if ws is not None:
            try:
                data = ws.receive_data(data)
            except WebSocketError as e:
                cls = JMSSecurityException if e.status in (401, 403, 407) else JMSException
                raise WireError(cls(f"{self._where}: {e}")) from None
        sasl = self._sasl
        if sasl is not None and not sasl.done and data:
            try:
                data = sasl.receive_data(data)
            except SaslRefused as e:
                said = f"with {sasl.mechanism_name}" + (f" ({e.text})" if e.text else "")
                raise WireError(sasl_refused(e.code, said, self._where)) from None
            except SaslNoMechanism as e:  # the client chose none: say what each side has
                why = sasl_mismatch(e.offered, sasl.creds, tls=self._config.secure)
                raise WireError(sasl_refused(1, "the client chose no mechanism", self._where, why)) from None
            except SaslHeaderMismatch as e:
                if e.speaks_tls and not self._config.secure:
                    raise WireError(JMSException(
                        f"{self._where} speaks TLS: connect with amqps:// (it answered the AMQP "
                        f"header with {e.header!r})", "amqp:connection:framing-error")) from None
                raise WireError(JMSSecuritySaslException(f"the login to {self._where} failed: {e}",
                                                         "amqp:unauthorized-access")) from None
            except SaslError as e:
                raise WireError(JMSSecuritySaslException(f"the login to {self._where} failed: {e}",
                                                         "amqp:unauthorized-access")) from None
        return data

    @property
    def amqp_ready(self) -> bool:
        """Whether the AMQP layer may send: not while SASL is under way (the engine keeps its
        output, and its frame trace, until then)."""
        return self._sasl is None or self._sasl.done

    @property
    def transparent(self) -> bool:
        """No layer changes what is read any more (no WebSocket, SASL over): socket bytes are
        the engine's bytes."""
        return self._ws is None and (self._sasl is None or self._sasl.done)

    def outbound(self, data: bytes) -> bytes:
        """Engine bytes -> socket bytes, with whatever a layer adds itself (an upgrade request,
        SASL frames, a pong)."""
        sasl = self._sasl
        if sasl is not None:
            assert sasl.done or not data, "the engine's output waits for SASL (amqp_ready)"
            data = sasl.data_to_send() + data
        ws = self._ws
        if ws is None:
            return data
        ws.wrap(data)
        return ws.data_to_send()

    def closing(self) -> bytes:
        """The last bytes before the socket closes (a WebSocket close frame), or ``b""``."""
        if self._ws is None:
            return b""
        self._ws.close()
        return self._ws.data_to_send()
