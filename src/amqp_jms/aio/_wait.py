"""The asyncio face's one wait for the provider: a ``ProviderWait`` awaited.

The core describes each wait (``client.waits.ProviderWait``: the future, how long, what it is
called); the blocking face blocks on it, this awaits it without blocking the event loop (the
future's completion lands through ``FutureBridge``) and then asks the blocking wait for the
outcome of the finished future, so the result and every failure (the peer's refusal, a
cancelled operation) are the blocking face's, word for word. At the deadline it gives the
operation up as the blocking wait does (cancelled, ``ProviderWait.timed_out``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..client.waits import ProviderWait
from ._bridge import bridge_for

__all__ = ["wait"]


async def wait(w: ProviderWait | None) -> Any:
    """The outcome of ``w`` (None: nothing to wait for), awaited."""
    if w is None:
        return None
    fut = w.future
    if not fut.done():
        landed = bridge_for(asyncio.get_running_loop()).wrap(fut)
        done, _ = await asyncio.wait((landed,), timeout=w.timeout)
        if not done:
            landed.cancel()
            if not fut.done():
                fut.cancel()
                raise w.timed_out()
        elif not landed.cancelled():
            # the outcome is read from ``fut`` below: mark this copy's failure as seen, or asyncio
            # logs "Future exception was never retrieved" for every failed send
            landed.exception()
    return w.outcome()
