"""Dynamic (temporary) nodes and their AMQP lifetime policies (core spec §3.5.10-3.5.13).

A dynamic source or target may ask, in its dynamic-node-properties, how long the node it
creates should live:

* ``delete-on-close`` (the default, and what JMS temporary destinations use): until the link
  that created it ends;
* ``delete-on-no-links``: until no link (of any connection, sending or receiving) is attached
  to it;
* ``delete-on-no-messages``: until it holds no messages (none available, delayed or delivered
  but unsettled);
* ``delete-on-no-links-or-messages``: until either of the two.

The conditions are checked when they can change (a link to the node ends, a message leaves
it), not at creation, when a new node has neither links besides its creator nor messages.
Deleting closes every remaining link on the node with ``amqp:resource-deleted``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from proton import Data, Described, Terminus, symbol, ulong

from .nodes import Router
from .queue import MessageQueue

if TYPE_CHECKING:
    from .core import BrokerCore, Connection

__all__ = [
    "DELETE_ON_CLOSE",
    "DELETE_ON_NO_LINKS",
    "DELETE_ON_NO_LINKS_OR_MESSAGES",
    "DELETE_ON_NO_MESSAGES",
    "TemporaryNodes",
    "lifetime_policy",
    "set_lifetime_policy",
]

DELETE_ON_CLOSE = 0x2B
DELETE_ON_NO_LINKS = 0x2C
DELETE_ON_NO_MESSAGES = 0x2D
DELETE_ON_NO_LINKS_OR_MESSAGES = 0x2E
_POLICIES = {DELETE_ON_CLOSE, DELETE_ON_NO_LINKS, DELETE_ON_NO_MESSAGES, DELETE_ON_NO_LINKS_OR_MESSAGES}
_NAMES = {
    "amqp:delete-on-close:list": DELETE_ON_CLOSE,
    "amqp:delete-on-no-links:list": DELETE_ON_NO_LINKS,
    "amqp:delete-on-no-messages:list": DELETE_ON_NO_MESSAGES,
    "amqp:delete-on-no-links-or-messages:list": DELETE_ON_NO_LINKS_OR_MESSAGES,
}
_KEY = symbol("lifetime-policy")


def lifetime_policy(term: Terminus) -> int:
    """The lifetime policy a dynamic terminus asks for (descriptor code; default delete-on-close)."""
    props: Data = term.properties
    props.rewind()
    if props.next() is None:
        return DELETE_ON_CLOSE
    obj = props.get_object()
    value = obj.get(_KEY) if isinstance(obj, dict) else None
    if not isinstance(value, Described):
        return DELETE_ON_CLOSE
    desc = value.descriptor
    code = _NAMES.get(str(desc)) if isinstance(desc, str) else int(desc) if isinstance(desc, int) else None
    return code if code in _POLICIES else DELETE_ON_CLOSE


def set_lifetime_policy(term: Terminus, policy: int) -> None:
    """Echo the policy actually applied in the terminus' dynamic-node-properties."""
    props: Data = term.properties
    props.clear()
    props.put_object({_KEY: Described(ulong(policy), [])})


class TemporaryNodes:
    """Which dynamic nodes exist, under which policy, and the checks that delete them."""

    def __init__(self, core: BrokerCore) -> None:
        self.core = core
        self.router: Router = core.router
        self.policy: dict[str, int] = {}
        self._pending: set[str] = set()
        core.router.on_consumed = self._on_consumed

    def created(self, address: str, policy: int) -> None:
        self.policy[address] = policy

    def link_ended(self, address: str, *, creator: bool) -> None:
        """A link attached to ``address`` ended (the creating link if ``creator``)."""
        policy = self.policy.get(address)
        if policy is None:
            return
        if policy == DELETE_ON_CLOSE:
            gone = creator
        elif policy == DELETE_ON_NO_LINKS:
            gone = not self._has_links(address)
        elif policy == DELETE_ON_NO_MESSAGES:
            gone = not self._has_messages(address)
        else:
            gone = not self._has_links(address) or not self._has_messages(address)
        if gone:
            self.delete(address)

    def delete(self, address: str) -> None:
        self.policy.pop(address, None)
        self.router.delete_node(address)
        self.core.close_consumers_of(address)

    # -- messages leaving a node ---------------------------------------------------------------
    def _on_consumed(self, q: MessageQueue) -> None:
        if self.policy.get(q.name, DELETE_ON_CLOSE) in (DELETE_ON_CLOSE, DELETE_ON_NO_LINKS):
            return
        if q.name not in self._pending:  # check after the current disposition is handled
            self._pending.add(q.name)
            asyncio.get_running_loop().call_soon(self._check_messages, q.name)

    def _check_messages(self, address: str) -> None:
        self._pending.discard(address)
        if address in self.policy and not self._has_messages(address):
            self.delete(address)

    # -- the facts the policies are about ------------------------------------------------------
    def _open_connections(self) -> list[Connection]:
        return [c for c in self.core.connections.values() if not c.closed]

    def _has_links(self, address: str) -> bool:
        return any(c.uses(address) for c in self._open_connections())

    def _has_messages(self, address: str) -> bool:
        q = self.router.queues.get(address)
        if q is None:  # a topic keeps no messages itself
            return False
        if len(q) or q.delayed:
            return True
        return any(c.delivering_from(q) for c in self._open_connections())
