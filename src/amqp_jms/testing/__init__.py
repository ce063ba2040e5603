"""Tools for testing against real AMQP peers, shipped so users can use them too.

* :mod:`amqp_jms.testing.rabbitmq`: :class:`RabbitMQ`, a private RabbitMQ 3.10 with its AMQP 1.0
  plugin on loopback, started and stopped (with its epmd) by a context manager.
* :mod:`amqp_jms.testing.rhea`: run rhea (Node.js AMQP 1.0 stack) scripts, JSON in and out.
* :mod:`amqp_jms.testing.proxy`: :class:`FaultProxy`, a loopback TCP proxy that drops (RST or
  FIN), black-holes, delays or refuses connections on command, for failover and timeout tests.
* :mod:`amqp_jms.testing.broker_process`: the embedded broker as a subprocess, with its memory
  readings (import it explicitly).
* :mod:`amqp_jms.testing.peer`: a scripted AMQP test peer on proton's engine (frame-by-frame
  expectations, after Qpid JMS's TestAmqpPeer); import it explicitly.
* :mod:`amqp_jms.testing.spark_connect`: :class:`ConnectServer`, a Spark Connect server from the
  installed pyspark on loopback (import it explicitly).
"""

from . import proxy, rabbitmq, rhea
from .proxy import FaultProxy
from .rabbitmq import RabbitMQ, RabbitMQError

__all__ = ["FaultProxy", "RabbitMQ", "RabbitMQError", "proxy", "rabbitmq", "rhea"]
