"""amqp_jms.cli."""
