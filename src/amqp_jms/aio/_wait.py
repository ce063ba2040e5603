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
        loop = asyncio.get_running_loop()
        landed = bridge_for(loop).wrap(fut)
        # this loop may read the answer itself when it comes (``Provider.answer_on_loop``):
        # then it is woken by the peer, not by the I/O thread once that was woken
        w.provider.answer_on_loop(fut, loop, w.timeout)
        # the landed copy is awaited alone, and a timer gives it up at the deadline: what
        # ``asyncio.wait`` would do for one future, for a third of its cost (its waiter, its set
        # and its callbacks were about 20 µs of every waiting send)
        deadline = None if w.timeout is None else loop.call_later(w.timeout, _give_up, landed)
        try:
            await landed
        except _Deadline:
            if not fut.done():
                fut.cancel()
                raise w.timed_out() from None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise  # the awaiting task was cancelled: the operation itself goes on
            # the operation was cancelled (its connection closed): the outcome below says so
        except Exception:  # (the outcome below raises the blocking face's exception)
            pass
        finally:
            if deadline is not None:
                deadline.cancel()
    return w.outcome()


class _Deadline(Exception):
    """The wait's deadline passed (set on the landed copy by its timer)."""


def _give_up(landed: asyncio.Future[Any]) -> None:
    if not landed.done():
        landed.set_exception(_Deadline())
