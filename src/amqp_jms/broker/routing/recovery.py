"""Rebuild queues, durable subscriptions and their messages from the store at start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .nodes import NodeKind, Subscription
from .selectors import compile_selector

if TYPE_CHECKING:
    from ..storage.store import Store
    from .core import BrokerCore

__all__ = ["recover"]


def recover(core: BrokerCore, store: Store) -> None:
    """Load what ``store`` holds into ``core``'s router (no-op for the memory store)."""
    defs, messages = store.load()
    router = core.router
    by_name = {}
    for name, kind, meta in defs:
        if kind == "subscription" and meta is not None:
            topic = str(meta["topic"])
            router.ensure_node(topic, NodeKind.TOPIC)
            key_list = meta.get("key")
            key = (str(key_list[0]), key_list[1], str(key_list[2])) if key_list else None
            selector = meta.get("selector")
            matcher = None
            if selector:
                try:  # accepted when it was made: today's selector limits do not apply
                    matcher = compile_selector(selector)
                except Exception:
                    matcher = None
            sub = Subscription(
                key=key,
                topic=topic,
                queue=router.new_queue(name, durable=True),
                selector_text=selector,
                matcher=matcher,
                no_local=bool(meta.get("no_local")),
                durable=True,
                shared=bool(meta.get("shared")),
                global_=bool(meta.get("global")),
                source=dict(meta.get("source") or {}),
            )
            router.topics[topic].subscriptions.append(sub)
            if key is not None:
                router.subscriptions[key] = sub
            by_name[name] = sub.queue
        else:
            try:
                nk = NodeKind(kind)
            except ValueError:
                nk = NodeKind.QUEUE
            if router.node_kind(name) is None:
                router.kinds[name] = nk
                if nk.is_topic:
                    from .nodes import Topic

                    router.topics[name] = Topic(name, nk)
                else:
                    router.queues[name] = router.new_queue(name, durable=True)
            if name in router.queues:
                by_name[name] = router.queues[name]
    for qname, msg in messages:
        q = by_name.get(qname)
        if q is None:
            continue
        msg.stored = True
        q.enqueue(msg)
        if msg.deliver_at:
            pass
