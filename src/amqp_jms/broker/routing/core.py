"""Broker-wide state shared by every connection: router, transactions, store, container ids.

One ``BrokerCore`` per running broker, touched only from the broker's event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

from ...exceptions import InvalidSelectorException
from ..errors import AttachRefused
from ..limits import BrokerLimits
from ..storage.message import BrokerMessage
from ..storage.store import MemoryStore, Store
from .authorization import Authorization, Permission
from .cbs import CbsGrants
from .counters import BrokerCounters
from .flowgate import FlowGate
from .nodes import Router
from .prefixes import AddressPrefixes
from .queue import MessageQueue
from .temporary import TemporaryNodes
from .transactions import TransactionManager
from .txn_outcomes import TxnOutcomes

__all__ = ["MANAGEMENT_ADDRESS", "BrokerCore", "ManagementEndpoint"]

#: the address of the broker's management node (AMQP Management 1.0)
MANAGEMENT_ADDRESS = "$management"


class Connection(Protocol):
    """What the routing layer asks of a connection the protocol layer registers in
    ``BrokerCore.connections`` (``protocol/connection.py``'s ``BrokerConnection`` implements it):
    a temporary node's lifetime policy asks whether links still use it, and its end closes
    them. Declared here so that routing never imports the protocol layer."""

    @property
    def closed(self) -> bool: ...

    def uses(self, address: str) -> bool:
        """A link of this connection sends to ``address`` or reads from it."""
        ...

    def delivering_from(self, queue: MessageQueue) -> bool:
        """A link of this connection holds unsettled deliveries of ``queue``'s messages."""
        ...

    def close_links_to(self, address: str) -> None:
        """``address`` is gone: end every link that reads from it."""
        ...


class ManagementEndpoint(Protocol):
    """What the core holds of the ``$management`` node: the protocol layer hands it each request
    (``conn`` is the ``BrokerConnection`` it came on), the core closes it when the broker stops.
    ``operations.management.ManagementNode`` implements it; it is declared here so that routing
    and protocol reach the node without importing the layer above them."""

    def receive(self, conn: Any, data: bytes) -> tuple[str, str] | None: ...

    def close(self) -> None: ...


class BrokerCore:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        store: Store | None = None,
        container_id: str = "amqp-jms-broker",
        dlq: str = "DLQ",
        max_delivery_attempts: int = 0,
        limits: BrokerLimits | None = None,
        spill_dir: str | None = None,
        address_prefixes: tuple[str, str] | None = None,
        management: Callable[[BrokerCore], ManagementEndpoint] | None = None,
    ) -> None:
        self.limits = limits if limits is not None else BrokerLimits(queue_memory_limit=0)
        self.spill_dir = spill_dir  # paging and large-message files (None: the system temp)
        self.loop = loop
        #: prefix mode (ActiveMQ-style addressing, :mod:`.prefixes`); None = capabilities decide
        self.prefixes = AddressPrefixes.of(address_prefixes)
        if self.prefixes is not None:  # the dead-letter queue is a queue: its address says so
            dlq = self.prefixes.queue_address(dlq)
        self.store: Store = store if store is not None else MemoryStore()
        self.container_id = container_id
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self.router = Router(
            store=self.store,
            clock=time.time,
            schedule=self._schedule,
            dlq=dlq,
            max_delivery_attempts=max_delivery_attempts,
            memory_limit=self.limits.queue_memory_limit,
            scan_seconds=self.limits.selector_budget,
            spill_dir=spill_dir,
        )
        self.txns = TransactionManager(self.router, TxnOutcomes(self.store, self.limits, time.time))
        self.gate = FlowGate(self.router, self.limits, loop, self.txns)
        self.containers: dict[str, list[tuple[int, bool]]] = {}
        self.connections: dict[int, Connection] = {}
        self.user_connections: dict[str, int] = {}  # open connections per user ("" = anonymous)
        self.temp_owner: dict[str, int] = {}
        self.temps = TemporaryNodes(self)
        self.authorization: Authorization | None = None  # None: every logged-in user may do anything
        #: the ``$cbs`` node's grants (claims-based security, ``cbs.py``); None: no ``$cbs`` node
        self.cbs: CbsGrants | None = None
        #: the ``$management`` node (made by ``management``, given by the operations layer; None: none)
        self.management = management(self) if management is not None else None
        self.counters = BrokerCounters()  # connections, failed logins (metrics.py)
        #: bytes all unfinished incoming transfers hold (``limits.max_spool_total``)
        self.spooling = 0

    # -- container-id registry (sole-connection-for-container) --------------------------------
    def container_clash(self, container: str, wants_sole: bool) -> bool:
        holders = self.containers.get(container) or []
        if not holders:
            return False
        return wants_sole or any(sole for _, sole in holders)

    def register_container(self, container: str, conn_id: int, sole: bool) -> None:
        self.containers.setdefault(container, []).append((conn_id, sole))

    def unregister_container(self, container: str, conn_id: int) -> None:
        holders = [h for h in self.containers.get(container, []) if h[0] != conn_id]
        if holders:
            self.containers[container] = holders
        else:
            self.containers.pop(container, None)

    def refusal(self, user: str | None, address: str, permission: Permission) -> str | None:
        """``None`` if ``user`` may, else why not (``authorization.py``); every requester asks
        here, AMQP connections and console users alike. In prefix mode the rules name
        destinations, not addresses: ``queue://orders.eu`` is ``orders.eu``."""
        auth = self.authorization
        if auth is None:
            return None
        prefixes = self.prefixes
        return auth.refusal(user, address if prefixes is None else prefixes.name_of(address), permission)

    # -- temporary nodes -----------------------------------------------------------------------
    def close_consumers_of(self, address: str) -> None:
        for conn in list(self.connections.values()):
            conn.close_links_to(address)

    # -- selectors -----------------------------------------------------------------------------
    def compile_selector(self, text: str) -> Callable[[BrokerMessage], bool] | None:
        """A predicate for a JMS selector; raises ``AttachRefused``: invalid-field if invalid,
        resource-limit-exceeded past ``max_selector_length`` / ``max_selector_terms``."""
        from .selectors import SelectorTooCostly, compile_selector

        limits = self.limits
        try:
            return compile_selector(
                text, max_length=limits.max_selector_length, max_terms=limits.max_selector_terms
            )
        except SelectorTooCostly as exc:
            raise AttachRefused("amqp:resource-limit-exceeded", str(exc)) from exc
        except InvalidSelectorException as exc:  # its message quotes the selector, shortened
            raise AttachRefused("amqp:invalid-field", str(exc)) from exc

    # -- scheduled delivery --------------------------------------------------------------------
    def _schedule(self, q: MessageQueue, when: float) -> None:
        old = self._timers.pop(id(q), None)
        if old is not None:
            old.cancel()
        delay = max(0.0, when - time.time())
        self._timers[id(q)] = self.loop.call_later(delay, self._due, q)

    def _due(self, q: MessageQueue) -> None:
        self._timers.pop(id(q), None)
        nxt = q.promote_due()
        if nxt:
            self._schedule(q, nxt)

    def close_queues(self) -> None:
        for q in self.router.queues.values():
            q.close()
        for t in self.router.topics.values():
            for sub in t.subscriptions:
                sub.queue.close()

    def cancel_timers(self) -> None:
        self.gate.close()
        if self.management is not None:
            self.management.close()
        for t in self._timers.values():
            t.cancel()
        self._timers.clear()

    # -- store ---------------------------------------------------------------------------------
    def store_barrier(self) -> asyncio.Future[None] | None:
        return self.store.barrier()

    def store_begin_batch(self) -> None:
        self.store.begin_batch()

    def store_end_batch(self) -> asyncio.Future[None] | None:
        return self.store.end_batch()
