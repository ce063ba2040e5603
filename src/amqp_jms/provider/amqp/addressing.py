"""Which address prefixes a connection uses, and the address of a link's terminus.

The prefix rule itself lives in :mod:`amqp_jms.mapping.destinations` (pure functions taking the
prefixes as parameters); this module only decides which prefixes are in force for a connection
and hands them over, so producer targets, consumer/browser/subscriber sources, ``to`` and
``reply-to`` all follow the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...destination import Destination
from ...mapping.destinations import address_for
from ..config import ConnectionConfig

__all__ = ["link_address", "prefixes_in_force"]

QUEUE_PREFIX = "queue-prefix"
TOPIC_PREFIX = "topic-prefix"


def _prefix(option: str | None, offered: Any) -> str | None:
    if option is not None:  # the URL option wins, "" turning prefixing off
        return option or None
    return str(offered) if isinstance(offered, str) and offered else None


def prefixes_in_force(
    config: ConnectionConfig, remote_properties: Mapping[str, Any]
) -> tuple[str | None, str | None]:
    """``(queue_prefix, topic_prefix)``: ``jms.queuePrefix``/``jms.topicPrefix`` when set, else
    the peer's ``queue-prefix``/``topic-prefix`` Open properties (ActiveMQ, Artemis), else none."""
    return (
        _prefix(config.queue_prefix, remote_properties.get(QUEUE_PREFIX)),
        _prefix(config.topic_prefix, remote_properties.get(TOPIC_PREFIX)),
    )


def link_address(dest: Destination, provider: Any) -> str:
    """The source/target address of a link to ``dest`` on ``provider``'s connection."""
    return address_for(dest, provider.queue_prefix, provider.topic_prefix)
