"""The broker's TLS context, and a fix so a refused client certificate reaches the client as such.

asyncio's SSL transport drops the alert a failed server-side handshake produces: on the error it
closes the socket without writing what OpenSSL queued for the peer, so a client whose
certificate the broker refused sees only the connection drop (and proton calls that a
framing-error). :class:`AlertingSSLObject` defers the failure by one round: the first time the
handshake fails it reports "want read", asyncio writes the queued alert ("unknown ca", "bad
certificate", ...), and the next handshake step (the client's reply or its hang-up) raises the
real error. The client then gets a TLS alert it can name.
"""

from __future__ import annotations

import ssl
from pathlib import Path

__all__ = ["AlertingSSLObject", "server_context"]


#: OpenSSL's reasons when the first bytes are not a TLS record at all (a plain ``amqp://`` client
#: sends ``AMQP\x03...``): OpenSSL queues no alert, and deferring would leave that client waiting
#: for its whole connect timeout for an answer that never comes; failing at once closes the socket
_NOT_TLS = frozenset({"WRONG_VERSION_NUMBER", "HTTP_REQUEST", "HTTPS_PROXY_REQUEST", "UNKNOWN_PROTOCOL",
                      "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE"})


class AlertingSSLObject(ssl.SSLObject):
    """An ``SSLObject`` whose failed handshake lets its alert be sent before it fails."""

    _failure: ssl.SSLError | None = None

    def do_handshake(self) -> None:
        if self._failure is not None:
            raise self._failure
        try:
            super().do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, ssl.SSLSyscallError):
            raise
        except ssl.SSLError as e:
            if e.reason in _NOT_TLS:
                raise  # no TLS at all (an amqp:// client's AMQP header): no alert to wait for
            self._failure = e
            raise ssl.SSLWantReadError("handshake failed: sending the alert first") from e


def server_context(
    cert: str | Path, key: str | Path, ca: str | Path | None, *, require_client_certificate: bool = False
) -> ssl.SSLContext:
    """TLS for the listener. With ``ca``, client certificates it signed are verified and allow
    SASL EXTERNAL; optional, so clients without one can still use PLAIN/ANONYMOUS, unless
    ``require_client_certificate`` (then a handshake without one fails: mutual TLS for all)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    if ca is not None:
        ctx.load_verify_locations(str(ca))
        ctx.verify_mode = ssl.CERT_REQUIRED if require_client_certificate else ssl.CERT_OPTIONAL
    ctx.sslobject_class = AlertingSSLObject
    return ctx
