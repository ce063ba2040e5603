"""amqp_jms.client."""
