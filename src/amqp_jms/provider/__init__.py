"""amqp_jms.provider."""
