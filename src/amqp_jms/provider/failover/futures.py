"""Completing the futures a failover connection hands the client.

A handle's future may be completed from the reconnect thread, the wrapped provider's I/O thread
or the application's (a timeout that stopped waiting); these helpers complete one only if nobody
did first, and never raise for a future already done.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any

from ...exceptions import JMSException

__all__ = ["Future", "done_future", "failure_of", "reject", "resolve"]

Future = concurrent.futures.Future


def done_future(value: Any = None) -> Future[Any]:
    f: Future[Any] = Future()
    f.set_result(value)
    return f


def failure_of(f: Future[Any]) -> BaseException | None:
    """A completed future's exception; a cancelled one counts as failed (never raises)."""
    if f.cancelled():
        return JMSException("the operation was cancelled")
    return f.exception()


def resolve(out: Future[Any], value: Any = None) -> None:
    """Complete ``out`` unless it is already done (the client may have stopped waiting)."""
    if not out.done():
        try:
            out.set_result(value)
        except concurrent.futures.InvalidStateError:
            pass


def reject(out: Future[Any], exc: BaseException) -> None:
    if not out.done():
        try:
            out.set_exception(exc)
        except concurrent.futures.InvalidStateError:
            pass
