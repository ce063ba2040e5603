"""The embedded AMQP 1.0 broker with JMS semantics (see docs/broker.md).

    from amqp_jms.broker import Broker
    with Broker() as broker:
        broker.url        # amqp://127.0.0.1:<ephemeral port>

``AsyncBroker`` serves on the caller's asyncio loop; ``main(argv)`` is the command line
(``amqp-jms broker ...``).
"""

from .broker import AsyncBroker, Broker
from .cli import main

__all__ = ["AsyncBroker", "Broker", "main"]
