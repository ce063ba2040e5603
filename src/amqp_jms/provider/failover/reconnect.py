"""When and where a failover connection tries next: a time-free state machine (h11 style).

The failover provider asks :meth:`Reconnector.next` and gets an instruction, :class:`Connect`
("connect to this server after this many ms") or :class:`GiveUp`; it reports the outcome with
:meth:`Reconnector.failed` or :meth:`Reconnector.connected`. No clocks, sockets or threads here:
the caller sleeps and connects, so every rule below is tested without waiting.

The rules are Qpid JMS's FailoverProvider (ReconnectControls) and FailoverUriPool:

* An *attempt* is one pass over the whole server list, each server tried in turn with no delay
  between them; the delay comes before a pass. The list rotates as it is read, so after losing
  server ``a`` of ``[a, b, c]`` the next pass tries ``b, c, a``.
* Before the first connection ever: the first pass is immediate, the second waits
  ``initialReconnectDelay`` if set, later ones the reconnect delay. After a loss: the first pass
  waits ``initialReconnectDelay`` (immediate if 0), later ones the reconnect delay.
* The reconnect delay starts at ``reconnectDelay``; with ``useReconnectBackOff`` it is multiplied
  by ``reconnectBackOffMultiplier`` (truncated to whole ms) for every pass after the first,
  capped at ``maxReconnectDelay``.
* Give up when the passes made reach the limit: ``startupMaxReconnectAttempts`` before the first
  connection (if set, else ``maxReconnectAttempts``), ``maxReconnectAttempts`` after; -1 = never.
  A failure the caller marks ``fatal`` (a refused login) stops at once: retrying cannot help.
* Every ``warnAfterReconnectAttempts`` failed passes the instruction says ``warn``.
* With ``randomize`` the list is shuffled at start and after every successful connect.
* A successful connect resets the pass count and the back-off.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import ConnectionConfig
from .uri import UNDEFINED, UNLIMITED, ReconnectPolicy

__all__ = ["Connect", "GiveUp", "Reconnector"]


@dataclass(frozen=True, slots=True)
class Connect:
    """Wait ``delay_ms``, then connect to ``server``: try ``attempt`` (a pass; 1-based)."""

    server: ConnectionConfig
    delay_ms: int
    attempt: int
    #: log "failed to connect after ``attempt - 1`` attempts, continuing to retry" first
    warn: bool = False

    @property
    def delay_s(self) -> float:
        return self.delay_ms / 1000.0


@dataclass(frozen=True, slots=True)
class GiveUp:
    """Stop: report the last failure to the application (its ExceptionListener)."""

    attempts: int
    fatal: bool = False


class Reconnector:
    """The reconnect state of one failover connection; see the module docstring for the rules."""

    def __init__(
        self, policy: ReconnectPolicy, servers: Sequence[ConnectionConfig], rng: random.Random | None = None
    ) -> None:
        if not servers:
            raise ValueError("a failover connection needs at least one server")
        self.policy = policy
        self._rng = rng if rng is not None else random.Random()
        self._servers = list(servers)
        if policy.randomize:
            self._rng.shuffle(self._servers)
        self._recovery_required = False  # True once a connection was ever established
        self._attempts = 0  # passes started since the last successful connect
        self._next_delay_ms = -1
        self._left_in_pass = 0
        self._outstanding = False
        self._gave_up: GiveUp | None = None

    @property
    def servers(self) -> tuple[ConnectionConfig, ...]:
        """The list in the order the next pass will read it."""
        return tuple(self._servers)

    @property
    def attempts(self) -> int:
        return self._attempts

    @property
    def ever_connected(self) -> bool:
        return self._recovery_required

    def update_servers(self, servers: Sequence[ConnectionConfig]) -> None:
        """Take a new list (a peer's server list, a redirect); the current pass reads it too."""
        if not servers:
            raise ValueError("a failover connection needs at least one server")
        self._servers = list(servers)
        self._left_in_pass = min(self._left_in_pass, len(self._servers))

    # -- the machine -----------------------------------------------------------------------------
    def next(self) -> Connect | GiveUp:
        """What to do now. Call :meth:`failed` or :meth:`connected` before asking again."""
        if self._gave_up is not None:
            return self._gave_up
        if self._outstanding:
            raise RuntimeError("the last Connect has no outcome yet: call failed() or connected()")
        delay, warn = 0, False
        if self._left_in_pass == 0:  # a new pass over the list
            delay, warn = self._pass_delay_ms(), self._warn_due()
            self._attempts += 1
            self._left_in_pass = len(self._servers)
        server = self._servers.pop(0)  # read and rotate, as FailoverUriPool.getNext does
        self._servers.append(server)
        self._left_in_pass -= 1
        self._outstanding = True
        return Connect(server, delay, self._attempts, warn)

    def failed(self, fatal: bool = False) -> None:
        """The last Connect failed; ``fatal`` when retrying cannot help (authentication refused)."""
        self._outstanding = False
        if fatal:
            self._gave_up = GiveUp(self._attempts, fatal=True)
        elif self._left_in_pass == 0 and self._limit_reached():
            self._gave_up = GiveUp(self._attempts)

    def connected(self) -> None:
        """The last Connect succeeded: the next loss starts from the first rule again."""
        self._outstanding = False
        self._recovery_required = True
        self._attempts = 0
        self._next_delay_ms = -1
        self._left_in_pass = 0
        if self.policy.randomize:
            self._rng.shuffle(self._servers)

    # -- rules -----------------------------------------------------------------------------------
    def _pass_delay_ms(self) -> int:
        made, initial = self._attempts, self.policy.initial_reconnect_delay_ms
        if not self._recovery_required:
            if made == 0:
                return 0
            if made == 1 and initial > 0:
                return initial
            return self._reconnect_delay_ms()
        if made == 0:
            return initial
        return self._reconnect_delay_ms()

    def _reconnect_delay_ms(self) -> int:
        p = self.policy
        if self._next_delay_ms == -1:
            self._next_delay_ms = p.reconnect_delay_ms
        if p.use_reconnect_back_off and self._attempts > 1:
            self._next_delay_ms = min(
                int(self._next_delay_ms * p.reconnect_back_off_multiplier), p.max_reconnect_delay_ms
            )
        return self._next_delay_ms

    def _warn_due(self) -> bool:
        every = self.policy.warn_after_reconnect_attempts
        return self._attempts > 0 and every > 0 and self._attempts % every == 0

    def _limit_reached(self) -> bool:
        p = self.policy
        limit = p.max_reconnect_attempts
        if not self._recovery_required and p.startup_max_reconnect_attempts != UNDEFINED:
            limit = p.startup_max_reconnect_attempts
        return limit != UNLIMITED and self._attempts >= limit
