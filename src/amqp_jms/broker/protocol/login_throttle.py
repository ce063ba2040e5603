"""Failed logins limited per source address, so passwords cannot be guessed at line speed.

After ``max_failures`` failed logins from one address within ``window_s`` seconds, every further
login attempt from that address is refused (SASL outcome ``sys-temp``, "try again later") without
the password being looked at, until the oldest of those failures is ``window_s`` old. Refused
attempts are not counted, so an address that stops guessing is let in again one window after
its last real failure; a successful login does not reset the count (an attacker who owns one
account must not be able to clear the lockout of another).

Memory is bounded: at most ``max_failures`` timestamps per address, and at most
``max_addresses`` addresses, the least recently failed dropped first.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["LoginThrottle"]


class LoginThrottle:
    """Failed-login bookkeeping per source address (the broker's event loop only: no locks)."""

    def __init__(
        self,
        max_failures: int = 10,
        window_s: float = 60.0,
        *,
        max_addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_failures < 0 or window_s < 0:
            raise ValueError("max_failures and window_s must be >= 0")
        self.max_failures = max_failures  # 0: no limit
        self.window_s = window_s
        self.max_addresses = max_addresses
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, source: str, now: float) -> deque[float] | None:
        times = self._failures.get(source)
        if times is None:
            return None
        while times and now - times[0] >= self.window_s:
            times.popleft()
        if not times:
            del self._failures[source]
            return None
        return times

    def blocked(self, source: str) -> bool:
        """Whether a login from ``source`` must be refused now."""
        if self.max_failures == 0:
            return False
        times = self._recent(source, self._clock())
        return times is not None and len(times) >= self.max_failures

    def admits(self, source: str) -> Callable[[], bool]:
        """A check for one connection's SASL exchange: true while ``source`` may try to log in."""
        return lambda: not self.blocked(source)

    def failed(self, source: str) -> None:
        """Record a failed login from ``source`` (ignored while it is already blocked)."""
        if self.max_failures == 0 or self.blocked(source):
            return
        times = self._failures.pop(source, None)
        if times is None:
            times = deque(maxlen=self.max_failures)
        times.append(self._clock())
        self._failures[source] = times  # most recent last
        while len(self._failures) > self.max_addresses:
            self._failures.popitem(last=False)
