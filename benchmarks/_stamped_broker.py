"""The embedded broker with two moments of its event loop stamped, for ``sync_send_bench``'s
split of a round trip between the client, the kernel and the broker (a measuring tool only).

Stamped: each return from the loop's ``epoll`` wait (the broker woken by a peer's bytes, or a
timer) and each start of a socket transport's ``write`` (an answer handed to the kernel), with
``time.perf_counter``, which on Linux reads the same clock (``CLOCK_MONOTONIC``) in every
process, so the client's stamps and these compare. On SIGUSR1 both lists are written to the
file named by ``SYNC_SEND_STAMPS`` (two lines: ``P`` and ``W``, then the stamps) and cleared.

    python benchmarks/_stamped_broker.py --port 0 -q      # the broker's own command line
"""

from __future__ import annotations

import asyncio.selector_events
import os
import selectors
import signal
import sys
import time
from typing import Any

from amqp_jms.broker.operations.cli import main

_polls: list[float] = []
_writes: list[float] = []
_select = selectors.EpollSelector.select
#: asyncio's socket transport (private, and not in typeshed: this tool's one reach inside)
_TRANSPORT: Any = vars(asyncio.selector_events)["_SelectorSocketTransport"]
_write = _TRANSPORT.write


def _stamped_select(self: Any, timeout: float | None = None) -> Any:
    ready = _select(self, timeout)
    _polls.append(time.perf_counter())
    return ready


def _stamped_write(self: Any, data: Any) -> None:
    _writes.append(time.perf_counter())
    _write(self, data)


def _dump(_signum: int, _frame: Any) -> None:
    with open(os.environ["SYNC_SEND_STAMPS"], "w") as f:
        f.write("P " + " ".join(map(repr, _polls)) + "\n")
        f.write("W " + " ".join(map(repr, _writes)) + "\n")
    _polls.clear()
    _writes.clear()


if __name__ == "__main__":
    selectors.EpollSelector.select = _stamped_select  # type: ignore[method-assign]
    _TRANSPORT.write = _stamped_write
    signal.signal(signal.SIGUSR1, _dump)
    sys.argv[0] = "amqp-jms broker"
    sys.exit(main())
