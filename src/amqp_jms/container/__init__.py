"""Listener containers: how a consuming service runs in production (Spring's
DefaultMessageListenerContainer, a message-driven bean), for the blocking API and asyncio.

::

    from amqp_jms.container import ListenerContainer

    ListenerContainer("amqp://broker:5672", handle, "queue://orders", concurrency="1-8",
                      mode="transacted", max_deliveries=5).run()

One policy (``policy.ContainerPolicy``: what is consumed, concurrency, session mode, redelivery,
reconnect) and two faces: ``ListenerContainer`` (threads) and ``AsyncListenerContainer``
(tasks; ``async def`` handlers). ``amqp-jms worker`` runs one from the command line.
"""

from ._core import Health, StatsSnapshot
from .aio import AsyncListenerContainer
from .policy import Backoff, Concurrency, ContainerPolicy, Mode, Redelivery
from .sync import ListenerContainer

__all__ = [
    "AsyncListenerContainer",
    "Backoff",
    "Concurrency",
    "ContainerPolicy",
    "Health",
    "ListenerContainer",
    "Mode",
    "Redelivery",
    "StatsSnapshot",
]
