"""The console's view of a running broker (``console.Backend``): what it shows and does is asked
of the ``$management`` node on the broker's loop, as the signed-in user, and the metrics
snapshot is the one ``/metrics`` exports. Called from the HTTP listener's thread; everything
that touches the broker's state runs on the broker's loop."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.sasl import Users
from ..routing.authorization import Permission
from .management import ManagementNode, Reply
from .metrics import MetricsSnapshot

if TYPE_CHECKING:
    from ..routing.core import BrokerCore

__all__ = ["BrokerConsoleBackend", "ConsoleRequester"]

_ids = itertools.count(-1, -1)  # console requesters' ids: never an AMQP connection's


@dataclass(frozen=True)
class ConsoleRequester:
    """A console user as a ``$management`` requester: the broker's authorization decides."""

    id: int
    user: str | None
    core: BrokerCore

    def refusal(self, address: str, permission: Permission) -> str | None:
        return self.core.refusal(self.user, address, permission)


class BrokerConsoleBackend:
    def __init__(
        self,
        core: BrokerCore,
        node: ManagementNode,
        users: Users,
        broker_loop: asyncio.AbstractEventLoop,
        take: Callable[[], Coroutine[Any, Any, MetricsSnapshot]],
        finish: Callable[[MetricsSnapshot], MetricsSnapshot],
    ) -> None:
        self._core = core
        self._node = node
        self._users = users
        self._loop = broker_loop
        self._take = take
        self._finish = finish
        self._requesters: dict[str | None, ConsoleRequester] = {}

    @property
    def users_configured(self) -> bool:
        return bool(self._users.passwords)

    def check_password(self, user: str, password: str) -> bool:
        return user in self._users.passwords and self._users.check(user, password)

    def _requester(self, user: str | None) -> ConsoleRequester:
        r = self._requesters.get(user)
        if r is None:
            r = self._requesters[user] = ConsoleRequester(next(_ids), user, self._core)
        return r

    async def manage(self, user: str | None, props: dict[str, Any], body: Any = None) -> Reply:
        work = self._node.call(self._requester(user), props, body)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    async def snapshot(self) -> MetricsSnapshot:
        snap = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._take(), self._loop))
        return self._finish(snap)
