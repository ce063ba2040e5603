"""amqp_jms.message."""
