"""The broker's address space: queues, topics, subscriptions, and what happens to a message.

``Router`` owns every node and every outcome: publish to an address, acknowledge, release,
redeliver, dead-letter, expire. Connections only translate AMQP into calls on it. It runs on the
broker's event loop only, so it needs no locks; anything slow (the store) returns futures.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from ..storage.message import BrokerMessage
from .dead_letter import Cause, Failure, Reason, dead_letter_bytes
from .queue import MessageQueue

__all__ = ["NodeKind", "Router", "StoreHooks", "Subscription", "Topic"]


class NodeKind(StrEnum):
    QUEUE = "queue"
    TOPIC = "topic"
    TEMP_QUEUE = "temporary-queue"
    TEMP_TOPIC = "temporary-topic"

    @property
    def is_topic(self) -> bool:
        return self in (NodeKind.TOPIC, NodeKind.TEMP_TOPIC)

    @property
    def is_temporary(self) -> bool:
        return self in (NodeKind.TEMP_QUEUE, NodeKind.TEMP_TOPIC)


class StoreHooks(Protocol):
    """What the router needs from a store (the in-memory broker uses a no-op one)."""

    def add(self, queue: str, msg: BrokerMessage) -> Any: ...

    def remove(self, queue: str, msg: BrokerMessage) -> None: ...

    def remove_many(self, queue: str, msgs: list[BrokerMessage]) -> None: ...

    def update_count(self, queue: str, msg: BrokerMessage) -> None: ...

    def save_queue(self, name: str, kind: str, meta: dict[str, Any] | None) -> None: ...

    def delete_queue(self, name: str) -> None: ...


Matcher = Callable[[BrokerMessage], bool]


@dataclass(eq=False)
class Subscription:
    """A topic subscription: its own queue, filled by the topic through its filters."""

    key: tuple[str, str | None, str] | None  # (durable|volatile, container-id or None, name)
    topic: str
    queue: MessageQueue
    selector_text: str | None = None
    matcher: Matcher | None = None
    no_local: bool = False
    owner: int = 0  # connection id for no-local
    durable: bool = False
    shared: bool = False
    global_: bool = False
    source: dict[str, Any] = field(default_factory=dict)  # to echo on a null-source lookup
    links: int = 0  # attached consumer links

    def offer(self, msg: BrokerMessage, router: Router) -> None:
        if self.no_local and msg.origin == self.owner:
            return
        if self.matcher is not None:
            try:
                if not self.matcher(msg):
                    return
            except Exception:
                return
        copy = msg.copy()
        if self.durable and msg.durable:
            router.store.add(self.queue.name, copy)
            copy.stored = True
        self.queue.enqueue(copy)


@dataclass(eq=False)
class Topic:
    name: str
    kind: NodeKind
    subscriptions: list[Subscription] = field(default_factory=list)
    published: int = 0  # messages sent to it (metrics.py)


class Router:
    """Every node of one broker, and the rules messages move by."""

    def __init__(
        self,
        *,
        store: StoreHooks,
        clock: Callable[[], float],
        schedule: Callable[[MessageQueue, float], None],
        dlq: str = "DLQ",
        max_delivery_attempts: int = 0,
        memory_limit: int = 0,
        scan_seconds: float = 0.02,
        spill_dir: str | None = None,
    ) -> None:
        self.store = store
        self.memory_limit = memory_limit
        self.scan_seconds = scan_seconds
        self.spill_dir = spill_dir
        self.clock = clock
        self._schedule = schedule
        self.dlq_name = dlq
        self.max_delivery_attempts = max_delivery_attempts
        self.queues: dict[str, MessageQueue] = {}
        self.kinds: dict[str, NodeKind] = {}
        self.topics: dict[str, Topic] = {}
        self.subscriptions: dict[tuple[str, str | None, str], Subscription] = {}
        self._temp_ids = itertools.count(1)
        self.on_consumed: Callable[[MessageQueue], None] | None = None  # a message left ``q`` (any way)
        self._topic_of: dict[str, str] = {}  # a subscription's queue -> its topic (dead letters' origin)

    # -- nodes ---------------------------------------------------------------------------------
    def new_queue(self, name: str, *, durable: bool) -> MessageQueue:
        return MessageQueue(
            name,
            durable=durable,
            clock=self.clock,
            on_drop=self._expire,
            on_schedule=self._schedule,
            memory_limit=self.memory_limit,
            scan_seconds=self.scan_seconds,
            spill_dir=self.spill_dir,
        )

    def node_kind(self, address: str) -> NodeKind | None:
        return self.kinds.get(address)

    def ensure_node(self, address: str, kind: NodeKind) -> NodeKind:
        """The node at ``address``, created as ``kind`` if absent; returns its actual kind."""
        have = self.kinds.get(address)
        if have is not None:
            return have
        self.kinds[address] = kind
        if kind.is_topic:
            self.topics[address] = Topic(address, kind)
        else:
            durable = not kind.is_temporary
            self.queues[address] = self.new_queue(address, durable=durable)
            if durable:
                self.store.save_queue(address, kind.value, None)
        return kind

    def temp_address(self, kind: NodeKind) -> str:
        prefix = "TempQueue" if kind is NodeKind.TEMP_QUEUE else "TempTopic"
        return f"{prefix}-{next(self._temp_ids)}-{int(self.clock() * 1000) % 100000000}"

    def delete_node(self, address: str) -> list[Subscription]:
        """Remove a node and its messages; returns the subscriptions that went with it."""
        kind = self.kinds.pop(address, None)
        gone: list[Subscription] = []
        if kind is None:
            return gone
        if kind.is_topic:
            topic = self.topics.pop(address)
            gone = list(topic.subscriptions)
            for sub in gone:
                self._drop_subscription(sub)
        else:
            q = self.queues.pop(address)
            for m in q.purge():
                if m.stored:
                    self.store.remove(q.name, m)
            if q.durable:
                self.store.delete_queue(q.name)
        return gone

    def queue(self, address: str) -> MessageQueue:
        q = self.queues.get(address)
        if q is None:
            self.ensure_node(address, NodeKind.QUEUE)
            q = self.queues[address]
        return q

    # -- subscriptions -------------------------------------------------------------------------
    def subscribe(self, topic: str, sub: Subscription) -> None:
        self.topics[topic].subscriptions.append(sub)
        self._topic_of[sub.queue.name] = topic
        if sub.key is not None:
            self.subscriptions[sub.key] = sub
        if sub.durable:
            self.store.save_queue(
                sub.queue.name,
                "subscription",
                {
                    "key": list(sub.key) if sub.key else None,
                    "topic": topic,
                    "selector": sub.selector_text,
                    "no_local": sub.no_local,
                    "shared": sub.shared,
                    "global": sub.global_,
                    "source": sub.source,
                },
            )

    def unsubscribe(self, sub: Subscription) -> None:
        topic = self.topics.get(sub.topic)
        if topic is not None and sub in topic.subscriptions:
            topic.subscriptions.remove(sub)
        self._drop_subscription(sub)

    def _drop_subscription(self, sub: Subscription) -> None:
        if sub.key is not None and self.subscriptions.get(sub.key) is sub:
            del self.subscriptions[sub.key]
        self._topic_of.pop(sub.queue.name, None)
        for m in sub.queue.purge():
            if m.stored:
                self.store.remove(sub.queue.name, m)
        if sub.durable:
            self.store.delete_queue(sub.queue.name)

    # -- publishing ----------------------------------------------------------------------------
    def publish(self, address: str, msg: BrokerMessage) -> bool:
        """Route a message to the node at ``address``; False if there is no such node."""
        kind = self.kinds.get(address)
        if kind is None:
            return False
        if kind.is_topic:
            topic = self.topics[address]
            topic.published += 1
            for sub in topic.subscriptions:
                sub.offer(msg, self)
            return True
        q = self.queues[address]
        if msg.durable and q.durable:
            self.store.add(q.name, msg)
            msg.stored = True
        q.enqueue(msg)
        return True

    # -- outcomes ------------------------------------------------------------------------------
    def consumed(self, q: MessageQueue, msg: BrokerMessage) -> None:
        """Accepted (or settled by a presettled consumer): the message is gone."""
        q.counters.dequeued += 1
        if msg.stored:
            self.store.remove(q.name, msg)
        if self.on_consumed is not None:
            self.on_consumed(q)

    def consumed_many(self, q: MessageQueue, msgs: list[BrokerMessage]) -> None:
        """``consumed`` for several messages of ``q`` at once (a transaction's accepts): one
        store call and one ``on_consumed`` for the lot."""
        if not msgs:
            return
        q.counters.dequeued += len(msgs)
        stored = [msg for msg in msgs if msg.stored]
        if stored:
            self.store.remove_many(q.name, stored)
        if self.on_consumed is not None:
            self.on_consumed(q)

    def released(
        self, q: MessageQueue, msg: BrokerMessage, *, failed: bool, how: Failure = Failure.MODIFIED
    ) -> None:
        """Back to the queue; ``failed`` counts it as a delivery attempt (``how`` it failed)."""
        if failed and self._attempt_failed(q, msg, how):
            return
        q.release(msg)

    def released_many(
        self, q: MessageQueue, msgs: list[BrokerMessage], *, failed: bool, how: Failure = Failure.MODIFIED
    ) -> None:
        keep = [msg for msg in msgs if not self._attempt_failed(q, msg, how)] if failed else msgs
        if keep:
            q.release_all(keep)

    def _attempt_failed(self, q: MessageQueue, msg: BrokerMessage, how: Failure) -> bool:
        """Count one more failed delivery attempt of ``msg``; True when that was its last (it has
        gone to the dead-letter queue), else its stored count is brought up to date."""
        msg.delivery_count += 1
        if self.max_delivery_attempts and msg.delivery_count >= self.max_delivery_attempts:
            self.dead_letter(q, msg, self._limit(msg, how))
            return True
        if msg.stored:
            self.store.update_count(q.name, msg)
        return False

    def _limit(self, msg: BrokerMessage, how: Failure) -> Cause:
        return Cause.delivery_limit(msg.delivery_count, self.max_delivery_attempts, how)

    def dead_letter(self, q: MessageQueue | None, msg: BrokerMessage, cause: Cause) -> None:
        """Move a message to the dead-letter queue (rejected, or too many attempts); the copy
        says why, from where and when (``dead_letter.py``)."""
        if q is not None and msg.stored:
            self.store.remove(q.name, msg)
            msg.stored = False
        if q is not None:
            q.counters.dead_lettered += 1
            q.counters.dead_lettered_attempts += cause.reason is Reason.DELIVERY_LIMIT
            if self.on_consumed is not None:
                self.on_consumed(q)
        if q is not None and q.name == self.dlq_name:
            return  # rejected from the DLQ itself: drop
        dlq = self.queue(self.dlq_name)
        origin = q.name if q is not None else ""
        data = dead_letter_bytes(msg.data, cause, address=self._topic_of.get(origin, origin),
                                 queue=origin, now=self.clock(), spill_dir=self.spill_dir)
        copy = BrokerMessage(data, priority=msg.priority, durable=msg.durable,
                             delivery_count=msg.delivery_count, origin=msg.origin)
        if copy.durable:
            self.store.add(dlq.name, copy)
            copy.stored = True
        dlq.enqueue(copy)

    def _expire(self, q: MessageQueue, msg: BrokerMessage) -> None:
        q.counters.expired += 1
        if self.on_consumed is not None:
            self.on_consumed(q)
        if msg.stored:
            self.store.remove(q.name, msg)
            msg.stored = False
