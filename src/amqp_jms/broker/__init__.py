"""The embedded AMQP 1.0 broker with JMS semantics (see docs/broker.md).

    from amqp_jms.broker import Broker
    with Broker() as broker:
        broker.url        # amqp://127.0.0.1:<ephemeral port>

``AsyncBroker`` serves on the caller's asyncio loop; ``BrokerLimits`` bounds everything a peer
controls; ``main(argv)`` is the command line (``amqp-jms broker ...``).

The package is four rooms whose imports only go down, from the wire to the disk
(docs/architecture.md, "The broker"; ``tests/unit/test_layer_imports.py`` polices it):

``operations/``  running it: assembly (``Broker``), command line, config, metrics, ``$management``
``protocol/``    the wire: listener, connection, SASL, TLS, attach, links, transfers
``routing/``     where a message goes: core, nodes, queues, flow, transactions, authorization
``storage/``     the disk: the broker's message and its bytes, stores, paging, large messages

and a floor every room reads: ``limits`` (``BrokerLimits``) and ``errors`` (what travels up).
"""

from .limits import BrokerLimits
from .operations.broker import AsyncBroker, Broker
from .operations.cli import main

__all__ = ["AsyncBroker", "Broker", "BrokerLimits", "main"]
