"""Tools for testing against real AMQP peers (RabbitMQ, rhea, a scripted peer)."""
