"""Prefix addressing: the broker as ActiveMQ and Artemis address their nodes (an option).

ActiveMQ 5/6 (and Artemis with ``anycastPrefix=queue://;multicastPrefix=topic://``) offer the
prefixes as the Open properties ``queue-prefix``/``topic-prefix`` and decide a node's type by its
address alone: ``topic://t`` is a topic, ``queue://q`` and a bare ``q`` are queues, terminus
capabilities are ignored. Temporary nodes get addresses with the ``temp-queue://`` /
``temp-topic://`` scheme. In this mode the embedded broker does the same, so that it stands in
for those estates in tests (a client that does not prefix its topic addresses sees its topic
consumer attached to a queue, as it would there). The node's name is the whole address, prefix
included, so a queue ``x`` and a topic ``x`` live side by side as they do on ActiveMQ; the
dead-letter queue is ``queue://DLQ``, which a prefixing client reads as ``Queue("DLQ")``.

Without prefixes (the default) none of this applies: capabilities decide, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proton import symbol

from .nodes import NodeKind

__all__ = ["AddressPrefixes", "parse_address_prefixes"]

TEMP_QUEUE_SCHEME = "temp-queue://"
TEMP_TOPIC_SCHEME = "temp-topic://"
_MAX_PREFIX = 64


@dataclass(frozen=True, slots=True)
class AddressPrefixes:
    """The queue and topic address prefixes a broker in prefix mode advertises and routes by."""

    queue: str
    topic: str

    def __post_init__(self) -> None:
        for what, p in (("queue", self.queue), ("topic", self.topic)):
            if not isinstance(p, str) or not p or len(p) > _MAX_PREFIX:
                raise ValueError(f"{what} prefix must be a non-empty string of at most {_MAX_PREFIX} chars")
        if self.queue.startswith(self.topic) or self.topic.startswith(self.queue):
            raise ValueError(f"queue prefix {self.queue!r} and topic prefix {self.topic!r} overlap")

    @classmethod
    def of(cls, value: tuple[str, str] | AddressPrefixes | None) -> AddressPrefixes | None:
        """From the broker's ``address_prefixes`` setting: ``(queue, topic)`` or ``None``."""
        if value is None or isinstance(value, AddressPrefixes):
            return value
        if not isinstance(value, tuple | list) or len(value) != 2:
            raise ValueError(f"address_prefixes must be (queue_prefix, topic_prefix), not {value!r}")
        return cls(value[0], value[1])

    def open_properties(self) -> dict[Any, Any]:
        """The Open properties that tell clients (Qpid JMS, amqp-jms) to prefix addresses."""
        return {symbol("queue-prefix"): self.queue, symbol("topic-prefix"): self.topic}

    def kind_of(self, address: str) -> NodeKind:
        """The node type an address means: by its prefix, a bare name being a queue."""
        if address.startswith(self.topic):
            return NodeKind.TOPIC
        if address.startswith(TEMP_QUEUE_SCHEME):
            return NodeKind.TEMP_QUEUE
        if address.startswith(TEMP_TOPIC_SCHEME):
            return NodeKind.TEMP_TOPIC
        return NodeKind.QUEUE

    def name_of(self, address: str) -> str:
        """The destination name an address stands for (what permissions are written against):
        ``queue://orders.eu`` and ``topic://orders.eu`` are ``orders.eu``."""
        for prefix in (self.queue, self.topic, TEMP_QUEUE_SCHEME, TEMP_TOPIC_SCHEME):
            if address.startswith(prefix):
                return address[len(prefix):]
        return address

    def queue_address(self, name: str) -> str:
        """The address of the queue ``name`` (the dead-letter queue): prefixed once."""
        return name if name.startswith(self.queue) else self.queue + name

    @staticmethod
    def temp_address(name: str, kind: NodeKind) -> str:
        """The address of a new temporary node, with the scheme that says its type."""
        return (TEMP_TOPIC_SCHEME if kind.is_topic else TEMP_QUEUE_SCHEME) + name


def parse_address_prefixes(text: str) -> tuple[str, str]:
    """``"queue://,topic://"`` (the ``--address-prefixes`` option) -> ``("queue://", "topic://")``."""
    queue, sep, topic = text.partition(",")
    if not sep or "," in topic:
        raise ValueError(f"expected QUEUE_PREFIX,TOPIC_PREFIX (e.g. queue://,topic://), not {text!r}")
    prefixes = AddressPrefixes(queue.strip(), topic.strip())
    return (prefixes.queue, prefixes.topic)
